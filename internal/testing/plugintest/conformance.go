package plugintest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/transcript"
)

// ExpectationDir is where a plugin's test keeps, per shared fixture, the
// native types the plugin is expected to leave unmapped and why:
// <fixture file>.unmapped.json (sdktest.Expectation), relative to the
// plugin's directory.
const ExpectationDir = "testdata/conformance"

// RepoRoot returns the repository root: the directory holding go.mod
// above the working directory ("" when there is none).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Captures lists the real captures of the repository's
// testdata/captures/<agent> whose names match pattern (their
// .expect.json and .source.txt do not), and fails the test when there
// is none.
func Captures(tb testing.TB, agent, pattern string) []string {
	tb.Helper()
	dir := filepath.Join(RepoRoot(tb), "testdata", "captures", agent)
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captures %s in %s: %v", pattern, dir, err)
	}
	return files
}

// SharedFixtures returns ../shared/fixtures next to the repository root
// (the directory holding go.mod above the working directory), or "" when
// there is none: the shared captures are not part of the repository.
func SharedFixtures(tb testing.TB) string {
	tb.Helper()
	dir := RepoRoot(tb)
	if dir == "" {
		return ""
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

// Conformance describes a plugin's conformance test over the shared
// captures of its provider.
type Conformance struct {
	Plugin sdk.Plugin
	// Provider is the provider name the plugin is begun with.
	Provider string
	// Dirs are the fixture directories under ../shared/fixtures
	// (Provider when empty).
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

// Test runs every capture through sdktest.Test (no fault, every raw
// line accounted for, nothing unmapped beyond the fixture's expectation
// file in [ExpectationDir], valid events, the same transcript however the
// input is cut into batches) and checks, against the facts Facts reads
// from the raw capture, that every tool call of the raw input is a
// tool.call and every piece of model text is in a block.
func (c Conformance) Test(t *testing.T) {
	dirs := c.Dirs
	if len(dirs) == 0 {
		dirs = []string{c.Provider}
	}
	sdktest.Test(t, c.Plugin, sdktest.Options{
		Provider: c.Provider,
		Captures: Fixtures(t, c.Skip, dirs...),
		Unmapped: ExpectationDir,
		Check: func(t *testing.T, r *sdktest.Result) {
			o := FromResult(r)
			if c.Check != nil {
				c.Check(t, o)
			}
			ids, frags := c.Facts(t, r.Raw)
			o.CheckCalls(t, ids)
			CheckTexts(t, o.Texts(c.Messages), frags, c.ExactText)
		},
	})
}
