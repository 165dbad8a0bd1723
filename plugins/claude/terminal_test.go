//go:build !wasip1

package claude

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestTerminalReason: a result's terminal_reason (the Agent SDK's
// TerminalReason: why the query loop ended) says how the turn ended,
// whatever its subtype. A result that calls itself a success while the
// loop stopped on a limit or an error is an error naming the reason; one
// that stopped before the turn was done (a hook ended it, a call was
// deferred, the turn went to the background, a reason this plugin does
// not know) is incomplete; completed (or none) is ok.
func TestTerminalReason(t *testing.T) {
	const init = `{"type":"system","subtype":"init","session_id":"s","model":"claude-opus-4-7","cwd":"/w","tools":["Bash"]}` + "\n"
	result := func(subtype string, isErr bool, reason, text string) string {
		tr := ""
		if reason != "" {
			tr = `,"terminal_reason":"` + reason + `"`
		}
		e := "false"
		if isErr {
			e = "true"
		}
		return init + `{"type":"result","subtype":"` + subtype + `","is_error":` + e + `,"num_turns":3,"result":"` + text + `","stop_reason":"end_turn","session_id":"s","total_cost_usd":0.01,"usage":{"input_tokens":1,"output_tokens":1}` + tr + "}\n"
	}
	tests := []struct {
		name    string
		input   string
		status  string
		errText []string // each held by the step's error
		final   string   // the step's final answer
	}{
		{"completed is ok", result("success", false, "completed", "Done."), "ok", nil, "Done."},
		{"no reason is ok", result("success", false, "", "Done."), "ok", nil, "Done."},
		{"aborted_tools is incomplete", result("success", false, "aborted_tools", ""), "incomplete", []string{"terminal_reason aborted_tools"}, ""},
		{"a PostToolUse hook stopped the turn", result("success", false, "hook_stopped", "Edited."), "incomplete", []string{"terminal_reason hook_stopped"}, ""},
		{"a Stop hook prevented the end", result("success", false, "stop_hook_prevented", "Edited."), "incomplete", []string{"terminal_reason stop_hook_prevented"}, ""},
		{"a call deferred to the host", result("success", false, "tool_deferred", ""), "incomplete", []string{"terminal_reason tool_deferred"}, ""},
		{"the turn sent to the background", result("success", false, "background_requested", "Working on it."), "incomplete", []string{"terminal_reason background_requested"}, ""},
		{"a reason not yet known", result("success", false, "quota_paused", "Partial."), "incomplete", []string{"terminal_reason quota_paused"}, ""},
		{"max_turns under a success subtype", result("success", false, "max_turns", "I have read the files."), "error", []string{"terminal_reason max_turns", "I have read the files."}, ""},
		{"budget_exhausted", result("success", false, "budget_exhausted", ""), "error", []string{"terminal_reason budget_exhausted"}, ""},
		{"prompt_too_long", result("success", false, "prompt_too_long", "Prompt is too long"), "error", []string{"terminal_reason prompt_too_long", "Prompt is too long"}, ""},
		{"api_error", result("success", false, "api_error", "API Error: 529 overloaded"), "error", []string{"terminal_reason api_error", "API Error: 529"}, ""},
		{"model_error", result("success", false, "model_error", ""), "error", []string{"terminal_reason model_error"}, ""},
		{"blocking_limit", result("success", false, "blocking_limit", ""), "error", []string{"terminal_reason blocking_limit"}, ""},
		{"rapid_refill_breaker", result("success", false, "rapid_refill_breaker", ""), "error", []string{"terminal_reason rapid_refill_breaker"}, ""},
		{"image_error", result("success", false, "image_error", ""), "error", []string{"terminal_reason image_error"}, ""},
		{"malformed_tool_use_exhausted", result("success", false, "malformed_tool_use_exhausted", ""), "error", []string{"terminal_reason malformed_tool_use_exhausted"}, ""},
		{"structured_output_retry_exhausted", result("success", false, "structured_output_retry_exhausted", ""), "error", []string{"terminal_reason structured_output_retry_exhausted"}, ""},
		{"tool_deferred_unavailable", result("success", false, "tool_deferred_unavailable", ""), "error", []string{"terminal_reason tool_deferred_unavailable"}, ""},
		{"turn_setup_failed", result("success", false, "turn_setup_failed", ""), "error", []string{"terminal_reason turn_setup_failed"}, ""},
		{"a message cut short, then api_error: the failure decides", init + `{"type":"assistant","message":{"id":"msg_a","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"Let me"}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":2}},"parent_tool_use_id":null,"aborted":true,"session_id":"s"}` + "\n" +
			strings.TrimPrefix(result("success", false, "api_error", "API Error: 500"), init), "error", []string{"terminal_reason api_error", "API Error: 500"}, ""},
		{"an error subtype keeps its text", result("error_max_turns", true, "max_turns", "Reached maximum number of turns (3)"), "error", []string{"Reached maximum number of turns (3)"}, ""},
		{"is_error with a reason that would be incomplete stays an error", result("success", true, "hook_stopped", "hook failed"), "error", []string{"hook failed"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), Plugin, "claude", []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if len(res.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines, want none", res.Unmapped, r.SilentN)
			}
			if res.Status != tt.status {
				t.Errorf("status %q (%q), want %q", res.Status, res.Error, tt.status)
			}
			for _, w := range tt.errText {
				if !strings.Contains(res.Error, w) {
					t.Errorf("error %q, want it to hold %q", res.Error, w)
				}
			}
			if tt.status == "ok" && res.Error != "" {
				t.Errorf("error %q on an ok turn", res.Error)
			}
			if res.FinalText != tt.final {
				t.Errorf("final %q, want %q", res.FinalText, tt.final)
			}
		})
	}
}
