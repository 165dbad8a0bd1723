package archive

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/plugins/crush"
	"github.com/twasm/twasm/transcript"
)

// crushDB is Crush's crush.db at path, made from its migrations' schema
// (plugins/crush/testdata/schema.sql) with the pure-Go driver, in WAL
// mode as Crush opens it.
type crushDB struct {
	t  *testing.T
	db *sql.DB
}

func openCrushDB(t *testing.T, path string) *crushDB {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "plugins", "crush", "testdata", "schema.sql"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(0)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	_, err = db.Exec(string(schema))
	require.NoError(t, err)
	return &crushDB{t: t, db: db}
}

// crushHome is a storage root and a home holding Crush's global
// database (~/.local/share/crush/.crush/crush.db), empty.
func crushHome(t *testing.T) (root, home, dbPath string, agent *crushDB) {
	t.Helper()
	root, home = t.TempDir(), t.TempDir()
	dbPath = filepath.Join(home, ".local", "share", "crush", ".crush", "crush.db")
	return root, home, dbPath, openCrushDB(t, dbPath)
}

func (c *crushDB) exec(q string, args ...any) {
	c.t.Helper()
	_, err := c.db.Exec(q, args...)
	require.NoError(c.t, err)
}

// message writes a message as Crush's CreateMessage and UpdateMessage
// do: the same id again rewrites its parts and updated_at in place.
func (c *crushDB) message(id, session, role, parts string, created, updated int64) {
	c.exec(`INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, ?, ?, ?, 'gpt-5', 'openai', ?, ?)
ON CONFLICT(id) DO UPDATE SET parts = excluded.parts, updated_at = excluded.updated_at`, id, session, role, parts, created, updated)
	c.exec(`UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?`, updated, session)
}

