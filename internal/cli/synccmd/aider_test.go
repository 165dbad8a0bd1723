package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncAiderHistory: a repository listed in sync.json's projects holds
// an Aider chat history (the real capture of five sessions). `twasm
// doctor` lists the store with its five sessions not archived; `twasm
// sync` archives one run per session through the bundled wasm plugin; a
// second sync archives nothing; a session appended is one new run, and
// the session before it is left as it was (the blank line Aider writes
// before a start line is the new session's); doctor then says all six
// archived. Every run's project is the repository (the directory the
// history is in, ABI 1.8's facts line): `twasm ls` shows it and `twasm
// usage --by project` counts the sessions there. The repository is left
// as it was (read-only).
func TestSyncAiderHistory(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	hist := clitest.ReadFile(t, filepath.Join(clitest.Root, "testdata", "captures", "aider", "coding_aider_edits_commits.md"))
	repo := filepath.Join(h.Dir, "src", "app")
	rel := filepath.Join("src", "app", ".aider.chat.history.md")
	h.Put(rel, hist, time.Hour)
	cfg, err := json.Marshal(map[string]any{"projects": []string{repo}})
	if err != nil {
		t.Fatal(err)
	}
	h.Put(filepath.Join(".config", "twasm", "sync.json"), cfg, time.Hour)

	doctor := func() map[string]doctorStore { t.Helper(); return doctorStores(t, h, repo) }
	sync := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		return syncWant(t, h, repo, what, want)
	}

	if s := doctor()["Aider chat history"]; !s.Found || s.Sessions != 5 || s.NotArchived != 5 || s.Provider != "aider" || s.Dir != repo {
		t.Fatalf("doctor before sync: %+v", s)
	}
	sync("first sync", map[string]int{"new": 5})
	// usage counts the sessions that state usage: those with a
	// "> Tokens:" line, counted here from the raw file.
	withUsage := func(b []byte) int {
		n := 0
		for _, ses := range strings.Split("\n"+string(b), "\n# aider chat started at ")[1:] {
			if strings.Contains(ses, "\n> Tokens: ") {
				n++
			}
		}
		return n
	}
	projects := func(n, used int) {
		t.Helper()
		runs := runProjects(t, h)
		for run, p := range runs {
			if p != repo {
				t.Errorf("ls: run %s project %q, want %s", run, p, repo)
			}
		}
		if len(runs) != n {
			t.Errorf("ls lists %d runs, want %d: %v", len(runs), n, runs)
		}
		if got := usageByProject(t, h); len(got) != 1 || got[repo] != used {
			t.Errorf("usage --by project: %v, want %d sessions in %s", got, used, repo)
		}
	}
	projects(5, withUsage(hist))
	sync("second sync with nothing new", nothing)
	more := append(append([]byte{}, hist...), "\n# aider chat started at 2025-03-02 09:00:00\n\n#### hello\n\nHi.\n\n> Tokens: 1.0k sent, 5 received. Cost: $0.01 message, $0.01 session.  \n"...)
	h.Put(rel, more, 30*time.Minute)
	// Aider writes a blank line before a session's start line, with
	// it: it is the new session's, and the session before is left as
	// it was.
	sync("sync after a session was appended", map[string]int{"new": 1})
	sync("sync with nothing new", nothing)
	if s := doctor()["Aider chat history"]; s.Sessions != 6 || s.Archived != 6 || s.NotArchived != 0 {
		t.Errorf("doctor after sync: %+v", s)
	}
	projects(6, withUsage(more))
}
