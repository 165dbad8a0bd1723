package plugintest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
)

// Testdata reads the repository's testdata file at rel (slash-separated
// parts, as "golden", "copilot", "events_session_log.jsonl").
func Testdata(tb testing.TB, rel ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{RepoRoot(tb), "testdata"}, rel...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Cut is raw up to, without, its n-th line (from 1) holding s: a log as
// `twasm sync` reads it while the agent is still writing the rest. A log
// without such a line fails the test.
func Cut(tb testing.TB, raw []byte, s string, n int) []byte {
	tb.Helper()
	lines := bytes.SplitAfter(raw, []byte("\n"))
	seen := 0
	for i, l := range lines {
		if bytes.Contains(l, []byte(s)) {
			if seen++; seen == n {
				return bytes.Join(lines[:i], nil)
			}
		}
	}
	tb.Fatalf("the log has %d line(s) holding %q, not %d", seen, s, n)
	return nil
}

// WantStatus runs p natively over raw (provider names it) and checks the
// step's status.
func WantStatus(tb testing.TB, p sdk.Plugin, provider string, raw []byte, want string) {
	tb.Helper()
	o := Run(tb, p, raw, normalize.Options{Provider: provider})
	if o.Result.Status != want {
		tb.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, want)
	}
}
