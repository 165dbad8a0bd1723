//go:build !wasip1

package kimi_test

import (
	"strings"
	"testing"
)

// TestRepeatForceStop: the Kimi CLI stops a turn itself when the model
// calls the same tool with the same arguments a twelfth time in a row
// across steps (MoonshotAI/kimi-cli 4a550ef, soul/toolset.py
// _REPEAT_FORCE_STOP_STREAK, the call's result followed by the dead-end
// reminder _REMINDER_TEXT_3; soul/kimisoul.py: StepOutcome stop_reason
// "tool_call_repeat", the turn ends with no further model call). The
// wire log states it so: the reminder at the end of the turn's last
// result, then TurnEnd. The turn did not do what was asked: an error.
// The same reminder with a later step (the 8th to 11th repeat, a
// warning to the model) changes nothing, and so does a turn that ends
// on another result. Before, such a session read ok.
func TestRepeatForceStop(t *testing.T) {
	const reminder = `\n\n<system-reminder>\nYou are stuck in a dead end and have repeatedly made the same function call without progress.\nStop all function calls immediately. Do not call any tool in your next response.\nIn analysis, review the current execution state and identify why progress is blocked.\nThen return a text-only summary to the user that reports the current problem, what has already been tried, and what information or decision is needed next.\n</system-reminder>`
	meta := `{"type": "metadata", "protocol_version": "1.10"}`
	begin := legacyRec("TurnBegin", `{"user_input":"Make the build pass."}`)
	step := func(n string) string { return legacyRec("StepBegin", `{"n":`+n+`}`) }
	call := legacyRec("ToolCall", `{"type":"function","id":"Shell:11","function":{"name":"Shell","arguments":"{\"command\": \"make\"}"},"extras":null}`)
	result := func(output string) string {
		return legacyRec("ToolResult", `{"tool_call_id":"Shell:11","return_value":{"is_error":false,"output":"`+output+`","message":"","display":[],"extras":null}}`)
	}
	parts := func(output string) string {
		return legacyRec("ToolResult", `{"tool_call_id":"Shell:11","return_value":{"is_error":false,"output":[{"type":"text","text":"`+output+`"}],"message":"","display":[],"extras":null}}`)
	}
	answer := legacyRec("ContentPart", `{"type":"text","text":"The build keeps failing on the same error."}`)
	end := legacyRec("TurnEnd", `{}`)
	tests := []struct {
		name   string
		lines  []string
		status string
	}{
		{"the reminder, then the turn's end", []string{meta, begin, step("12"), call, result("make: *** [all] Error 2" + reminder), end}, "error"},
		{"the reminder in the last text part, then the turn's end", []string{meta, begin, step("12"), call, parts("make: *** [all] Error 2" + reminder), end}, "error"},
		{"the reminder, then the model's answer", []string{meta, begin, step("8"), call, result("make: *** [all] Error 2" + reminder), step("9"), answer, end}, "ok"},
		{"another result, then the turn's end", []string{meta, begin, step("1"), call, result("make: *** [all] Error 2"), end}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runLegacy(t, tt.lines)
			if r.Step.Status != tt.status {
				t.Errorf("status %q (%q); want %q", r.Step.Status, r.Step.Error, tt.status)
			}
			if tt.status == "error" && !strings.Contains(r.Step.Error, "tool_call_repeat") {
				t.Errorf("error %q; want it to name tool_call_repeat", r.Step.Error)
			}
		})
	}
}
