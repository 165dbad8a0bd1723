package synccmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncNeverArchivesOwnStorage: a store that contains twasm's own
// storage (the README suggests a home directory or a backup as a store),
// reached directly or through a link, never makes sync archive twasm's
// transcripts, raw captures or ledger as sessions: four syncs leave the
// one session's one run, the store's report says the storage was left
// out, and import refuses a transcript of the storage by name. Before
// 337ff47 every sync archived the previous sync's runs again (runs 2, 6,
// 10, 14 over four syncs). Issue #25 item 6.
func TestSyncNeverArchivesOwnStorage(t *testing.T) {
	for _, tc := range []struct {
		name string
		link bool // the storage is named through a symbolic link to the home
	}{{"store contains the storage", false}, {"storage named through a link", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := clitest.NewHome(t)
			h.Stor = filepath.Join(h.Dir, ".local", "share", "twasm")
			h.Put(".claude/projects/-w/s.jsonl", clitest.ClaudeSession("own", 5), time.Hour)
			if tc.link {
				link := filepath.Join(t.TempDir(), "home-link")
				if err := os.Symlink(h.Dir, link); err != nil {
					t.Fatal(err)
				}
				h.Stor = filepath.Join(link, ".local", "share", "twasm")
			}
			cfg, _ := json.Marshal(map[string]any{"stores": []any{map[string]any{"provider": "claude", "dir": h.Dir, "pattern": "**/*.jsonl"}}})
			h.Put(".config/twasm/sync.json", cfg, time.Hour)
			var last clitest.Result
			for range 4 {
				last = h.OK("sync")
			}
			got := clitest.ArchivedSessions(t, h.Stor)
			if len(got) != 1 || len(got["s.jsonl"]) != 1 {
				names := []string{}
				for n, runs := range got {
					for _, r := range runs {
						names = append(names, n+":"+r.ID)
					}
				}
				t.Fatalf("after four syncs: runs %v, want only the session's one", names)
			}
			if !strings.Contains(last.ErrOut, "storage") {
				t.Errorf("the store's report does not say the storage was left out: %s", last.ErrOut)
			}
			tr, _ := filepath.Glob(filepath.Join(h.Stor, "transcripts", "*.jsonl"))
			r := h.Run("import", "--provider", "claude", tr[0])
			if r.Code == 0 || !strings.Contains(r.ErrOut, "own storage") {
				t.Errorf("import of a transcript of the storage: %v", r)
			}
			if n, _ := filepath.Glob(filepath.Join(h.Stor, "transcripts", "*.jsonl")); len(n) != len(tr) {
				t.Errorf("import wrote a run: %d transcripts, want %d", len(n), len(tr))
			}
		})
	}
}