// TestSyncCrush: Crush's store through the crush plugin and the host's
// SQLite reader: a database at ~/.local/share/crush/.crush/crush.db with
// a session and its sub-agent's session; the first sync archives both,
// the sub-agent's a child run of its parent's; the parent's cost is its
// own (Crush added the child's to it); a message Crush rewrites in place
// in the same second as the last sync (its parts grew while it
// streamed) and a tool message written then grow the parent's run only,
// with the call once and its result; a sync with nothing new archives
// nothing; the database and its log are byte-identical around every
// sync, and no file is added beside them.
func TestSyncCrush(t *testing.T) {
	ctx := context.Background()
	root, home, dbPath, agent := crushHome(t)
	const at = int64(1772359200)
	child := "m-a1$$call_agent1"
	agent.exec(`INSERT INTO sessions (id, title, cost, updated_at, created_at) VALUES ('ses_p', 'Fix the parser', 0.42, ?, ?)`, at, at)
	agent.exec(`INSERT INTO sessions (id, parent_session_id, title, cost, updated_at, created_at) VALUES (?, 'ses_p', 'Find the test', 0.3, ?, ?)`, child, at+1, at+1)
	agent.message("m-u1", "ses_p", "user", `[{"type":"text","data":{"text":"Fix the failing parser test"}}]`, at, at)
	agent.message("m-a1", "ses_p", "assistant", `[{"type":"tool_call","data":{"id":"call_agent1","name":"agent","input":"{\"prompt\":\"Find the test\"}","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1772359201}}]`, at, at+1)
	agent.message("c-u1", child, "user", `[{"type":"text","data":{"text":"Find the test"}}]`, at+1, at+1)
	agent.message("c-a1", child, "assistant", `[{"type":"text","data":{"text":"TestParseEmpty fails."}},{"type":"finish","data":{"reason":"end_turn","time":1772359202}}]`, at+1, at+2)
	agent.message("m-t1", "ses_p", "tool", `[{"type":"tool_result","data":{"tool_call_id":"call_agent1","name":"agent","content":"TestParseEmpty fails.","is_error":false}}]`, at+2, at+2)
	agent.message("m-a2", "ses_p", "assistant", `[{"type":"text","data":{"text":"Running"}}]`, at+3, at+3)

	a := newArchiver(t, root, nil)
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(crush.Plugin.Manifest), nil)
	require.Len(t, locs, 2)
	assert.Contains(t, locs[1].Unusable, "projects.json: not found", "no projects.json beside the database: said, not read")
	locs = locs[:1]
	dir := filepath.Dir(dbPath)
	sync := func() []Outcome {
		t.Helper()
		before := dirSnapshot(t, dir)
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		// The agent has the database open: a reader's mark is in the
		// WAL index; the database, its log and the listing are the same.
		after := dirSnapshot(t, dir)
		assert.Equal(t, before["crush.db"], after["crush.db"])
		assert.Equal(t, before["crush.db-wal"], after["crush.db-wal"])
		assert.Equal(t, keysOf(before), keysOf(after), "no file added")
		return rep.Outcomes
	}
	for _, o := range sync() {
		require.Equal(t, ActionNew, o.Action, o.Reason)
	}
	parent, sub := a.ledger.ByPath(dbSessionPath(dbPath, "ses_p")), a.ledger.ByPath(dbSessionPath(dbPath, child))
	require.NotNil(t, parent)
	require.NotNil(t, sub)
	assert.Equal(t, parent.RunID, sub.Parent)
	read := func(runID string) string {
		t.Helper()
		fsys := os.DirFS(filepath.Join(root, "transcripts"))
		rep, err := transcript.ValidateFile(fsys, runID+".jsonl", transcript.ValidateOptions{})
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%s: %+v", runID, rep.Errors)
		b, err := os.ReadFile(filepath.Join(root, "transcripts", runID+".jsonl"))
		require.NoError(t, err)
		return string(b)
	}
	costs := func(runID string) []float64 {
		var out []float64
		for _, l := range strings.Split(read(runID), "\n") {
			var e struct {
				Type    string `json:"type"`
				Payload struct {
					Result struct {
						CostUSD *float64 `json:"cost_usd"`
					} `json:"result"`
				} `json:"payload"`
			}
			if json.Unmarshal([]byte(l), &e) == nil && e.Type == "step.completed" && e.Payload.Result.CostUSD != nil {
				out = append(out, *e.Payload.Result.CostUSD)
			}
		}
		return out
	}
	assert.InDeltaSlice(t, []float64{0.12}, costs(parent.RunID), 1e-9, "the parent's own cost")
	assert.InDeltaSlice(t, []float64{0.3}, costs(sub.RunID), 1e-9)

	// Crush goes on streaming m-a2 in the same second, then writes a
	// call and its result.
	agent.message("m-a2", "ses_p", "assistant", `[{"type":"text","data":{"text":"Running the tests"}},{"type":"tool_call","data":{"id":"call_bash1","name":"bash","input":"{\"command\":\"go test ./...\"}","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1772359203}}]`, at+3, at+3)
	agent.message("m-t2", "ses_p", "tool", `[{"type":"tool_result","data":{"tool_call_id":"call_bash1","name":"bash","content":"FAIL\n\nExit code 1","is_error":false}}]`, at+3, at+3)
	outs := sync()
	require.Len(t, outs, 2)
	for _, o := range outs {
		if o.Path == dbSessionPath(dbPath, "ses_p") {
			assert.Equal(t, ActionGrown, o.Action, o.Reason)
		} else {
			assert.Equal(t, ActionUnchanged, o.Action, o.Reason)
		}
	}
	tr := read(parent.RunID)
	assert.Equal(t, 1, strings.Count(tr, `"name":"bash","call_id":"call_bash1","input"`), "the bash call once")
	assert.Equal(t, 1, strings.Count(tr, `"call_id":"call_agent1","input"`), "the agent call once")
	assert.Contains(t, tr, `"exit_code":1`)
	for _, o := range sync() {
		assert.Equal(t, ActionUnchanged, o.Action, o.Reason)
	}
}

