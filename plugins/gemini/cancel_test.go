//go:build !wasip1

package gemini_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestStreamCancelled: in stream-json the CLI writes every call that did
// not end in error as "success", a call it cancelled included
// (google-gemini/gemini-cli nonInteractiveCli.ts: status is
// completedToolCall.status === 'error' ? 'error' : 'success'; a
// cancelled call's response has no error). When the user cancels the
// run (Ctrl+C), the calls in flight are cancelled, their results written
// "success", and the next model call ends the run with the result
// {"status":"error","error":{"type":"FatalCancellationError","message":
// "Operation cancelled."}} (handleCancellationError). The results of the
// batch that the cancellation follows are cancelled, not ok, and the run
// is incomplete (the user stopped it; nothing failed), as is the
// --output-format json object of the cancellation. A batch whose results
// the model went on from stays as written.
func TestStreamCancelled(t *testing.T) {
	head := streamHead("Run the tests and the linter.")
	use := func(id, cmd string) string {
		return `{"type":"tool_use","timestamp":"2026-08-20T10:00:01.000Z","tool_name":"run_shell_command","tool_id":"` + id + `","parameters":{"command":"` + cmd + `"}}` + "\n"
	}
	ok := func(id, out string) string {
		return `{"type":"tool_result","timestamp":"2026-08-20T10:00:05.000Z","tool_id":"` + id + `","status":"success","output":"` + out + `"}` + "\n"
	}
	failed := func(id string) string {
		return `{"type":"tool_result","timestamp":"2026-08-20T10:00:05.000Z","tool_id":"` + id + `","status":"error","output":"","error":{"type":"shell_execute_error","message":"spawn /bin/sh ENOENT"}}` + "\n"
	}
	say := `{"type":"message","timestamp":"2026-08-20T10:00:06.000Z","role":"assistant","content":"Both ran.","delta":true}` + "\n"
	cancelled := `{"type":"result","timestamp":"2026-08-20T10:00:07.000Z","status":"error","error":{"type":"FatalCancellationError","message":"Operation cancelled."},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":2}}` + "\n"
	done := `{"type":"result","timestamp":"2026-08-20T10:00:07.000Z","status":"success","stats":{"total_tokens":10,"input_tokens":8,"output_tokens":2,"cached":0,"input":8,"duration_ms":7000,"tool_calls":2}}` + "\n"
	tests := []struct {
		name    string
		in      string
		status  string
		errText string
		results []string // "id status", in order
	}{
		{"a batch the cancellation follows", head + use("t1", "make test") + use("t2", "make lint") + ok("t1", "PASS") + ok("t2", "") + cancelled,
			"incomplete", "Operation cancelled.", []string{"t1 cancelled", "t2 cancelled"}},
		{"a failed call keeps its error", head + use("t1", "make test") + use("t2", "make lint") + failed("t1") + ok("t2", "") + cancelled,
			"incomplete", "Operation cancelled.", []string{"t1 error", "t2 cancelled"}},
		{"cancelled while the model answered: the batch before stays ok", head + use("t1", "make test") + ok("t1", "PASS") + say + cancelled,
			"incomplete", "Operation cancelled.", []string{"t1 ok"}},
		{"a batch the model went on from", head + use("t1", "make test") + use("t2", "make lint") + ok("t1", "PASS") + ok("t2", "") + say + done,
			"ok", "", []string{"t1 ok", "t2 ok"}},
		{"a batch and no more (the stream was cut)", head + use("t1", "make test") + ok("t1", "PASS"),
			"incomplete", "", []string{"t1 ok"}},
		{"--output-format json: the cancellation's error object", `{"session_id":"s1","error":{"type":"FatalCancellationError","message":"Operation cancelled.","code":130}}` + "\n",
			"incomplete", "Operation cancelled.", nil},
		{"a failed run is still an error", head + use("t1", "make test") + ok("t1", "PASS") +
			`{"type":"result","timestamp":"2026-08-20T10:00:07.000Z","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns"}}` + "\n",
			"error", "Reached max session turns", []string{"t1 ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runStatus(t, tt.in, tt.status, tt.errText)
			var got []string
			for _, e := range r.Events {
				if e.Event.Type != transcript.ToolResult {
					continue
				}
				p := e.Event.Tool()
				got = append(got, p.CallID+" "+p.Status)
				if p.Status == "cancelled" && !strings.Contains(p.Error, "cancelled") {
					t.Errorf("%s: cancelled without saying so: %q", p.CallID, p.Error)
				}
			}
			if !slices.Equal(got, tt.results) {
				t.Errorf("results %q, want %q", got, tt.results)
			}
		})
	}
}
