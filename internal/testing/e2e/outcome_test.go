package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordWrappedAgentSaysWhatWentWrong: a wrapped agent's output of
// which the plugin understood no line is said on stderr, and twasm exits
// 1, or with the agent's own exit code when it failed (the rest of what
// record says is internal/cli/record's TestRecordSaysWhatWentWrong).
func TestRecordWrappedAgentSaysWhatWentWrong(t *testing.T) {
	t.Parallel()
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("# notes\n\nnot an agent's output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("wrapped agent exits 0", func(t *testing.T) {
		t.Parallel()
		storage := t.TempDir()
		r := start(t, nil, fakeEnv(fakeInput, text), "--storage", storage, "record", "--provider", "claude", "--", fake).wait(t, hangBound)
		if r.code != 1 || !strings.Contains(r.errOut, "twasm: the claude plugin understood none") {
			t.Fatalf("want exit 1 and the reason: %v", r)
		}
	})
	t.Run("wrapped agent fails", func(t *testing.T) {
		t.Parallel()
		storage := t.TempDir()
		r := start(t, nil, fakeEnv(fakeInput, text, fakeExit, "4"), "--storage", storage, "record", "--provider", "claude", "--", fake).wait(t, hangBound)
		if r.code != 4 || !strings.Contains(r.errOut, "understood none") {
			t.Fatalf("want the agent's exit code and the reason: %v", r)
		}
	})
}