// TestSyncCrushReusedCallID: a model that names every call call_1 (some
// OpenAI-compatible servers count calls from 1 in every response), its
// second turn synced after the first. The second turn's call_1 is a call
// of its own with its own result, though the first part already holds a
// call_1 and its result; the first turn's rows that come again (read in
// the cursor's second, unchanged) are not written twice.
func TestSyncCrushReusedCallID(t *testing.T) {
	ctx := context.Background()
	root, home, dbPath, agent := crushHome(t)
	const at = int64(1772359200)
	call := func(cmd string) string {
		return `[{"type":"tool_call","data":{"id":"call_1","name":"bash","input":"{\"command\":\"` + cmd + `\"}","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1772359201}}]`
	}
	result := func(out string) string {
		return `[{"type":"tool_result","data":{"tool_call_id":"call_1","name":"bash","content":"` + out + `","is_error":false}}]`
	}
	agent.exec(`INSERT INTO sessions (id, title, cost, updated_at, created_at) VALUES ('ses_r', 'Two turns', 0, ?, ?)`, at, at)
	agent.message("m-u1", "ses_r", "user", `[{"type":"text","data":{"text":"List the files"}}]`, at, at)
	agent.message("m-a1", "ses_r", "assistant", call("ls"), at, at+1)
	agent.message("m-t1", "ses_r", "tool", result("go.mod"), at+1, at+1)
	agent.message("m-a2", "ses_r", "assistant", `[{"type":"text","data":{"text":"One file."}},{"type":"finish","data":{"reason":"end_turn","time":1772359201}}]`, at+1, at+1)

	a := newArchiver(t, root, nil)
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(crush.Plugin.Manifest), nil)[:1]
	for _, o := range a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes {
		require.Equal(t, ActionNew, o.Action, o.Reason)
	}
	run := a.ledger.ByPath(dbSessionPath(dbPath, "ses_r"))
	require.NotNil(t, run)

	// The second turn, in the same second as the first's last rows (so
	// those are read again), its call named call_1 again, the same
	// command with the same output (as in the capture the case comes
	// from: lazyagents' Crush 0.96.1 fixture).
	agent.message("m-u2", "ses_r", "user", `[{"type":"text","data":{"text":"Where am I?"}}]`, at+1, at+1)
	agent.message("m-a3", "ses_r", "assistant", call("ls"), at+1, at+1)
	agent.message("m-t2", "ses_r", "tool", result("go.mod"), at+1, at+1)
	agent.message("m-a4", "ses_r", "assistant", `[{"type":"text","data":{"text":"In your home."}},{"type":"finish","data":{"reason":"end_turn","time":1772359201}}]`, at+1, at+1)
	outs := a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes
	require.Len(t, outs, 1)
	require.Equal(t, ActionGrown, outs[0].Action, outs[0].Reason)

	fsys := os.DirFS(filepath.Join(root, "transcripts"))
	rep, err := transcript.ValidateFile(fsys, run.RunID+".jsonl", transcript.ValidateOptions{})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Errors)
	b, err := os.ReadFile(filepath.Join(root, "transcripts", run.RunID+".jsonl"))
	require.NoError(t, err)
	var calls, results []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Type    string `json:"type"`
			Payload struct {
				CallID string          `json:"call_id"`
				Input  json.RawMessage `json:"input"`
				Output string          `json:"output"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &e))
		switch e.Type {
		case "tool.call":
			calls = append(calls, e.Payload.CallID+" "+string(e.Payload.Input))
		case "tool.result":
			results = append(results, e.Payload.CallID+" "+e.Payload.Output)
		}
	}
	assert.Equal(t, []string{`call_1 {"command":"ls"}`, `call_1 {"command":"ls"}`}, calls, "each turn's call once")
	assert.Equal(t, []string{"call_1 go.mod", "call_1 go.mod"}, results, "each call's own result once")
}

// TestFailedSubAgent: Crush adds a sub-agent's cost to its parent's
// only when the sub-agent ran to its end (internal/llm/agent/agent-tool.go
// before 2025-11, coordinator.runSubAgent since): a sub-agent that failed
// (old Crush: the agent tool's Go error, an empty result; "no response";
// "error generating response"; "Failed to generate response: ...") or
// still runs (no result yet) left the parent's cost as it was. The
// session row's children_cost (what the plugin takes out of the parent's
// cost) sums the children whose call the parent's results say ended, by
// the query the host runs; a failed child's cost left in made the parent
// read $0 (jbpratt/quay's capture).
func TestFailedSubAgent(t *testing.T) {
	for _, tc := range []struct {
		name, child, result string // result "": none yet
		isError             bool
		want                float64
	}{
		{name: "ended", child: "call_a", result: "TestParseEmpty fails.", want: 0.3},
		{name: "ended, id of message and call", child: "m-a1$$call_a", result: "TestParseEmpty fails.", want: 0.3},
		{name: "ended with no text", child: "m-a1$$call_a", result: "Sub-agent completed but produced no text output.", isError: true, want: 0.3},
		{name: "failed, empty result (agent tool's error)", child: "call_a", result: "\x00", want: 0},
		{name: "failed, no response", child: "call_a", result: "no response", isError: true, want: 0},
		{name: "failed, error generating response", child: "m-a1$$call_a", result: "error generating response", isError: true, want: 0},
		{name: "failed, provider error", child: "m-a1$$call_a", result: "Failed to generate response: 413 Prompt is too long", isError: true, want: 0},
		{name: "still running", child: "m-a1$$call_a", want: 0},
		{name: "another call's result", child: "m-a1$$call_b", result: "TestParseEmpty fails.", want: 0},
		{name: "a call id that only ends the same", child: "m-a1$$xcall_a", result: "TestParseEmpty fails.", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openCrushDB(t, filepath.Join(t.TempDir(), "crush.db"))
			const at = int64(1772359200)
			db.exec(`INSERT INTO sessions (id, title, cost, updated_at, created_at) VALUES ('ses_p', 'p', 0.2, ?, ?)`, at, at)
			db.exec(`INSERT INTO sessions (id, parent_session_id, title, cost, updated_at, created_at) VALUES (?, 'ses_p', 'c', 0.3, ?, ?)`, tc.child, at, at)
			db.exec(`INSERT INTO sessions (id, parent_session_id, title, cost, updated_at, created_at) VALUES ('title-ses_p', 'ses_p', 't', 0.01, ?, ?)`, at, at)
			db.message("m-a1", "ses_p", "assistant", `[{"type":"tool_call","data":{"id":"call_a","name":"agent","input":"{}","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1}}]`, at, at)
			db.message("m-t0", "ses_p", "tool", `not json`, at, at)
			if tc.result != "" {
				content := tc.result
				if content == "\x00" {
					content = ""
				}
				part, err := json.Marshal([]map[string]any{{"type": "tool_result", "data": map[string]any{"tool_call_id": "call_a", "name": "", "content": content, "metadata": "", "is_error": tc.isError}}})
				require.NoError(t, err)
				db.message("m-t1", "ses_p", "tool", string(part), at, at)
			}
			q := crush.Queries.Tables[0]
			require.Equal(t, "sessions", q.Table)
			rows, err := db.db.Query(q.Query, sql.Named("session", "ses_p"))
			require.NoError(t, err)
			defer rows.Close()
			cols, err := rows.Columns()
			require.NoError(t, err)
			require.True(t, rows.Next())
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			require.NoError(t, rows.Err())
			got := map[string]any{}
			for i, c := range cols {
				got[c] = vals[i]
			}
			require.Contains(t, got, "children_cost")
			assert.InDelta(t, tc.want, got["children_cost"], 1e-9)
		})
	}
}
