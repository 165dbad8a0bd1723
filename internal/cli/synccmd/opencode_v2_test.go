package synccmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// openCodeV2Table is the message table of OpenCode's v2 runtime, as
// packages/core/src/session/sql.ts (SessionMessageTable, anomalyco/opencode
// at 02ce4a330f33fee005fb5a18c0e3ec6e1143caee) declares it: one row a
// message, data the message without its id and type (message.ts).
const openCodeV2Table = "CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL REFERENCES `session`(`id`) ON DELETE CASCADE, " +
	"`type` text NOT NULL, `seq` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)"

// v2message writes a message of the v2 runtime, or rewrites it in place
// (projector.ts updateMessage).
func (o *openCodeDB) v2message(id, session, typ string, seq, created, updated int64, data string) {
	o.Exec("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data",
		id, session, typ, seq, created, updated, data)
}

// TestSyncOpenCodeV2: a database OpenCode's v2 runtime wrote, whose
// messages are rows of session_message (the session table shared): sync
// archives a v2 session's turns (before, its run held the session's row
// alone), an older session the runtime copied into its table
// (message-backfill.ts, the copies' times as they were) and went on with
// holds each turn once, a message rewritten in place grows its run, and
// the database is byte-identical after every sync. A database without
// the table reads as before (TestSyncOpenCode).
func TestSyncOpenCodeV2(t *testing.T) {
	t.Parallel()
	h, dbDir, oc := openCodeHome(t)
	oc.Exec(openCodeV2Table)
	const T = 1764662400000
	// ses_v2: a session of the v2 runtime alone.
	oc.session("ses_v2", "", T)
	oc.v2message("msg_v2u", "ses_v2", "user", 1, T, T, fmt.Sprintf(`{"text":"Run the tests.","files":[],"agents":[],"references":[],"time":{"created":%d}}`, T))
	oc.v2message("msg_v2a", "ses_v2", "assistant", 2, T+1000, T+1000, fmt.Sprintf(`{"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[`+
		`{"type":"text","id":"txt_1","text":"Running them."},`+
		`{"type":"tool","id":"call_v2sh","name":"shell","state":{"status":"completed","input":{"command":"go test ./..."},"content":[{"type":"text","text":"FAIL"},{"type":"text","text":"Command exited with code 1."}],"structured":{"exit":1,"truncated":false},"outputPaths":[]},"time":{"created":%d,"ran":%d,"completed":%d}}`+
		`],"time":{"created":%d}}`, T+1100, T+1100, T+2000, T+1000))
	// ses_1: an older session (message and part rows), the v2 runtime's
	// copy of it, then a turn of the v2 runtime.
	oc.turnStarted(T)
	oc.part("prt_2b", "msg_2", "ses_1", T+1100, T+1100, `{"type":"text","text":"Two files: go.mod and main.go."}`)
	oc.Exec("UPDATE message SET data = ? WHERE id = 'msg_2'", fmt.Sprintf(`{"role":"assistant","time":{"created":%d,"completed":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic","finish":"stop"}`, T+1000, T+1200))
	oc.v2message("msg_bf1", "ses_1", "user", 1, T, T+9000, fmt.Sprintf(`{"text":"List the files.","time":{"created":%d}}`, T))
	oc.v2message("msg_bf2", "ses_1", "assistant", 2, T+1000, T+9000, fmt.Sprintf(`{"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[{"type":"text","id":"txt_bf","text":"Two files: go.mod and main.go."}],"finish":"stop","time":{"created":%d,"completed":%d}}`, T+1000, T+1200))
	oc.v2message("msg_n1", "ses_1", "user", 3, T+10000, T+10000, fmt.Sprintf(`{"text":"And the tests?","time":{"created":%d}}`, T+10000))
	if err := oc.DB.Close(); err != nil {
		t.Fatal(err)
	}
	got := syncWant(t, h, dbDir, "first sync", map[string]int{"new": 2})
	texts := map[string]string{}
	for _, run := range got["new"] {
		b := runText(t, h, run)
		switch {
		case strings.Contains(b, "Run the tests."):
			texts["ses_v2"] = run
			for _, want := range []string{"Running them.", `"exit_code":1`} {
				if !strings.Contains(b, want) {
					t.Errorf("the v2 session's run %s lacks %s", run, want)
				}
			}
		case strings.Contains(b, "List the files."):
			texts["ses_1"] = run
			if n := strings.Count(b, `"text":"Two files: go.mod and main.go."`); n != 1 {
				t.Errorf("the older session's answer is in its run %d times, want once (the v2 runtime's copy left out)", n)
			}
			if !strings.Contains(b, "And the tests?") {
				t.Errorf("the older session's run %s lacks the v2 runtime's prompt", run)
			}
		}
	}
	if len(texts) != 2 {
		t.Fatalf("runs %v: want one holding each session's turns", got)
	}

	// The v2 answer finishes: its row rewritten in place.
	oc = openOpenCodeDB(t, oc.Path)
	oc.v2message("msg_v2a", "ses_v2", "assistant", 2, T+1000, T+5000, fmt.Sprintf(`{"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[`+
		`{"type":"text","id":"txt_1","text":"Running them."},`+
		`{"type":"tool","id":"call_v2sh","name":"shell","state":{"status":"completed","input":{"command":"go test ./..."},"content":[{"type":"text","text":"FAIL"},{"type":"text","text":"Command exited with code 1."}],"structured":{"exit":1,"truncated":false},"outputPaths":[]},"time":{"created":%d,"ran":%d,"completed":%d}}`+
		`,{"type":"text","id":"txt_2","text":"One test fails."}],"finish":"stop","cost":0.01,"tokens":{"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":%d,"completed":%d}}`, T+1100, T+1100, T+2000, T+1000, T+5000))
	if err := oc.DB.Close(); err != nil {
		t.Fatal(err)
	}
	b := syncGrown(t, h, dbDir, "sync after the answer", texts["ses_v2"])
	if !strings.Contains(b, "One test fails.") {
		t.Errorf("run %s lacks the finished answer", texts["ses_v2"])
	}
	if st := lastPartStatus(t, clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, texts["ses_v2"]))); st != transcript.StatusOK {
		t.Errorf("after the answer: the run is %q, want ok", st)
	}
}
