package synccmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// openCodeDB is an OpenCode database as OpenCode writes it (its schema,
// WAL mode).
type openCodeDB struct{ *clitest.AgentDB }

func openOpenCodeDB(t *testing.T, path string) *openCodeDB {
	t.Helper()
	return &openCodeDB{clitest.OpenAgentDB(t, path)}
}

func (o *openCodeDB) session(id, parent string, t int64) {
	var p any
	if parent != "" {
		p = parent
	}
	o.Exec("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'prj', ?, 'calm-river', '/home/me/proj', 'A task', '1.2.15', ?, ?)", id, p, t, t)
}

func (o *openCodeDB) message(id, session, role string, t int64, extra string) {
	data := fmt.Sprintf(`{"role":%q,"time":{"created":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic"%s}`, role, t, extra)
	o.Exec("INSERT INTO message VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data", id, session, t, t, data)
}

// part writes a part, or rewrites it in place (OpenCode's updatePart).
func (o *openCodeDB) part(id, msg, session string, created, updated int64, data string) {
	o.Exec("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data", id, msg, session, created, updated, data)
}

// openCodeHome is a home with OpenCode's database at its default place
// (its directory dbDir), its schema and project prj written.
func openCodeHome(t *testing.T) (h *clitest.Home, dbDir string, oc *openCodeDB) {
	t.Helper()
	h = clitest.NewHome(t)
	dbDir = filepath.Join(h.Dir, ".local", "share", "opencode")
	oc = openOpenCodeDB(t, filepath.Join(dbDir, "opencode.db"))
	oc.Schema("opencode")
	oc.Exec("INSERT INTO project VALUES ('prj')")
	return h, dbDir, oc
}

// turnStarted writes session ses_1 created at T: the user's prompt
// (msg_1) and the start of the assistant's answer (msg_2, its
// step-start), which OpenCode has not finished.
func (o *openCodeDB) turnStarted(T int64) {
	o.session("ses_1", "", T)
	o.message("msg_1", "ses_1", "user", T, "")
	o.part("prt_1a", "msg_1", "ses_1", T, T, `{"type":"text","text":"List the files."}`)
	o.message("msg_2", "ses_1", "assistant", T+1000, "")
	o.part("prt_2a", "msg_2", "ses_1", T+1000, T+1000, `{"type":"step-start"}`)
}

