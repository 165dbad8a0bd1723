//go:build !wasip1

package kimi_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/transcript"
)

// TestPrintResumeHint: the Kimi CLI's print mode (kimi --print
// --output-format stream-json) writes kosong messages one a line, then
// "To resume this session: kimi -r <id>": that line names the session
// (it was counted unmapped as non_json, the step without a session id),
// and the messages are read as a context file's, a failed command an
// error.
func TestPrintResumeHint(t *testing.T) {
	raw := []byte(`{"role":"assistant","content":[{"type":"think","think":"Let me run it.","encrypted":null},{"type":"text","text":"I'll run it."}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\": \"false\"}"}}]}
{"role":"tool","content":[{"type":"text","text":"<system>ERROR: Command failed with exit code: 1.</system>"}],"tool_call_id":"tool_1"}
{"role":"assistant","content":[{"type":"text","text":"The command failed."}]}
To resume this session: kimi -r 4b1c6a2e-1111-4222-8333-944445555666
`)
	o := plugintest.Run(t, kimi.Plugin, raw, normalize.Options{Provider: "kimi"})
	r := o.Result
	if r.SessionID != "4b1c6a2e-1111-4222-8333-944445555666" {
		t.Errorf("session %q; want the resume hint's", r.SessionID)
	}
	if len(r.Unmapped) != 0 {
		t.Errorf("unmapped %v; want none", r.Unmapped)
	}
	if st, ok := o.ResultStatus("tool_1"); !ok || st != "error" {
		t.Errorf("tool_1 result %q (%v); want error", st, ok)
	}
}

// TestPrintEnd: how the Kimi CLI's print mode ended, when it says so on
// stdout after the messages (MoonshotAI/kimi-cli 4a550ef,
// src/kimi_cli/ui/print/__init__.py: "Interrupted by user" when the user
// stopped the run, RunCancelled on Ctrl+C; str(MaxStepsReached), "Max
// number of steps reached: N", when the turn ran out of steps; "Unknown
// error: ..." for any other exception; each with exit code 1): the
// user's stop leaves the run incomplete, the others are errors the CLI
// reported, listed among the step's errors, and none is counted
// unmapped. Before, each was counted unmapped as non_json and the run
// read ok.
func TestPrintEnd(t *testing.T) {
	const msgs = `{"role":"assistant","content":[{"type":"text","text":"I'll run the tests."}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\": \"pytest\"}"}}]}
{"role":"tool","content":[{"type":"text","text":"collected 3 items\n3 passed"}],"tool_call_id":"tool_1"}
{"role":"assistant","content":[{"type":"text","text":"All three pass."}]}
`
	tests := []struct {
		name, tail, status, errText string
		errors                      int
	}{
		{"the user's stop", "Interrupted by user\n", "incomplete", "Interrupted by user", 0},
		{"the user's stop, then the resume hint", "Interrupted by user\nTo resume this session: kimi -r 4b1c6a2e-1111-4222-8333-944445555666\n", "incomplete", "Interrupted by user", 0},
		{"out of steps", "Max number of steps reached: 100\n", "error", "Max number of steps reached: 100", 1},
		{"an unknown error", "Unknown error: boom\n", "error", "Unknown error: boom", 1},
		{"no end stated", "", "ok", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPrint(t, msgs+tt.tail, tt.status, tt.errText)
			if len(r.Errors) != tt.errors {
				t.Errorf("errors %v; want %d", r.Errors, tt.errors)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
		})
	}
}

