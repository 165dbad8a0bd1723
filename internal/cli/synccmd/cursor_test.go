package synccmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncCursor: a home with one Cursor agent transcript at its place
// (~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl) and
// its sub-agent's transcript below it: doctor lists the store (counting
// the conversation's and its sub-agent's files), sync archives the conversation as a run whose session id is the file's
// name, its prompt dated by its <timestamp>, no usage or model, the calls
// without results and the turn ok as turn_ended says, and the sub-agent's
// transcript as a child run; the run has no project (the directory's
// name, home-me-demo-app, is /home/me/demo-app as well as
// /home/me/demo/app: none is guessed), as `twasm ls` says; a second
// sync archives nothing, an appended
// turn grows that run only, the store's files unchanged throughout.
func TestSyncCursor(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	const id, subID = "3f2b1c4e-7a0d-4c1e-9b7a-2d4e5f607182", "b1b2b3b4-c5c6-4d7d-8e8e-f9f0a1a2a3a4"
	rel := filepath.Join(".cursor", "projects", "home-me-demo-app", "agent-transcripts", id)
	dir := filepath.Join(h.Dir, ".cursor", "projects")
	conv := `{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Monday, May 4, 2026, 12:39 AM (UTC+5:30)</timestamp>\n<user_query>\nadd a health check endpoint\n</user_query>"}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"text","text":"Router first."},{"type":"tool_use","name":"Shell","input":{"command":"npm test"}}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Subagent","input":{"description":"Check the router tests","prompt":"List every test that touches the router."}}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"text","text":"Endpoint is mounted at /health."}]}}` + "\n" +
		`{"type":"turn_ended","status":"success"}` + "\n"
	main := h.Put(filepath.Join(rel, id+".jsonl"), []byte(conv), time.Hour)
	h.Put(filepath.Join(rel, "subagents", subID+".jsonl"), []byte(
		`{"role":"user","message":{"content":[{"type":"text","text":"List every test that touches the router."}]}}`+"\n"+
			`{"role":"assistant","message":{"content":[{"type":"text","text":"Two tests touch the router."}]}}`+"\n"), time.Hour)

	// One session; its sub-agent file is counted apart (doctor, #27).
	doctorLists(t, doctorStores(t, h, dir), "Cursor agent transcripts", "", dir, 1)

	got := syncWant(t, h, dir, "first sync: want the conversation and its sub-agent new", map[string]int{"new": 2})
	run, sub := "", ""
	for _, rid := range got["new"] {
		switch b := runText(t, h, rid); {
		case strings.Contains(b, "Endpoint is mounted at /health."):
			run = rid
			for _, want := range []string{`"session_id":"` + id + `"`, `"timestamp":"2026-05-03T19:09:00`, `"name":"Shell"`, `"command":"npm test"`, `"status":"ok"`, "keeps no tool results"} {
				if !strings.Contains(b, want) {
					t.Errorf("run of %s lacks %s:\n%s", id, want, b)
				}
			}
			for _, bad := range []string{`"input_tokens"`, `"type":"tool.result"`} {
				if strings.Contains(b, bad) {
					t.Errorf("run of %s has %s, which the transcript does not state", id, bad)
				}
			}
		case strings.Contains(b, "Two tests touch the router."):
			sub = rid
		}
	}
	if run == "" || sub == "" {
		t.Fatalf("runs: conversation %q, sub-agent %q: %v", run, sub, got)
	}
	wantChildOf(t, h, sub, run, "the sub-agent")
	if b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, run))); strings.Contains(b, `"cwd":`) || strings.Contains(b, `"project":`) {
		t.Errorf("run %s states a directory its transcript's path cannot give", run)
	}
	if p, ok := runProjects(t, h)[run]; !ok || p != "" {
		t.Errorf("ls: run %s project %q (listed %v), want none", run, p, ok)
	}
	for p := range usageByProject(t, h) { // a transcript states no usage: none at all
		if p != "(no project)" {
			t.Errorf("usage --by project files the Cursor transcript under %q", p)
		}
	}
	syncWant(t, h, dir, "second sync", nothing)

	// Another turn, appended.
	f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Monday, May 4, 2026, 1:10 AM (UTC+5:30)</timestamp>\n<user_query>\nnow document it\n</user_query>"}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"text","text":"Documented in README."}]}}` + "\n" +
		`{"type":"turn_ended","status":"success"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(main, old, old); err != nil {
		t.Fatal(err)
	}
	b := syncGrown(t, h, dir, "third sync", run)
	if !strings.Contains(b, "Documented in README.") || strings.Count(b, "add a health check endpoint") != 1 || strings.Count(b, `"type":"tool.call"`) != 2 {
		t.Errorf("grown run: want the new turn, the first prompt once and the two calls once:\n%s", b)
	}
}

// doctorLists checks that doctor's stores list store name, found in dir
// with that many sessions, of the cursor plugin (and kind, if set).
func doctorLists(t *testing.T, stores map[string]doctorStore, name, kind, dir string, sessions int) {
	t.Helper()
	s, ok := stores[name]
	if !ok {
		t.Fatalf("doctor does not list %s: %+v", name, stores)
	}
	if !s.Found || s.Sessions != sessions || s.Plugin != "cursor" || s.Dir != dir || kind != "" && s.Kind != kind {
		t.Errorf("doctor's %s store: %+v", name, s)
	}
}
