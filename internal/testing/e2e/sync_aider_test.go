package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	h := newFakeHome(t)
	hist := readFile(t, filepath.Join(root, "testdata", "captures", "aider", "coding_aider_edits_commits.md"))
	repo := filepath.Join(h.dir, "src", "app")
	rel := filepath.Join("src", "app", ".aider.chat.history.md")
	h.put(rel, hist, time.Hour)
	cfg, err := json.Marshal(map[string]any{"projects": []string{repo}})
	if err != nil {
		t.Fatal(err)
	}
	h.put(filepath.Join(".config", "twasm", "sync.json"), cfg, time.Hour)

	doctor := func() map[string]doctorStore { t.Helper(); return h.doctorStores(repo) }
	sync := func() map[string][]string { t.Helper(); return h.syncOutcomes(repo) }

	if s := doctor()["Aider chat history"]; !s.Found || s.Sessions != 5 || s.NotArchived != 5 || s.Provider != "aider" || s.Dir != repo {
		t.Fatalf("doctor before sync: %+v", s)
	}
	if got := sync(); len(got["new"]) != 5 || len(got) != 1 {
		t.Fatalf("first sync: %v", got)
	}
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
		runs := h.runProjects()
		for run, p := range runs {
			if p != repo {
				t.Errorf("ls: run %s project %q, want %s", run, p, repo)
			}
		}
		if len(runs) != n {
			t.Errorf("ls lists %d runs, want %d: %v", len(runs), n, runs)
		}
		if got := h.usageByProject(); len(got) != 1 || got[repo] != used {
			t.Errorf("usage --by project: %v, want %d sessions in %s", got, used, repo)
		}
	}
	projects(5, withUsage(hist))
	if got := sync(); len(got) != 0 {
		t.Fatalf("second sync with nothing new: %v", got)
	}
	more := append(append([]byte{}, hist...), "\n# aider chat started at 2025-03-02 09:00:00\n\n#### hello\n\nHi.\n\n> Tokens: 1.0k sent, 5 received. Cost: $0.01 message, $0.01 session.  \n"...)
	h.put(rel, more, 30*time.Minute)
	// Aider writes a blank line before a session's start line, with
	// it: it is the new session's, and the session before is left as
	// it was.
	got := sync()
	if len(got) != 1 || len(got["new"]) != 1 {
		t.Fatalf("sync after a session was appended: %v", got)
	}
	if got := sync(); len(got) != 0 {
		t.Fatalf("sync with nothing new: %v", got)
	}
	if s := doctor()["Aider chat history"]; s.Sessions != 6 || s.Archived != 6 || s.NotArchived != 0 {
		t.Errorf("doctor after sync: %+v", s)
	}
	projects(6, withUsage(more))
}
