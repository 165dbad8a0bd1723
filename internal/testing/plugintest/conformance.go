package plugintest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// ExpectationDir is where a plugin's test keeps, per fixture, the native
// types the plugin is expected to leave unmapped and why:
// <fixture file>.unmapped.json, relative to the plugin's directory.
const ExpectationDir = "testdata/conformance"

// Expectation is the content of an expectation file:
//
//	{"unmapped": {"<native>": count}, "reasons": {"<native>": "why"}}
//
// Counts are exact, so a list goes stale (and fails) when the plugin
// starts mapping a type.
type Expectation struct {
	Unmapped map[string]int    `json:"unmapped"`
	Reasons  map[string]string `json:"reasons"`
}

// SharedFixtures returns ../shared/fixtures next to the repository root
// (the directory holding go.mod above the working directory), or "" when
// there is none: the shared captures are not part of the repository.
func SharedFixtures(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	d := filepath.Join(filepath.Dir(dir), "shared", "fixtures")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return ""
	}
	return d
}

// Fixtures lists the captures in the shared fixture directories dirs
// (../shared/fixtures/<dir>), leaving out provenance notes (*.source.txt)
// and every file skip reports (nil keeps the rest). It skips the test
// when there are none.
func Fixtures(tb testing.TB, skip func(name string) bool, dirs ...string) []string {
	tb.Helper()
	root := SharedFixtures(tb)
	var files []string
	if root != "" {
		for _, dir := range dirs {
			m, err := filepath.Glob(filepath.Join(root, dir, "*"))
			if err != nil {
				tb.Fatal(err)
			}
			for _, f := range m {
				name := filepath.Base(f)
				if strings.HasSuffix(name, ".source.txt") || skip != nil && skip(name) {
					continue
				}
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		tb.Skipf("no shared fixtures in ../shared/fixtures/{%s} from the repository root", strings.Join(dirs, ","))
	}
	return files
}

// CheckUnmapped compares the unmapped counts of a run over fixture with
// its expectation file in [ExpectationDir] (none: nothing may be
// unmapped). Every listed type must say why, must still be unmapped (a
// type the plugin now maps is to be dropped from the list), and must be
// counted exactly as often as listed; a type that is not listed must not
// be unmapped at all.
func CheckUnmapped(tb testing.TB, fixture string, got map[string]int) {
	tb.Helper()
	exp := filepath.Join(ExpectationDir, filepath.Base(fixture)+".unmapped.json")
	var want Expectation
	b, err := os.ReadFile(exp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		tb.Fatal(err)
	default:
		if err := json.Unmarshal(b, &want); err != nil {
			tb.Fatalf("%s: %v", exp, err)
		}
	}
	for k := range want.Unmapped {
		if strings.TrimSpace(want.Reasons[k]) == "" {
			tb.Errorf("%s: unmapped %q has no reason", exp, k)
		}
	}
	var unexpected []string
	for k, n := range got {
		if _, listed := want.Unmapped[k]; !listed {
			unexpected = append(unexpected, k)
		} else if n != want.Unmapped[k] {
			tb.Errorf("%q unmapped %d times, %s says %d", k, n, exp, want.Unmapped[k])
		}
	}
	sort.Strings(unexpected)
	for _, k := range unexpected {
		tb.Errorf("%q unmapped %d times without a reason in %s", k, got[k], exp)
	}
	for k := range want.Unmapped {
		if got[k] == 0 {
			tb.Errorf("%s lists %q as unmapped but the plugin now maps it: drop it", exp, k)
		}
	}
}

// Conformance describes a plugin's conformance test over the shared
// captures of its provider.
type Conformance struct {
	Plugin sdk.Plugin
	// Options are the run's options (Provider at least).
	Options normalize.Options
	// Dirs are the fixture directories under ../shared/fixtures
	// (Options.Provider when empty).
	Dirs []string
	// Skip names the fixture files that are not captures, besides the
	// provenance notes (*.source.txt) that are always left out.
	Skip func(name string) bool
	// Facts reads a capture independently of the plugin: the id of every
	// tool call in it and every piece of model text.
	Facts func(t *testing.T, raw []byte) (ids, frags []string)
	// Messages picks the messages whose blocks hold the model text (nil:
	// every message).
	Messages func(*transcript.Event) bool
	// ExactText: a piece of model text must be the whole text of a block
	// (by default, inside one).
	ExactText bool
	// Check, when set, checks more of each run.
	Check func(t *testing.T, o *Outcome)
}

// Test runs every capture through the plugin and checks the contract
// that does not depend on hand-written expectations: no fault, every
// tool call of the raw input is a tool.call, every piece of model text is
// in a block, and nothing is unmapped beyond the fixture's expectation
// file ([CheckUnmapped]).
func (c Conformance) Test(t *testing.T) {
	dirs := c.Dirs
	if len(dirs) == 0 {
		dirs = []string{c.Options.Provider}
	}
	for _, f := range Fixtures(t, c.Skip, dirs...) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			o := Run(t, c.Plugin, raw, c.Options)
			if o.Result.FailedLines != 0 {
				t.Errorf("failed lines: %d, warnings %q", o.Result.FailedLines, o.Result.Warnings)
			}
			if c.Check != nil {
				c.Check(t, o)
			}
			ids, frags := c.Facts(t, raw)
			o.CheckCalls(t, ids)
			CheckTexts(t, o.Texts(c.Messages), frags, c.ExactText)
			CheckUnmapped(t, f, o.Result.Unmapped)
		})
	}
}
