package plugintest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// RawUsage is the usage one raw input states, as a side-by-side test
// reads it from the raw bytes, apart from the plugin.
type RawUsage struct {
	// Stated is whether the raw input states any usage. When it does
	// not, the plugin's step must state none either: its usage is
	// unknown, never 0.
	Stated bool
	// Want holds the figures the raw input gives; each counter of
	// [UsageSide.Counters] is compared with the step's: a nil one must be
	// left out by the plugin too, a set one must be equal.
	Want transcript.Usage
	// Skip, when not empty, skips the input and says why.
	Skip string
}

// UsageSide is a side-by-side check of a plugin's step usage: every raw
// input is run natively through the plugin and the step usage it gives
// compared with what [UsageSide.Raw] computes from the raw bytes.
type UsageSide struct {
	Plugin sdk.Plugin
	// Provider is the provider name the plugin is begun with.
	Provider string
	// Inputs are the raw inputs' paths ([UsageInputs] lists them); the
	// test skips when there is none.
	Inputs []string
	// Counters are the JSON names of the counters compared
	// ("input_tokens", "uncached_input_tokens", "cache_read_tokens",
	// "cache_write_tokens", "cache_write_1h_tokens", "output_tokens",
	// "reasoning_tokens", "total_tokens"), and "service_tier": the
	// step's tier must then be Want's ("" where the raw input states
	// none, "mixed" where its requests state several).
	Counters []string
	// AbsentIsZero: a counter left out (by the plugin or by Want)
	// compares as 0, for a provider whose zero figures the plugin may
	// leave out.
	AbsentIsZero bool
	// Raw computes an input's usage from its bytes, apart from the
	// plugin.
	Raw func(t *testing.T, path string, raw []byte) RawUsage
	// Check, when set, checks more of each run (sub-agents' usage).
	Check func(tb testing.TB, raw []byte, o *Outcome)
}

// Test runs the check over every input, one subtest each (named by the
// file's name less its extension). Besides the counters compared, the
// step's usage must agree with itself (transcript.Usage.Check: the
// uncached input, cache read and cache write add up to the input).
func (s UsageSide) Test(t *testing.T) {
	t.Helper()
	if len(s.Inputs) == 0 {
		t.Skipf("no %s inputs", s.Provider)
	}
	if len(s.Counters) == 0 {
		t.Fatal("UsageSide: no counters to compare")
	}
	for _, f := range s.Inputs {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, filepath.Ext(name)), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r := s.Raw(t, f, raw)
			if r.Skip != "" {
				t.Skip(r.Skip)
			}
			s.check(t, raw, r)
		})
	}
}

// check runs raw through the plugin and compares its step's usage with
// r (Test's work for one input, apart from reading it).
func (s UsageSide) check(tb testing.TB, raw []byte, r RawUsage) {
	tb.Helper()
	o := Run(tb, s.Plugin, raw, normalize.Options{Provider: s.Provider, Now: func() time.Time { return time.Unix(0, 0) }})
	if s.Check != nil {
		s.Check(tb, raw, o)
	}
	u := o.Result.Usage
	if err := u.Check(); err != nil {
		tb.Errorf("the step's usage disagrees with itself: %v", err)
	}
	if !r.Stated {
		if !u.IsZero() {
			tb.Errorf("the raw input states no usage (unknown), twasm reports %s", usageJSON(u))
		}
		return
	}
	got, want := counters(u), counters(&r.Want)
	var odd []string
	for _, c := range s.Counters {
		if c == "service_tier" {
			if g := tierOf(u); g != r.Want.ServiceTier {
				odd = append(odd, c)
			}
			continue
		}
		g, gok := got[c]
		w, wok := want[c]
		if s.AbsentIsZero {
			gok, wok = true, true
		}
		if gok != wok || g != w {
			odd = append(odd, c)
		}
	}
	if len(odd) > 0 {
		tb.Errorf("usage differs in %s:\n twasm %s\n raw   %s", strings.Join(odd, ", "), usageJSON(u), usageJSON(&r.Want))
	}
}

// tierOf is u's service tier ("" when u is nil).
func tierOf(u *transcript.Usage) string {
	if u == nil {
		return ""
	}
	return u.ServiceTier
}

// counters are u's stated counters by JSON name (its tier left out).
func counters(u *transcript.Usage) map[string]int64 {
	m := map[string]int64{}
	if u == nil {
		return m
	}
	c := *u
	c.ServiceTier = ""
	b, err := json.Marshal(&c)
	if err != nil {
		panic(err) // a struct of integers
	}
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

func usageJSON(u *transcript.Usage) string {
	if u == nil {
		return "none"
	}
	b, _ := json.Marshal(u)
	return string(b)
}

// UsageInputs lists an agent's raw inputs whose file names match one of
// patterns (every file when none): its captures
// (testdata/captures/<agent>), its golden inputs
// (testdata/golden/<agent>) when golden is set, and the shared fixtures
// (../shared/fixtures/<agent>, where present). Expectation, provenance,
// conformance and golden output files are left out. There may be none.
func UsageInputs(tb testing.TB, agent string, golden bool, patterns ...string) []string {
	tb.Helper()
	root := RepoRoot(tb)
	dirs := []string{filepath.Join(root, "testdata", "captures", agent)}
	if golden {
		dirs = append(dirs, filepath.Join(root, "testdata", "golden", agent))
	}
	if shared := SharedFixtures(tb); shared != "" {
		dirs = append(dirs, filepath.Join(shared, agent))
	}
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	var files []string
	for _, dir := range dirs {
		for _, pat := range patterns {
			m, err := filepath.Glob(filepath.Join(dir, pat))
			if err != nil {
				tb.Fatal(err)
			}
			for _, f := range m {
				if !isInput(f) {
					continue
				}
				files = append(files, f)
			}
		}
	}
	return files
}

// isInput reports whether f is a raw input, not a note beside one.
func isInput(f string) bool {
	for _, suffix := range []string{".expect.json", ".source.txt", ".unmapped.json", ".golden.jsonl"} {
		if strings.HasSuffix(f, suffix) {
			return false
		}
	}
	st, err := os.Stat(f)
	return err == nil && st.Mode().IsRegular()
}

// Lines returns raw's lines (without their newline), for a side-by-side
// test that reads a JSON Lines input.
func Lines(raw []byte) [][]byte {
	return bytes.Split(bytes.TrimRight(raw, "\n"), []byte("\n"))
}

// Figures makes a Usage of the figures a side-by-side test computed:
// all input (the uncached input, cache read and cache write, each may be
// nil when the raw input does not state it), output and reasoning; the
// input and uncached input are set when any part of the input is.
func Figures(uncached, read, write, out, reasoning *int64) transcript.Usage {
	u := transcript.Usage{UncachedInputTokens: uncached, CacheReadTokens: read, CacheWriteTokens: write, OutputTokens: out, ReasoningTokens: reasoning}
	if uncached != nil || read != nil || write != nil {
		var all int64
		for _, p := range []*int64{uncached, read, write} {
			if p != nil {
				all += *p
			}
		}
		u.InputTokens = &all
		if uncached == nil {
			n := all - Val(read) - Val(write)
			u.UncachedInputTokens = &n
		}
	}
	return u
}

// N is a pointer to v.
func N(v int64) *int64 { return &v }

// Val is *p, 0 for nil (a figure not stated).
func Val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
