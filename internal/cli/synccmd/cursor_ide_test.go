package synccmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// cursorIDEDB is the Cursor IDE's global state.vscdb as VS Code's storage
// writes it (its two key-value tables, values declared BLOB, WAL mode),
// written by the test as the IDE. The records' shapes are those peers'
// readers of the store pin (composerData with fullConversationHeadersOnly
// and subComposerIds; bubbles with type, text, thinking, toolFormerData
// {toolCallId, name, rawArgs|params, result, status}, tokenCount,
// modelInfo, createdAt): no licensed real database is public.
type cursorIDEDB struct{ *clitest.AgentDB }

func openCursorIDEDB(t *testing.T, path string) *cursorIDEDB {
	t.Helper()
	c := &cursorIDEDB{clitest.OpenAgentDB(t, path)}
	c.Exec(`CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`)
	c.Exec(`CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`)
	return c
}

func (c *cursorIDEDB) put(key, value string) {
	c.Exec(`INSERT INTO cursorDiskKV VALUES (?, ?)`, key, value)
}

// TestSyncCursorIDE: a home with the Cursor IDE's state.vscdb at its place
// (~/.config/Cursor/User/globalStorage, the IDE closed): doctor lists the
// store with its two composers, sync archives each as a run (the
// conversation in its headers' order, the model, a failed command an
// error with its exit code, a cancelled and a rejected call, a call still
// loading without a result, usage where a bubble counted it, the empty
// streaming bubbles ignored), the sub-composer a child run of its
// parent's; a second sync archives nothing; a new bubble and a result
// written into a bubble grow that run only, each call once; the
// database's directory is byte-identical throughout; renormalize rebuilds
// the run after the database is gone.
func TestSyncCursorIDE(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dir := filepath.Join(h.Dir, ".config", "Cursor", "User", "globalStorage")
	c := openCursorIDEDB(t, filepath.Join(dir, "state.vscdb"))
	c.put("composerData:c-main", `{"_v":3,"composerId":"c-main","name":"Fix the tests","createdAt":1767261600000,"lastUpdatedAt":1767261660000,"modelConfig":{"modelName":"claude-4.5-sonnet","maxMode":false},"subComposerIds":["c-sub"],"fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2},{"bubbleId":"b3","type":2},{"bubbleId":"b4","type":2},{"bubbleId":"b5","type":2},{"bubbleId":"b6","type":2},{"bubbleId":"b7","type":2},{"bubbleId":"b-null","type":2},{"bubbleId":"b-junk","type":2},{"bubbleId":"b-unwritten","type":2}]}`)
	c.put("bubbleId:c-main:b1", `{"_v":3,"bubbleId":"b1","type":1,"text":"Run the tests and fix what fails.","createdAt":"2026-01-01T10:00:00.000Z"}`)
	c.put("bubbleId:c-main:b2", `{"_v":3,"bubbleId":"b2","type":2,"text":"","createdAt":"2026-01-01T10:00:01.000Z"}`)
	c.put("bubbleId:c-main:b3", `{"_v":3,"bubbleId":"b3","type":2,"text":"Running them.","thinking":{"text":"Start with the suite."},"createdAt":"2026-01-01T10:00:02.000Z","modelInfo":{"modelName":"claude-4.5-sonnet"},"tokenCount":{"inputTokens":1200,"outputTokens":80},"toolFormerData":{"toolCallId":"toolu_01","name":"run_terminal_cmd","rawArgs":"{\"command\":\"go test ./...\",\"is_background\":false}","status":"error","result":"{\"output\":\"--- FAIL: TestParse\\nFAIL\",\"exitCode\":1}"}}`)
	c.put("bubbleId:c-main:b4", `{"_v":3,"bubbleId":"b4","type":2,"text":"","createdAt":"2026-01-01T10:00:05.000Z","tokenCount":{"inputTokens":0,"outputTokens":0},"toolFormerData":{"toolCallId":"toolu_02","name":"read_file","params":"{\"targetFile\":\"parse.go\"}","status":"completed","result":"{\"contents\":\"package parse\"}"}}`)
	c.put("bubbleId:c-main:b5", `{"_v":3,"bubbleId":"b5","type":2,"createdAt":"2026-01-01T10:00:07.000Z","toolFormerData":{"toolCallId":"toolu_03","name":"run_terminal_cmd","rawArgs":"{\"command\":\"rm -rf build\"}","status":"rejected","userDecision":"rejected"}}`)
	c.put("bubbleId:c-main:b6", `{"_v":3,"bubbleId":"b6","type":2,"createdAt":"2026-01-01T10:00:08.000Z","toolFormerData":{"toolCallId":"toolu_04","name":"edit_file_v2","rawArgs":"{\"target_file\":\"parse.go\"}","status":"cancelled"}}`)
	c.put("bubbleId:c-main:b7", `{"_v":3,"bubbleId":"b7","type":2,"createdAt":"2026-01-01T10:00:09.000Z","toolFormerData":{"toolCallId":"toolu_05","name":"run_terminal_cmd","rawArgs":"{\"command\":\"go test ./parse\"}","status":"loading"}}`)
	// A bubble Cursor cleaned up (NULL), one no header names.
	c.Exec(`INSERT INTO cursorDiskKV VALUES ('bubbleId:c-main:gone', NULL)`)
	// Bubbles the headers name that hold no record: NULL (Cursor cleaned
	// it up, as 62 bubbles of a user's database: agentsview#1676) and a
	// damaged value; one with no row yet (b-unwritten) is not read. And
	// the composer that report names verbatim, NULL: the others sync.
	c.Exec(`INSERT INTO cursorDiskKV VALUES ('bubbleId:c-main:b-null', NULL)`)
	c.put("bubbleId:c-main:b-junk", `{"bubbleId":"b-junk","type":2,"text":"cut`)
	c.Exec(`INSERT INTO cursorDiskKV VALUES ('composerData:1bf6b690-2756-4be9-8cfd-033354f0e040', NULL)`)
	c.put("bubbleId:c-main:orphan", `{"bubbleId":"orphan","type":2,"text":"not in the conversation"}`)
	c.put("composerData:c-sub", `{"_v":3,"composerId":"c-sub","createdAt":1767261605000,"lastUpdatedAt":1767261606000,"fullConversationHeadersOnly":[{"bubbleId":"s1","type":1},{"bubbleId":"s2","type":2}]}`)
	c.Exec(`INSERT INTO cursorDiskKV VALUES ('bubbleId:c-sub:s1', CAST(? AS BLOB))`, `{"bubbleId":"s1","type":1,"text":"List the tests of the parser.","createdAt":"2026-01-01T10:00:05.500Z"}`)
	c.put("bubbleId:c-sub:s2", `{"bubbleId":"s2","type":2,"text":"parse_test.go holds three.","createdAt":"2026-01-01T10:00:06.000Z"}`)
	c.Exec(`INSERT INTO ItemTable VALUES ('workbench.panel.composerChatViewPane', '{}')`)
	if err := c.DB.Close(); err != nil { // the IDE exits: SQLite removes its log
		t.Fatal(err)
	}

	doctorLists(t, doctorStores(t, h, dir), "Cursor IDE", "sqlite", dir, 2)

	got := syncWant(t, h, dir, "first sync: want both composers new", map[string]int{"new": 2})
	run, sub := "", ""
	for _, id := range got["new"] {
		switch b := runText(t, h, id); {
		case strings.Contains(b, "Run the tests and fix what fails."):
			run = id
			for _, want := range []string{`"session_id":"c-main"`, `"model":"claude-4.5-sonnet"`, `"call_id":"toolu_01"`, `"exit_code":1`, `"status":"denied"`, `"status":"cancelled"`, `"output":"{\"contents\":\"package parse\"}"`, `"input_tokens":1200`, `"output_tokens":80`, `"timestamp":"2026-01-01T10:00:02.000Z"`, "Start with the suite."} {
				if !strings.Contains(b, want) {
					t.Errorf("run of c-main lacks %s:\n%s", want, b)
				}
			}
			if strings.Contains(b, "not in the conversation") || strings.Count(b, `"type":"tool.result"`) != 4 {
				t.Errorf("run of c-main: want the orphan bubble left out and 4 results (toolu_05 still loading):\n%s", b)
			}
			lostBubbles(t, b)
		case strings.Contains(b, "parse_test.go holds three."):
			sub = id
		}
	}
	if run == "" || sub == "" {
		t.Fatalf("runs: composer %q, sub-composer %q: %v", run, sub, got)
	}
	wantChildOf(t, h, sub, run, "the sub-composer")
	syncWant(t, h, dir, "second sync", nothing)

	// The IDE again: the loading call's result, an answer.
	c = openCursorIDEDB(t, filepath.Join(dir, "state.vscdb"))
	c.put("bubbleId:c-main:b7", `{"_v":3,"bubbleId":"b7","type":2,"createdAt":"2026-01-01T10:00:09.000Z","toolFormerData":{"toolCallId":"toolu_05","name":"run_terminal_cmd","rawArgs":"{\"command\":\"go test ./parse\"}","status":"completed","result":"{\"output\":\"ok parse\",\"exitCode\":0}"}}`)
	c.put("bubbleId:c-main:b8", `{"_v":3,"bubbleId":"b8","type":2,"text":"Fixed: an off-by-one.","createdAt":"2026-01-01T10:01:00.000Z"}`)
	c.Exec(`UPDATE cursorDiskKV SET value = json_set(CAST(value AS TEXT), '$.lastUpdatedAt', 1767261700000, '$.fullConversationHeadersOnly[#]', json('{"bubbleId":"b8","type":2}')) WHERE key = 'composerData:c-main'`)
	if err := c.DB.Close(); err != nil {
		t.Fatal(err)
	}
	b := syncGrown(t, h, dir, "third sync", run)
	for _, want := range []string{`"output":"ok parse"`, "Fixed: an off-by-one."} {
		if !strings.Contains(b, want) {
			t.Errorf("run %s lacks %q", run, want)
		}
	}
	if n := strings.Count(b, `"type":"tool.call"`); n != 5 {
		t.Errorf("%d tool.calls, want each of the 5 calls once", n)
	}
	if n := strings.Count(b, "Run the tests and fix what fails."); n != 1 {
		t.Errorf("the prompt is archived %d times", n)
	}
	lostBubbles(t, b)

	// The database gone, the run is rebuilt from its raw capture.
	if err := os.Remove(filepath.Join(dir, "state.vscdb")); err != nil {
		t.Fatal(err)
	}
	r := h.OK("renormalize", run)
	re := clitest.TranscriptPath(h.Stor, strings.TrimSpace(r.Out))
	clitest.Validate(t, re)
	if rb := string(clitest.ReadFile(t, re)); !strings.Contains(rb, `"output":"ok parse"`) || !strings.Contains(rb, "Fixed: an off-by-one.") {
		t.Errorf("the renormalized run lacks the later part: %v", r)
	}
}

// lostBubbles checks the run of c-main says, once each in its steps'
// results, that the messages its headers list whose rows hold no record
// are left out, and says nothing of the one with no row.
func lostBubbles(t *testing.T, run string) {
	t.Helper()
	var warnings []string
	for _, line := range strings.Split(strings.TrimSpace(run), "\n") {
		var ev struct {
			Type    string `json:"type"`
			Payload struct {
				Result struct {
					Warnings []string `json:"warnings"`
				} `json:"result"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev.Type == "step.completed" {
			warnings = append(warnings, ev.Payload.Result.Warnings...)
		}
	}
	for _, want := range []string{"cursor: message b-null of the conversation holds no record (NULL): it is left out", "cursor: message b-junk of the conversation holds a value that is not JSON: it is left out"} {
		if n := slices.Index(warnings, want); n < 0 || slices.Index(warnings[n+1:], want) >= 0 {
			t.Errorf("run of c-main: steps' warnings %q, want %q once", warnings, want)
		}
	}
	if strings.Contains(run, "b-unwritten") {
		t.Errorf("run of c-main names the bubble with no row yet:\n%s", run)
	}
}