// TestSyncOpenCode: a home with OpenCode's database at its default place
// (OpenCode's schema, in WAL mode, the agent not running): doctor lists
// the store and its three sessions, sync archives each as a run, a
// second sync archives nothing, a new message and a tool part updated in
// place (running, then completed) add one part to that session's run
// only, holding what is new; the sub-agent session's run is a child of its
// parent's; the database's directory, the older file tree included, is
// byte-identical before and after every sync (no -wal or -shm left
// behind); renormalize rebuilds the run from its raw capture after the
// database is gone. The older file tree beside the database (OpenCode's
// storage/, which its 1.2 migration copied into the database and left):
// doctor lists it with its sessions, a session in both is archived once,
// from the database, and the tree's own sessions each as a run, its
// sub-agent's a child run.
func TestSyncOpenCode(t *testing.T) {
	t.Parallel()
	h, dbDir, oc := openCodeHome(t)
	const T = 1762077600000
	oc.turnStarted(T)
	oc.part("prt_2b", "msg_2", "ses_1", T+1100, T+1100, `{"type":"text","text":"Listing them."}`)
	oc.part("prt_2c", "msg_2", "ses_1", T+1200, T+1300, `{"type":"tool","tool":"bash","callID":"call_ls","state":{"status":"running","input":{"command":"ls"},"time":{"start":1762077601200}}}`)
	oc.session("ses_2", "", T+5000)
	oc.message("msg_3", "ses_2", "user", T+5000, "")
	oc.part("prt_3a", "msg_3", "ses_2", T+5000, T+5000, `{"type":"text","text":"Another session, its own content."}`)
	oc.session("ses_3", "ses_1", T+6000)
	oc.message("msg_4", "ses_3", "user", T+6000, "")
	oc.part("prt_4a", "msg_4", "ses_3", T+6000, T+6000, `{"type":"text","text":"A sub-agent's task.","synthetic":true}`)
	if err := oc.DB.Close(); err != nil { // the agent exits: SQLite removes its log
		t.Fatal(err)
	}
	// The older file tree beside it: ses_1 as OpenCode 1.2's migration
	// copied it into the database (and left it here), and two sessions
	// only the tree holds, one a sub-agent's (parentID).
	tree := func(rel, doc string) { h.Put(".local/share/opencode/storage/"+rel, []byte(doc), time.Hour) }
	tree("session/prj/ses_1.json", `{"id":"ses_1","slug":"calm-river","version":"1.2.15","projectID":"prj","directory":"/home/me/proj","title":"A task","time":{"created":1762077600000,"updated":1762077600000}}`)
	tree("message/ses_1/msg_1.json", `{"id":"msg_1","sessionID":"ses_1","role":"user","time":{"created":1762077600000},"modelID":"claude-sonnet-4-5","providerID":"anthropic"}`)
	tree("part/msg_1/prt_1a.json", `{"id":"prt_1a","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"List the files."}`)
	tree("session/prj/ses_0old.json", `{"id":"ses_0old","slug":"old-pond","version":"0.15.8","projectID":"prj","directory":"/home/me/proj","title":"An older task","time":{"created":1752077600000,"updated":1752077600000}}`)
	tree("message/ses_0old/msg_o1.json", `{"id":"msg_o1","sessionID":"ses_0old","role":"user","time":{"created":1752077600000},"modelID":"claude-sonnet-4","providerID":"anthropic"}`)
	tree("part/msg_o1/prt_o1a.json", `{"id":"prt_o1a","messageID":"msg_o1","sessionID":"ses_0old","type":"text","text":"An older session's prompt."}`)
	tree("session/prj/ses_0oldsub.json", `{"id":"ses_0oldsub","slug":"old-pond","version":"0.15.8","projectID":"prj","directory":"/home/me/proj","parentID":"ses_0old","title":"A sub-agent","time":{"created":1752077601000,"updated":1752077601000}}`)
	tree("message/ses_0oldsub/msg_s1.json", `{"id":"msg_s1","sessionID":"ses_0oldsub","role":"user","time":{"created":1752077601000},"modelID":"claude-sonnet-4","providerID":"anthropic"}`)
	tree("part/msg_s1/prt_s1a.json", `{"id":"prt_s1a","messageID":"msg_s1","sessionID":"ses_0oldsub","type":"text","text":"An older sub-agent's task.","synthetic":true}`)

	r := h.OK("doctor", "--json")
	var doc struct {
		Stores []struct {
			Name, Provider, Plugin, Kind, Dir string
			Found                             bool
			Sessions                          int
			NotArchived                       int `json:"not_archived"`
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.Out)
	}
	found := 0
	for _, s := range doc.Stores {
		switch s.Name {
		case "OpenCode":
			found++
			if !s.Found || s.Sessions != 3 || s.NotArchived != 3 || s.Kind != "sqlite" || s.Plugin != "opencode" || s.Dir != dbDir {
				t.Errorf("doctor's OpenCode store: %+v", s)
			}
		case "OpenCode (older file tree)":
			found++
			if !s.Found || s.Sessions != 3 || s.NotArchived != 3 || s.Kind != "tree" || s.Plugin != "opencode" || s.Dir != filepath.Join(dbDir, "storage") {
				t.Errorf("doctor's OpenCode tree store: %+v", s)
			}
		}
	}
	if found != 2 {
		t.Fatalf("doctor does not list OpenCode's two stores:\n%s", r.Out)
	}

	got := syncWant(t, h, dbDir, "first sync: want the database's 3 sessions and the tree's 2 others", map[string]int{"new": 5})
	// ses_1, in both stores, is archived once; the tree's sub-agent is a
	// child run of its parent's.
	var holding []string
	oldRun := ""
	for _, id := range got["new"] {
		b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, id)))
		if strings.Contains(b, "List the files.") {
			holding = append(holding, id)
		}
		if strings.Contains(b, "An older session's prompt.") {
			oldRun = id
		}
	}
	if len(holding) != 1 {
		t.Errorf("ses_1's prompt is in %d runs, want 1", len(holding))
	}
	for _, id := range got["new"] {
		if b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, id))); strings.Contains(b, "An older sub-agent's task.") && (oldRun == "" || !strings.Contains(b, `"parent_run_id":"`+oldRun+`"`)) {
			t.Errorf("the tree's sub-agent session's run %s is not a child of %q", id, oldRun)
		}
	}
	var files []string
	for _, id := range got["new"] {
		files = append(files, clitest.TranscriptPath(h.Stor, id))
	}
	clitest.Validate(t, files...)
	run1 := ""
	for _, id := range got["new"] {
		if b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, id))); strings.Contains(b, "List the files.") {
			run1 = id
			if !strings.Contains(b, `"call_id":"call_ls"`) || strings.Contains(b, `"type":"tool.result"`) {
				t.Errorf("run of ses_1: want the running call without a result:\n%s", b)
			}
		}
	}
	if run1 == "" {
		t.Fatal("no run holds ses_1's prompt")
	}
	// ses_3, a sub-agent of ses_1: a child run of ses_1's run.
	for _, id := range got["new"] {
		if b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, id))); strings.Contains(b, "A sub-agent's task.") {
			if !strings.Contains(b, `"parent_run_id":"`+run1+`"`) {
				t.Errorf("the sub-agent session's run is not a child of %s", run1)
			}
			if !strings.Contains(string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, run1))), `"child_run_id":"`+id+`"`) {
				t.Errorf("run %s does not link the sub-agent's run %s", run1, id)
			}
		}
	}
	syncWant(t, h, dbDir, "second sync", nothing)
	r = h.OK("doctor", "--json")
	if !strings.Contains(r.Out, `"name":"OpenCode"`) || !strings.Contains(r.Out, `"archived":3`) {
		t.Errorf("doctor after sync: %s", r.Out)
	}
	doc.Stores = nil
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.Out)
	}
	for _, s := range doc.Stores {
		if strings.HasPrefix(s.Name, "OpenCode") && s.NotArchived != 0 {
			t.Errorf("doctor after sync: %s has %d sessions not archived", s.Name, s.NotArchived)
		}
	}

	// OpenCode runs again: the tool completes in place, a new message.
	oc = openOpenCodeDB(t, oc.Path)
	oc.part("prt_2c", "msg_2", "ses_1", T+1200, T+9000, `{"type":"tool","tool":"bash","callID":"call_ls","state":{"status":"completed","input":{"command":"ls"},"output":"go.mod\nmain.go\n","metadata":{"exit":0},"time":{"start":1762077601200,"end":1762077609000}}}`)
	oc.message("msg_5", "ses_1", "assistant", T+9100, `,"finish":"stop"`)
	oc.part("prt_5a", "msg_5", "ses_1", T+9100, T+9100, `{"type":"text","text":"Two files: go.mod and main.go."}`)
	oc.part("prt_5b", "msg_5", "ses_1", T+9200, T+9200, `{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":8,"reasoning":0,"cache":{"read":100,"write":0}}}`)
	if err := oc.DB.Close(); err != nil {
		t.Fatal(err)
	}
	b := syncGrown(t, h, dbDir, "third sync", run1)
	for _, want := range []string{`"output":"go.mod\nmain.go\n"`, "Two files: go.mod and main.go."} {
		if !strings.Contains(b, want) {
			t.Errorf("run %s lacks %q", run1, want)
		}
	}
	if n := strings.Count(b, `"type":"tool.call"`); n != 1 {
		t.Errorf("%d tool.call lines, want the call once", n)
	}
	if n := strings.Count(b, "List the files."); n != 1 {
		t.Errorf("the prompt is archived %d times", n)
	}
	syncWant(t, h, dbDir, "fourth sync", nothing)

	// The database gone, the run is rebuilt from its raw capture.
	if err := os.RemoveAll(dbDir); err != nil {
		t.Fatal(err)
	}
	r = h.OK("renormalize", run1)
	re := clitest.TranscriptPath(h.Stor, strings.TrimSpace(r.Out))
	clitest.Validate(t, re)
	rb := string(clitest.ReadFile(t, re))
	for _, want := range []string{"List the files.", `"output":"go.mod\nmain.go\n"`, "Two files: go.mod and main.go."} {
		if !strings.Contains(rb, want) {
			t.Errorf("the renormalized run lacks %q: %v", want, r)
		}
	}
}