// TestPrintOwnLines: every line the Kimi CLI's print mode (kimi --print
// --output-format stream-json) writes besides the model's messages is
// read for what it says (MoonshotAI/kimi-cli 4a550ef,
// src/kimi_cli/ui/print/__init__.py and visualize.py's JsonPrinter):
//   - the run's failure, printed as text after the messages with exit
//     code 1 (75 when retryable): str(LLMNotSet) "LLM not set",
//     str(LLMNotSupported) "LLM model '<name>' does not support required
//     capability: ...", and str(ChatProviderError), the provider's own
//     message ("Error code: 429 - ..."): an error the CLI reported, never
//     an unmapped line beside an ok run (a truncated message line, "{...",
//     stays unmapped);
//   - a Notification (wire/types.py: {id, category, type, source_kind,
//     source_id, title, body, severity, created_at, payload}), a
//     background task's end among others: severity error is an error the
//     CLI reported, any other is declared ignored, as in the wire log;
//   - a PlanDisplay ({content, file_path}): declared ignored, as in the
//     wire log;
//   - a tool result ending on the CLI's dead-end reminder with no model
//     call after it (the CLI stopped the turn, stop reason
//     tool_call_repeat, and the print mode exited 0): an error, as in the
//     wire log (TestRepeatForceStop); a model call after it goes on.
//
// Before, a provider error or an unsupported model read ok (or
// incomplete) with the line counted unmapped as non_json, a
// Notification was counted unmapped by its type (its error lost), a
// PlanDisplay as "(no type)", and a turn the CLI stopped read ok.
func TestPrintOwnLines(t *testing.T) {
	const (
		call   = `{"role":"assistant","content":[{"type":"text","text":"I'll run the tests."}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\": \"pytest\"}"}}]}` + "\n"
		result = `{"role":"tool","content":[{"type":"text","text":"collected 3 items\n3 passed"}],"tool_call_id":"tool_1"}` + "\n"
		answer = `{"role":"assistant","content":[{"type":"text","text":"All three pass."}]}` + "\n"
		failed = `{"id":"n1","category":"task","type":"task.failed","source_kind":"background_task","source_id":"b1","title":"Background task failed","body":"Task ID: b1\nStatus: failed\nExit code: 2","severity":"error","created_at":1785000000.5,"payload":{"task_id":"b1","exit_code":2}}` + "\n"
		done   = `{"id":"n2","category":"task","type":"task.completed","source_kind":"background_task","source_id":"b2","title":"Background task completed","body":"Task ID: b2\nStatus: completed","severity":"info","created_at":1785000000.5,"payload":{"task_id":"b2","exit_code":0}}` + "\n"
		plan   = `{"content":"# Plan\n1. Run the tests.","file_path":"/w/.kimi/plans/p1.md"}` + "\n"
		stuck  = `{"role":"tool","content":[{"type":"text","text":"make: *** [all] Error 2\n\n<system-reminder>\nYou are stuck in a dead end and have repeatedly made the same function call without progress.\nStop all function calls immediately. Do not call any tool in your next response.\n</system-reminder>"}],"tool_call_id":"tool_1"}` + "\n"
	)
	tests := []struct {
		name, in, status, errText string
		errors                    int
		unmapped                  bool
	}{
		{"a provider error", call + result + "Error code: 429 - {'error': {'message': 'rate limited', 'type': 'rate_limit_reached_error'}}\n", "error", "Error code: 429", 1, false},
		{"a provider error, then the resume hint", call + result + "Connection error.\nTo resume this session: kimi -r 4b1c6a2e-1111-4222-8333-944445555666\n", "error", "Connection error.", 1, false},
		{"no model set", "LLM not set\n", "error", "LLM not set", 1, false},
		{"an unsupported model", "LLM model 'kimi-k2' does not support required capability: image_in.\n", "error", "does not support required capability", 1, false},
		{"a truncated message line", call + result + answer + `{"role":"assistant","content":[{"ty` + "\n", "ok", "", 0, true},
		{"a failed background task", call + result + failed + answer, "ok", "", 1, false},
		{"a failed background task, last", call + result + answer + failed, "error", "Status: failed", 1, false},
		{"a completed background task", call + result + done + answer, "ok", "", 0, false},
		{"a plan", plan + answer, "ok", "", 0, false},
		{"the CLI stopped the turn", call + stuck, "error", "tool_call_repeat", 1, false},
		{"the CLI stopped the turn, then a failed task", call + stuck + failed, "error", "tool_call_repeat", 2, false},
		{"the dead-end reminder, then the model's answer", call + stuck + answer, "ok", "", 0, false},
		{"context file: the CLI stopped the turn, then the next prompt", call + stuck + `{"role":"_checkpoint","id":3}` + "\n" + `{"role":"user","content":"Try again."}` + "\n" + answer, "ok", "", 1, false},
		{"context file: the dead-end reminder, a notice, then the model's answer", call + stuck + `{"role":"user","content":[{"type":"text","text":"<system>CHECKPOINT 3</system>"}]}` + "\n" + answer, "ok", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPrint(t, tt.in, tt.status, tt.errText)
			if len(r.Errors) != tt.errors {
				t.Errorf("errors %v; want %d", r.Errors, tt.errors)
			}
			if (len(r.Unmapped) != 0) != tt.unmapped {
				t.Errorf("unmapped %v; want some: %v", r.Unmapped, tt.unmapped)
			}
		})
	}
}

