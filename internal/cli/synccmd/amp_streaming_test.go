package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestSyncAmpStreamingCall: `twasm sync` reads an Amp thread while the
// model still streams a tool call (its message's state streaming, the
// call's input half written); Amp then rewrites the thread with the
// message complete, the call's result and the answer. The first sync
// archives the run incomplete, the call dangling with the input read
// so far; the next sync grows the same run with a part holding the
// message and the call in their finished version (named in the part's
// source.changed), the call's one result and the answer: the run ok.
// The partial version stays a line of the first part, and the finished
// one is marked revised: read by transcript.Pairer's rule, as every
// reader does, it is one call, answered, not two with one dangling.
func TestSyncAmpStreamingCall(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	const (
		user   = `{"role":"user","messageId":0,"content":[{"type":"text","text":"Run the tests"}],"meta":{"sentAt":1772359200000}}`
		live   = `{"type":"streaming"}`
		done   = `{"type":"complete","stopReason":"tool_use"}`
		result = `{"role":"user","messageId":2,"content":[{"type":"tool_result","toolUseID":"toolu_1","run":{"status":"done","result":{"output":"ok  ./...","exitCode":0}}}],"meta":{"sentAt":1772359203000}}`
		answer = `{"role":"assistant","messageId":3,"content":[{"type":"text","text":"The tests pass."}],"state":{"type":"complete","stopReason":"end_turn"},"usage":{"model":"claude-sonnet-4-5","inputTokens":20,"outputTokens":6,"timestamp":"2026-03-01T10:00:04Z"}}`
		whole  = `{"cmd":"go test ./..."}`
	)
	asst := func(state, input string, out int) string {
		return `{"role":"assistant","messageId":1,"content":[{"type":"text","text":"Running them."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":` + input + `}],"state":` + state +
			`,"usage":{"model":"claude-sonnet-4-5","inputTokens":10,"outputTokens":` + strings.Repeat("5", out) + `,"timestamp":"2026-03-01T10:00:01Z"}}`
	}
	// Amp writes a thread pretty-printed, whole, at every change.
	thread := func(msgs ...string) []byte {
		var doc any
		if err := json.Unmarshal([]byte(`{"v":3,"id":"T-7d1e0d1a-2b3c-4d5e-8f90-0a1b2c3d4e5f","created":1772359200000,"messages":[`+strings.Join(msgs, ",")+"]}"), &doc); err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	rel := filepath.Join(".local", "share", "amp", "threads", "T-7d1e0d1a-2b3c-4d5e-8f90-0a1b2c3d4e5f.json")
	store := filepath.Join(h.Dir, ".local", "share", "amp")

	h.Put(rel, thread(user, asst(live, `{"cmd":"go te"}`, 1)), time.Hour)
	first := syncWant(t, h, store, "sync while the call streams", map[string]int{"new": 1})
	run := got0(t, first["new"])
	path := clitest.TranscriptPath(h.Stor, run)
	calls, results, status := ampCalls(t, path)
	if len(calls["toolu_1"]) != 1 || calls["toolu_1"][0] != `{"cmd":"go te"}` || len(results) != 0 || status != transcript.StatusIncomplete {
		t.Fatalf("after the first sync: calls %q, results %q, status %s; want the partial input, no result, incomplete", calls, results, status)
	}

	h.Put(rel, thread(user, asst(done, whole, 2), result, answer), 30*time.Minute)
	text := syncGrown(t, h, store, "sync once the call ended", run)
	if !strings.Contains(text, `"changed":["message 1","call toolu_1"]`) {
		t.Errorf("the second part does not name the call it holds in a new version (source.changed)")
	}
	calls, results, status = ampCalls(t, path)
	got := calls["toolu_1"]
	if len(got) == 0 || got[len(got)-1] != whole {
		t.Errorf("tool.calls of toolu_1 over the run's parts: %q, want the last one the finished input %s", got, whole)
	}
	if len(results["toolu_1"]) != 1 || results["toolu_1"][0] != transcript.StatusOK {
		t.Errorf("tool.results of toolu_1: %q, want one, ok", results["toolu_1"])
	}
	if status != transcript.StatusOK {
		t.Errorf("the run's last part: status %s, want ok", status)
	}
	if len(got) != 1 {
		t.Errorf("tool.calls of toolu_1: %q, want one call (its finished version a new version of it, revised)", got)
	}
	var marks []bool
	for _, ev := range clitest.ReadRun(t, path) {
		if ev.Type == transcript.ToolCall {
			marks = append(marks, ev.Tool().Revised())
		}
	}
	if len(marks) != 2 || marks[0] || !marks[1] {
		t.Errorf("tool.call lines marked revised: %v, want the finished version's alone", marks)
	}
}

// ampCalls reads a run's transcript: the input of each tool.call (of a
// revised call, its latest version's) and the status of each
// tool.result, by call id, over all of its parts, paired as every
// reader pairs them (transcript.Pairer), and the last part's status.
func ampCalls(t *testing.T, path string) (calls, results map[string][]string, status string) {
	t.Helper()
	clitest.Validate(t, path)
	calls, results = map[string][]string{}, map[string][]string{}
	r := readPaired(t, path)
	for _, c := range r.Calls {
		calls[c.ID] = append(calls[c.ID], c.Input)
		if c.Answered {
			results[c.ID] = append(results[c.ID], c.Status)
		}
	}
	return calls, results, r.Status
}