// TestSyncOpenCodeMidTurn: sync reads OpenCode's database while a turn
// is being written (the last assistant message has neither
// time.completed nor a finish yet, as OpenCode leaves it until its
// processor stops): the run is incomplete; once the turn finished
// (OpenCode sets time.completed and finish, writes the step-finish), the
// next sync grows the same run and it is ok.
func TestSyncOpenCodeMidTurn(t *testing.T) {
	t.Parallel()
	h, dbDir, oc := openCodeHome(t)
	const T = 1762077600000
	oc.turnStarted(T)
	oc.part("prt_2b", "msg_2", "ses_1", T+1100, T+1100, `{"type":"text","text":"Two files: go.mod and"}`)
	if err := oc.DB.Close(); err != nil {
		t.Fatal(err)
	}
	got := syncWant(t, h, dbDir, "mid-turn sync", map[string]int{"new": 1})
	run := got["new"][0]
	path := clitest.TranscriptPath(h.Stor, run)
	if st := lastPartStatus(t, clitest.ReadRun(t, path)); st != transcript.StatusIncomplete {
		t.Errorf("mid-turn: the run is %q, want incomplete", st)
	}

	// The turn ends: the text completed in place, the message finished.
	oc = openOpenCodeDB(t, oc.Path)
	oc.part("prt_2b", "msg_2", "ses_1", T+1100, T+3000, `{"type":"text","text":"Two files: go.mod and main.go."}`)
	oc.part("prt_2c", "msg_2", "ses_1", T+3100, T+3100, `{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":8,"reasoning":0,"cache":{"read":0,"write":0}}}`)
	oc.Exec("UPDATE message SET time_updated = ?, data = ? WHERE id = 'msg_2'", T+3200,
		fmt.Sprintf(`{"role":"assistant","time":{"created":%d,"completed":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic","finish":"stop"}`, T+1000, T+3200))
	if err := oc.DB.Close(); err != nil {
		t.Fatal(err)
	}
	b := syncGrown(t, h, dbDir, "sync after the turn", run)
	if !strings.Contains(b, "Two files: go.mod and main.go.") {
		t.Errorf("run %s lacks the finished answer", run)
	}
	if st := lastPartStatus(t, clitest.ReadRun(t, path)); st != transcript.StatusOK {
		t.Errorf("after the turn: the run is %q, want ok", st)
	}
}