// TestPrintFailureAlone: a run of kimi --print --output-format
// stream-json whose first model call fails writes no message, only the
// error src/kimi_cli/ui/print/__init__.py prints (MoonshotAI/kimi-cli
// 4a550ef: print(str(e)) for a ChatProviderError, exit code 75 when
// retryable, else 1), with rich's print, which wraps a message wider than
// the console (80 columns with no terminal) over several lines; the
// resume hint may follow. The run is an error with the whole message,
// listed once. Before, the only line was counted unmapped as non_json and
// the run read incomplete with no error; a wrapped message after the
// messages was listed as two errors, the run's error its last fragment.
// Text before the messages is not the print mode's: counted unmapped.
func TestPrintFailureAlone(t *testing.T) {
	const (
		answer = `{"role":"assistant","content":[{"type":"text","text":"All three pass."}]}` + "\n"
		auth   = "Error code: 401 - {'error': {'message': 'Invalid Authentication', 'type': 'invalid_authentication_error'}}"
		wrap1  = "Error code: 401 - {'error': {'message': 'Invalid Authentication', 'type':"
		wrap2  = "'invalid_authentication_error'}}"
		hint   = "To resume this session: kimi -r 4b1c6a2e-1111-4222-8333-944445555666\n"
	)
	tests := []struct {
		name, in, status, errText string
		errors                    int
		unmapped                  int
	}{
		{"a provider error, alone", auth + "\n", "error", auth, 1, 0},
		{"a connection error, alone", "Connection error.\n", "error", "Connection error.", 1, 0},
		{"a provider error wrapped, alone", wrap1 + "\n" + wrap2 + "\n", "error", wrap1 + "\n" + wrap2, 1, 0},
		{"a provider error wrapped, then the resume hint", wrap1 + "\n" + wrap2 + "\n\n" + hint, "error", wrap1 + "\n" + wrap2, 1, 0},
		{"a provider error wrapped, after the messages", answer + wrap1 + "\n" + wrap2 + "\n", "error", wrap1 + "\n" + wrap2, 1, 0},
		{"the user's stop, alone", "Interrupted by user\n", "incomplete", "Interrupted by user", 0, 0},
		{"text before the messages", "some banner\nanother line\n" + answer, "ok", "", 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPrint(t, tt.in, tt.status, tt.errText)
			if len(r.Errors) != tt.errors || tt.errors == 1 && r.Errors[0].Message != tt.errText {
				t.Errorf("errors %v; want %d: %q", r.Errors, tt.errors, tt.errText)
			}
			if r.Unmapped["non_json"] != tt.unmapped || len(r.Unmapped) > 1 {
				t.Errorf("unmapped %v; want non_json %d", r.Unmapped, tt.unmapped)
			}
		})
	}
}

// runPrint normalizes the print mode's output in and checks the run's
// status and that its error holds errText.
func runPrint(t *testing.T, in, status, errText string) *transcript.AgentResult {
	t.Helper()
	r := plugintest.Run(t, kimi.Plugin, []byte(in), normalize.Options{Provider: "kimi"}).Result
	if r.Status != status || !strings.Contains(r.Error, errText) {
		t.Errorf("status %q (%q); want %q holding %q", r.Status, r.Error, status, errText)
	}
	return r
}
