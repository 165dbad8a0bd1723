package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncAmpThread: a home directory with an Amp thread in its default
// store (~/.local/share/amp/threads/T-<uuid>.json), a document Amp
// rewrites whole at every turn. `twasm doctor` lists the store with its
// thread not archived; `twasm sync` archives it; a second sync archives
// nothing; the thread rewritten with two more turns adds one part to the
// same run holding only the new messages; doctor then says archived.
func TestSyncAmpThread(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	var doc map[string]any
	if err := json.Unmarshal(clitest.ReadFile(t, clitest.Golden("amp", "thread_tools_failures.json")), &doc); err != nil {
		t.Fatal(err)
	}
	full, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	doc["messages"] = doc["messages"].([]any)[:3] // the first turn: the prompt, three calls, their results
	first, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(".local", "share", "amp", "threads", "T-5c1e0d1a-2b3c-4d5e-8f90-0a1b2c3d4e5f.json")
	h.Put(rel, first, time.Hour)

	store := filepath.Join(h.Dir, ".local", "share", "amp")
	doctor := func() map[string]doctorStore { t.Helper(); return doctorStores(t, h, store) }
	sync := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		return syncWant(t, h, store, what, want)
	}

	if s := doctor()["Amp threads"]; !s.Found || s.Sessions != 1 || s.NotArchived != 1 || s.Provider != "amp" || s.Dir != filepath.Join(store, "threads") {
		t.Fatalf("doctor before sync: %+v", s)
	}
	sync("first sync", map[string]int{"new": 1})
	sync("second sync with nothing new", nothing)

	// Amp rewrites the thread with the next two turns: one part more.
	h.Put(rel, full, 30*time.Minute)
	got := sync("sync after a rewrite", map[string]int{"grown": 1})
	sync("sync with nothing new", nothing)
	if s := doctor()["Amp threads"]; s.Archived != 1 || s.NotArchived != 0 {
		t.Errorf("doctor after sync: %+v", s)
	}
	checkAmpThread(t, clitest.TranscriptPath(h.Stor, got0(t, got["grown"])))
}

// checkAmpThread checks the run of the thread of TestSyncAmpThread: two
// parts, three model calls, four tool calls each with one result (the
// build that exited 1 an error with its exit code, the Read that failed
// an error, the edit the user rejected denied, the cancelled test run
// cancelled), the messages' output tokens once.
func checkAmpThread(t *testing.T, path string) {
	t.Helper()
	r := tallyRun(t, path)
	results := r.results
	if len(r.parts) != 2 || r.responses != 3 || len(r.calls) != 4 {
		t.Fatalf("run %s: %d parts, %d responses, %d calls (want 2, 3, 4)", path, len(r.parts), r.responses, len(r.calls))
	}
	for id, want := range map[string]string{"toolu_01": "error", "toolu_02": "error", "toolu_03": "denied", "toolu_04": "cancelled"} {
		if r := results[id]; r == nil || r.Status != want {
			t.Errorf("call %s: %+v, want status %s", id, r, want)
		}
	}
	if r := results["toolu_01"]; r == nil || r.ExitCode == nil || *r.ExitCode != 1 {
		t.Errorf("the failed build: %+v", r)
	}
	out := r.output
	if out != 285 {
		t.Errorf("output tokens over the parts: %d, the messages state 285", out)
	}
}
