package synccmd_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncQwenChat: a home directory with a Qwen Code chat in its default
// store (~/.qwen/projects/<cwd>/chats/<session>.jsonl) and an older
// whole-document chat (~/.qwen/tmp/<hash>/chats/session-*.json).
// `twasm doctor` lists both stores with their session not archived;
// `twasm sync` archives both; a second sync archives nothing; the chat
// grown by a turn adds one part to the same run holding only the new
// records; doctor then says archived; the store's bytes are the same
// before and after every command.
func TestSyncQwenChat(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	chat := clitest.ReadFile(t, clitest.Golden("qwen", "session_tools_errors.jsonl"))
	lines := bytes.SplitAfter(chat, []byte("\n"))
	rel := filepath.Join(".qwen", "projects", "-home-me-proj", "chats", "7f2c1e4a-0b3d-4c5e-9f61-2a8b3c4d5e6f.jsonl")
	h.Put(rel, bytes.Join(lines[:5], nil), time.Hour)
	h.Put(filepath.Join(".qwen", "tmp", "9d2f0c6d1a4b", "chats", "session-2025-09-10T08-15-3e1d2c4b.json"),
		clitest.ReadFile(t, clitest.Golden("qwen", "legacy_session_file.json")), 48*time.Hour)

	store := filepath.Join(h.Dir, ".qwen")
	doctor := func() map[string]doctorStore { t.Helper(); return doctorStores(t, h, store) }
	sync := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		return syncWant(t, h, store, what, want)
	}

	stores := doctor()
	for name, dir := range map[string]string{
		"Qwen Code chats":                filepath.Join(store, "projects"),
		"Qwen Code chats (before JSONL)": filepath.Join(store, "tmp"),
	} {
		s := stores[name]
		if !s.Found || s.Sessions != 1 || s.NotArchived != 1 || s.Provider != "qwen" || s.Dir != dir {
			t.Fatalf("doctor before sync, %s: %+v", name, s)
		}
	}
	sync("first sync", map[string]int{"new": 2})
	sync("second sync with nothing new", nothing)

	// The chat grows by the rest of the turn: one part more.
	h.Put(rel, chat, 30*time.Minute)
	got := sync("sync after a turn", map[string]int{"grown": 1})
	sync("sync with nothing new", nothing)
	for name, s := range doctor() {
		if s.Provider == "qwen" && (s.Archived != 1 || s.NotArchived != 0) {
			t.Errorf("doctor after sync, %s: %+v", name, s)
		}
	}
	checkQwenChat(t, clitest.TranscriptPath(h.Stor, got0(t, got["grown"])))
}

// checkQwenChat checks the run of the chat of TestSyncQwenChat: two
// parts, three responses, three calls each with one result (the failed
// test run an error with exit code 1, the rm the user refused denied),
// the responses' output tokens once.
func checkQwenChat(t *testing.T, path string) {
	t.Helper()
	r := tallyRun(t, path)
	results := r.results
	if len(r.parts) != 2 || r.responses != 3 || len(r.calls) != 3 {
		t.Fatalf("run %s: %d parts, %d responses, %d calls (want 2, 3, 3)", path, len(r.parts), r.responses, len(r.calls))
	}
	if r := results["call_1"]; r == nil || r.Status != "error" || r.ExitCode == nil || *r.ExitCode != 1 {
		t.Errorf("the failed go test: %+v", r)
	}
	if r := results["call_3"]; r == nil || r.Status != "denied" {
		t.Errorf("the refused rm: %+v", r)
	}
	out := r.output
	if out != 212 {
		t.Errorf("output tokens over the parts: %d, the responses state 212", out)
	}
}
