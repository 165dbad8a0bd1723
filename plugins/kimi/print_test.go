//go:build !wasip1

package kimi_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
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
			o := plugintest.Run(t, kimi.Plugin, []byte(msgs+tt.tail), normalize.Options{Provider: "kimi"})
			r := o.Result
			if r.Status != tt.status || !strings.Contains(r.Error, tt.errText) {
				t.Errorf("status %q (%q); want %q holding %q", r.Status, r.Error, tt.status, tt.errText)
			}
			if len(r.Errors) != tt.errors {
				t.Errorf("errors %v; want %d", r.Errors, tt.errors)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
		})
	}
}
