package synccmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// gooseDB is a Goose sessions.db as Goose writes it (its schema, WAL
// mode), written by the test as the agent.
type gooseDB struct{ *clitest.AgentDB }

func openGooseDB(t *testing.T, path string) *gooseDB {
	t.Helper()
	return &gooseDB{clitest.OpenAgentDB(t, path)}
}

// session creates a session (Goose's create_session), parent its parent
// session ("" for none).
func (g *gooseDB) session(id, parent, typ string) {
	var p any
	if parent != "" {
		p = parent
	}
	g.Exec(`INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, extension_data, provider_name, model_config_json, parent_session_id)
VALUES (?, 'fix the test', ?, '/home/me/proj', '2025-11-02 10:00:00', '2025-11-02 10:00:00', '{}', 'anthropic', '{"model_name":"claude-sonnet-4-5","context_limit":200000}', ?)`, id, typ, p)
}

// message adds a message (Goose's add_message: the row, then the
// session's updated_at).
func (g *gooseDB) message(session, id, role string, created int64, content string) {
	g.Exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, '{"userVisible":true,"agentVisible":true}')`, id, session, role, content, created)
	g.Exec(`UPDATE sessions SET updated_at = datetime(?, 'unixepoch') WHERE id = ?`, created, session)
}

// usage sets the session's counters (Goose's update of the session's
// metrics after a reply).
func (g *gooseDB) usage(session string, in, out, cost float64) {
	g.Exec(`UPDATE sessions SET accumulated_input_tokens = ?, accumulated_output_tokens = ?, accumulated_total_tokens = ?, accumulated_cost = ? WHERE id = ?`, in, out, in+out, cost, session)
}

// TestSyncGoose: a home with Goose's sessions.db at its default place
// (Goose's schema, in WAL mode, the agent not running) and a session file
// of Goose before sessions.db beside it: doctor lists both stores, sync
// archives each session as a run (a failed command a failed result, the
// session's usage as Goose states it, the sub-agent session a child run
// of its parent's), a second sync archives nothing, a new turn adds one
// part to that session's run only (its tool's response with the request
// it answers, the call once), and the store's directory is
// byte-identical before and after every command (no -wal or -shm left
// behind); renormalize rebuilds the run from its raw capture after the
// database is gone.
func TestSyncGoose(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dir := filepath.Join(h.Dir, ".local", "share", "goose", "sessions")
	g := openGooseDB(t, filepath.Join(dir, "sessions.db"))
	g.Schema("goose")
	const T = 1762077600
	g.session("20251102_1", "", "user")
	g.message("20251102_1", "msg_1", "user", T, `[{"type":"text","text":"Run the tests."}]`)
	g.message("20251102_1", "msg_2", "assistant", T+2, `[{"type":"toolRequest","id":"toolu_1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"go test ./..."}}}}]`)
	g.message("20251102_1", "msg_3", "user", T+8, `[{"type":"toolResponse","id":"toolu_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"FAIL\texample.com/proj"}],"isError":true}}}]`)
	g.message("20251102_1", "msg_4", "assistant", T+10, `[{"type":"text","text":"The tests fail; looking at why."},{"type":"toolRequest","id":"toolu_2","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"cat parse.go"}}}}]`)
	g.usage("20251102_1", 5000, 300, 0.021)
	g.session("20251102_2", "20251102_1", "sub_agent")
	g.message("20251102_2", "msg_s1", "user", T+20, `[{"type":"text","text":"A sub-agent's task."}]`)
	if err := g.DB.Close(); err != nil { // the agent exits: SQLite removes its log
		t.Fatal(err)
	}
	h.Put(filepath.Join(".local", "share", "goose", "sessions", "20250101_101500.jsonl"), []byte(
		`{"working_dir":"/home/me/site","description":"Build the site","schedule_id":null,"message_count":2,"total_tokens":900,"input_tokens":800,"output_tokens":100}`+"\n"+
			`{"id":null,"role":"user","created":1735725600,"content":[{"type":"text","text":"An older session's prompt."}]}`+"\n"+
			`{"id":null,"role":"assistant","created":1735725602,"content":[{"type":"text","text":"An older session's answer."}]}`+"\n"), time.Hour)

	var r clitest.Result
	clitest.Unchanged(t, dir, "doctor", func() { r = h.OK("doctor", "--json") })
	var doc struct {
		Stores []struct {
			Name, Provider, Plugin, Kind, Dir string
			Found                             bool
			Sessions                          int
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.Out)
	}
	want := map[string]struct {
		kind     string
		sessions int
	}{"Goose": {"sqlite", 2}, "Goose session files (before sessions.db)": {"", 1}}
	seen := 0
	for _, s := range doc.Stores {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		seen++
		if !s.Found || s.Sessions != w.sessions || s.Plugin != "goose" || s.Dir != dir || (w.kind != "" && s.Kind != w.kind) {
			t.Errorf("doctor's %s store: %+v", s.Name, s)
		}
	}
	if seen != 2 {
		t.Fatalf("doctor lists %d of Goose's 2 stores:\n%s", seen, r.Out)
	}

	got := syncWant(t, h, dir, "first sync", map[string]int{"new": 3})
	run1, sub, old := "", "", ""
	for _, id := range got["new"] {
		switch b := runText(t, h, id); {
		case strings.Contains(b, "Run the tests."):
			run1 = id
			for _, want := range []string{`"call_id":"toolu_1"`, `"status":"error"`, `"input_tokens":5000`, `"output_tokens":300`, `"model":"claude-sonnet-4-5"`} {
				if !strings.Contains(b, want) {
					t.Errorf("run of 20251102_1 lacks %s:\n%s", want, b)
				}
			}
		case strings.Contains(b, "A sub-agent's task."):
			sub = id
		case strings.Contains(b, "An older session's answer."):
			old = id
			// Its metadata holds only the plain counters, the last model
			// call's usage: no session usage, a warning with the figures.
			if !strings.Contains(b, `"session_id":"20250101_101500"`) || strings.Contains(b, `"input_tokens":800`) || !strings.Contains(b, "last model call's usage for this session (input 800, output 100, total 900)") {
				t.Errorf("run of the session file: want its id from its name, no usage and the last call's in a warning:\n%s", b)
			}
		}
	}
	if run1 == "" || sub == "" || old == "" {
		t.Fatalf("runs: session %q, sub-agent %q, session file %q: %v", run1, sub, old, got)
	}
	wantChildOf(t, h, sub, run1, "the sub-agent session")
	syncWant(t, h, dir, "second sync", nothing)

	// Goose runs again: the pending command's response, an answer, the
	// session's counters.
	g = openGooseDB(t, filepath.Join(dir, "sessions.db"))
	g.message("20251102_1", "msg_5", "user", T+30, `[{"type":"toolResponse","id":"toolu_2","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"package parse"}],"isError":false}}}]`)
	g.message("20251102_1", "msg_6", "assistant", T+32, `[{"type":"text","text":"Found it: an off-by-one."}]`)
	g.usage("20251102_1", 9000, 450, 0.034)
	if err := g.DB.Close(); err != nil {
		t.Fatal(err)
	}
	b := syncGrown(t, h, dir, "third sync", run1)
	for _, want := range []string{`"output":"package parse"`, "Found it: an off-by-one.", `"input_tokens":9000`} {
		if !strings.Contains(b, want) {
			t.Errorf("run %s lacks %q", run1, want)
		}
	}
	if strings.Contains(b, `"name":"unknown"`) {
		t.Errorf("run %s has a result without its call:\n%s", run1, b)
	}
	if n := strings.Count(b, `"call_id":"toolu_2","input"`); n != 1 {
		t.Errorf("%d tool.calls of toolu_2, want the call once", n)
	}
	if n := strings.Count(b, "Run the tests."); n != 1 {
		t.Errorf("the prompt is archived %d times", n)
	}
	syncWant(t, h, dir, "fourth sync", nothing)

	// The database gone, the run is rebuilt from its raw capture.
	if err := os.Remove(filepath.Join(dir, "sessions.db")); err != nil {
		t.Fatal(err)
	}
	r = h.OK("renormalize", run1)
	re := clitest.TranscriptPath(h.Stor, strings.TrimSpace(r.Out))
	clitest.Validate(t, re)
	rb := string(clitest.ReadFile(t, re))
	for _, want := range []string{"Run the tests.", `"output":"package parse"`, "Found it: an off-by-one."} {
		if !strings.Contains(rb, want) {
			t.Errorf("the renormalized run lacks %q: %v", want, r)
		}
	}
}

// TestSyncGooseCopyCountedOnce: copy_session (goose session --resume
// --fork, the desktop's Duplicate and its fork at an edited message)
// creates a session and writes the original's conversation into it as it
// was (each message's created_timestamp and message_id kept, the token
// counters not copied: block/goose session_manager.rs). Synced beside the
// original, the copy's run holds only its own turn: `ls --json` counts
// the original's tool calls once, in its own run, and `usage` each
// session's tokens once. Before, the copy's run held the original's
// prompt and both its calls again (5 tool calls in all instead of 3).
func TestSyncGooseCopyCountedOnce(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dir := filepath.Join(h.Dir, ".local", "share", "goose", "sessions")
	g := openGooseDB(t, filepath.Join(dir, "sessions.db"))
	g.Schema("goose")
	const T = 1762077600 // 2025-11-02 10:00:00, the original's creation
	type msg struct {
		id, role string
		at       int64
		content  string
	}
	original := []msg{
		{"msg_1", "user", T, `[{"type":"text","text":"Run the tests."}]`},
		{"msg_2", "assistant", T + 2, `[{"type":"toolRequest","id":"toolu_1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"go test ./..."}}}}]`},
		{"msg_3", "user", T + 8, `[{"type":"toolResponse","id":"toolu_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"FAIL\texample.com/proj"}],"isError":true}}}]`},
		{"msg_4", "assistant", T + 10, `[{"type":"toolRequest","id":"toolu_2","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"cat parse.go"}}}}]`},
		{"msg_5", "user", T + 12, `[{"type":"toolResponse","id":"toolu_2","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"package parse"}],"isError":false}}}]`},
		{"msg_6", "assistant", T + 15, `[{"type":"text","text":"An off-by-one in parse.go."}]`},
	}
	g.session("20251102_1", "", "user")
	for _, m := range original {
		g.message("20251102_1", m.id, m.role, m.at, m.content)
	}
	g.usage("20251102_1", 5000, 300, 0.021)
	// An hour later the user forks it: the copy is created, then the
	// conversation written into it as it was.
	g.session("20251102_2", "", "user")
	g.Exec(`UPDATE sessions SET name = 'fix the test (copy)', created_at = datetime(?, 'unixepoch'), updated_at = datetime(?, 'unixepoch') WHERE id = '20251102_2'`, T+3600, T+3600)
	for _, m := range original {
		g.message("20251102_2", m.id, m.role, m.at, m.content)
	}
	g.message("20251102_2", "msg_20251102_2_a", "user", T+3610, `[{"type":"text","text":"Fix it another way."}]`)
	g.message("20251102_2", "msg_20251102_2_b", "assistant", T+3612, `[{"type":"toolRequest","id":"toolu_3","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"command":"str_replace","path":"/home/me/proj/parse.go","old_str":"i := 1","new_str":"i := 0"}}}}]`)
	g.message("20251102_2", "msg_20251102_2_c", "user", T+3613, `[{"type":"toolResponse","id":"toolu_3","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"edited"}],"isError":false}}}]`)
	g.message("20251102_2", "msg_20251102_2_d", "assistant", T+3615, `[{"type":"text","text":"Fixed by starting at 0."}]`)
	g.usage("20251102_2", 7000, 120, 0.012)
	if err := g.DB.Close(); err != nil {
		t.Fatal(err)
	}

	got := syncWant(t, h, dir, "sync", map[string]int{"new": 2})
	fork := ""
	for _, id := range got["new"] {
		if b := runText(t, h, id); strings.Contains(b, `"session_id":"20251102_2"`) {
			fork = id
			if strings.Contains(b, "Run the tests.") || !strings.Contains(b, "Fix it another way.") {
				t.Errorf("the copy's run: want its own prompt and not the original's:\n%s", b)
			}
		}
	}
	if fork == "" {
		t.Fatalf("no run of the copy among %v", got)
	}
	if u := usageTotal(t, h); u.Sessions != 2 || u.Output != 420 {
		t.Errorf("usage --json: %d sessions, %d output tokens; want 2, 420", u.Sessions, u.Output)
	}
	tools, forkTools := lsTools(t, h, fork)
	if tools != 3 || forkTools != 1 {
		t.Errorf("ls --json: %d tool calls in all, the copy's run %d; want 3, 1", tools, forkTools)
	}
}

// TestSyncGooseLegacyImported: the first Goose with sessions.db imports
// every session file of the Goose before it into the database under the
// file's name (block/goose session_manager.rs import_legacy and
// legacy.rs load_session: the metadata's counters, the file's time as
// created_at, the messages as they were) and leaves the files. The file
// store is keyed (abi.StoreSessionKey): a session in both is archived
// once, from the database (the file skipped), and a file the database
// does not hold is archived from the file. Before, the imported session
// was archived from each, its turns counted twice.
func TestSyncGooseLegacyImported(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dir := filepath.Join(h.Dir, ".local", "share", "goose", "sessions")
	const T = 1735725600 // 2025-01-01 10:00:00
	legacy := func(prompt, answer string, at int64) []byte {
		return []byte(`{"working_dir":"/home/me/site","description":"Build the site","schedule_id":null,"message_count":2,"total_tokens":900,"input_tokens":800,"output_tokens":100}` + "\n" +
			`{"id":null,"role":"user","created":` + strconv.FormatInt(at, 10) + `,"content":[{"type":"text","text":"` + prompt + `"}]}` + "\n" +
			`{"id":null,"role":"assistant","created":` + strconv.FormatInt(at+2, 10) + `,"content":[{"type":"text","text":"` + answer + `"}]}` + "\n")
	}
	h.Put(filepath.Join(".local", "share", "goose", "sessions", "20250101_100000.jsonl"), legacy("Imported prompt.", "Imported answer.", T), 48*time.Hour)
	h.Put(filepath.Join(".local", "share", "goose", "sessions", "20250102_100000.jsonl"), legacy("Only in a file.", "Its answer.", T+86400), 48*time.Hour)
	g := openGooseDB(t, filepath.Join(dir, "sessions.db"))
	g.Schema("goose")
	g.session("20250101_100000", "", "user")
	g.Exec(`UPDATE sessions SET working_dir = '/home/me/site', created_at = datetime(?, 'unixepoch'), updated_at = datetime(?, 'unixepoch'), total_tokens = 900, input_tokens = 800, output_tokens = 100 WHERE id = '20250101_100000'`, T, T+2)
	g.message("20250101_100000", "msg_20250101_100000_a", "user", T, `[{"type":"text","text":"Imported prompt."}]`)
	g.message("20250101_100000", "msg_20250101_100000_b", "assistant", T+2, `[{"type":"text","text":"Imported answer."}]`)
	if err := g.DB.Close(); err != nil {
		t.Fatal(err)
	}
	got := syncWant(t, h, dir, "sync", map[string]int{"new": 2, "skipped": 1})
	prompts := 0
	for _, id := range got["new"] {
		prompts += strings.Count(runText(t, h, id), `"text":"Imported prompt.","origin":"prompt"`)
	}
	if prompts != 1 {
		t.Errorf("the imported session's prompt is in %d runs' prompts; want 1", prompts)
	}
	syncWant(t, h, dir, "second sync", nothing)
}

// TestSyncGooseRecordedCountedOnce: `goose run --output-format
// stream-json` (without --quiet) prints a banner naming its session
// before the events, then the events and the session's counters; Goose
// writes the same session into sessions.db. A run recorded from that
// output and the run sync archives from the database are two runs of
// one session: `usage` and `stats --all` count its tokens once, in the
// archived run, and `ls` lists that run only. Before, both counted (600
// output tokens for 300). A recorded run of another session still counts.
func TestSyncGooseRecordedCountedOnce(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	const T = 1762077600
	stream := func(session string) string {
		return "starting session | provider: anthropic model: claude-sonnet-4-5\n    session id: " + session + "\n    working directory: /home/me/proj\n" +
			`{"type":"message","message":{"id":"chatcmpl-1","role":"assistant","created":` + strconv.Itoa(T+2) + `,"content":[{"type":"text","text":"Done."}],"metadata":{"userVisible":true,"agentVisible":true}}}` + "\n" +
			`{"type":"complete","total_tokens":5300,"input_tokens":5000,"output_tokens":300}` + "\n"
	}
	for _, s := range []string{"20251102_1", "20251103_9"} {
		in := filepath.Join(h.Dir, s+".stream.jsonl")
		if err := os.WriteFile(in, []byte(stream(s)), 0o644); err != nil {
			t.Fatal(err)
		}
		h.OK("record", "--provider", "goose", "--input", in)
	}
	dir := filepath.Join(h.Dir, ".local", "share", "goose", "sessions")
	g := openGooseDB(t, filepath.Join(dir, "sessions.db"))
	g.Schema("goose")
	g.session("20251102_1", "", "user")
	g.message("20251102_1", "msg_1", "user", T, `[{"type":"text","text":"Run the tests."}]`)
	g.message("20251102_1", "msg_2", "assistant", T+2, `[{"type":"text","text":"Done."}]`)
	g.usage("20251102_1", 5000, 300, 0.021)
	if err := g.DB.Close(); err != nil {
		t.Fatal(err)
	}
	syncWant(t, h, dir, "sync", map[string]int{"new": 1})
	if u := usageTotal(t, h); u.Sessions != 2 || u.Output != 600 {
		t.Errorf("usage --json: %d sessions, %d output tokens; want 2, 600 (the synced session once, the other recorded one)", u.Sessions, u.Output)
	}
	if n := strings.Count(strings.TrimSpace(h.OK("ls", "--json").Out), "\n") + 1; n != 2 {
		t.Errorf("ls --json lists %d runs, want 2 (the archived session, the other recorded one)", n)
	}
}
