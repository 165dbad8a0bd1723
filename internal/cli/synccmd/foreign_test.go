package synccmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncForeignFileSaid: a file in a store that the store's plugin
// cannot read (another provider's session, a file that is no session)
// is not archived without a word: sync says, as record and import do,
// that the plugin understood none of its lines and that the provider
// looks wrong (with what detection says), names the run that keeps its
// raw capture, and exits 1; a session the plugin understands beside it
// is archived as usual, and the next sync, with nothing new, is quiet
// and exits 0. Before the fix sync exited 0, saying only that the lines
// were unmapped.
func TestSyncForeignFileSaid(t *testing.T) {
	rollout, err := os.ReadFile(filepath.Join(clitest.Root, "..", "shared", "fixtures", "codex", "agentcmd_rollout_v0.40_vscode_session.jsonl"))
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	for _, tc := range []struct {
		name, file string
		body       []byte
		detection  string
	}{
		{"codex rollout in claude's store", ".claude/projects/-w/x.jsonl", rollout, "detection says codex"},
		{"not a session", ".claude/projects/-w/notes.jsonl", []byte("{\"todo\": \"buy milk\"}\n{\"todo\": \"call mum\"}\n"), "the provider looks wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := clitest.NewHome(t)
			h.Put(tc.file, tc.body, time.Hour)
			h.Put(".claude/projects/-w/good.jsonl", clitest.ClaudeSession("good", 3), time.Hour)
			r := h.Run("sync")
			if r.Code != 1 {
				t.Fatalf("sync of a file its plugin cannot read: want exit 1, got %v", r)
			}
			for _, want := range []string{filepath.Base(tc.file), "understood none", "the provider looks wrong", tc.detection, "archived as run"} {
				if !strings.Contains(r.ErrOut, want) {
					t.Errorf("stderr lacks %q: %s", want, r.ErrOut)
				}
			}
			if strings.Contains(r.ErrOut, "good.jsonl") {
				t.Errorf("the session understood is reported: %s", r.ErrOut)
			}
			got := clitest.ArchivedSessions(t, h.Stor)
			if len(got["good.jsonl"]) != 1 || len(got["good.jsonl"][0].Messages) == 0 {
				t.Errorf("the good session: %+v", got["good.jsonl"])
			}
			again := h.OK("sync")
			if strings.Contains(again.ErrOut, "understood none") {
				t.Errorf("the next sync repeats it: %s", again.ErrOut)
			}
		})
	}
}
