//go:build !wasip1

package kimi_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// TestRefusedCall: a call that never ran because the user or a
// permission rule refused it is denied, one whose approval request was
// cancelled is cancelled, in both agents' words (Kimi Code:
// MoonshotAI/kimi-code d723cc47, agent-core-v2 toolApprovalService.ts
// formatApprovalRejectionMessage, the worker guidance a sub-agent's
// message ends with, user-configured-rule.ts; the Kimi CLI:
// soul/approval.py; a call a PreToolUse hook blocked, the brief "Hook
// blocked" of soul/toolset.py at 4a550ef); any other tool error is an
// error.
func TestRefusedCall(t *testing.T) {
	code := func(output string) string {
		return `{"type":"metadata","protocol_version":"1.5","created_at":1782012661212}` + "\n" +
			`{"type":"turn.prompt","input":[{"type":"text","text":"Delete the build"}],"origin":{"kind":"user"},"time":1782012666987}` + "\n" +
			`{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"step-1","turnId":"0","step":1},"time":1782012666989}` + "\n" +
			`{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"call-event","turnId":"0","step":1,"stepUuid":"step-1","toolCallId":"tool_1","name":"Bash","args":{"command":"rm -rf build"}},"time":1782012667000}` + "\n" +
			`{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"step-1","turnId":"0","step":1,"usage":{"inputOther":10,"output":3,"inputCacheRead":20,"inputCacheCreation":0},"finishReason":"tool_use"},"time":1782012667001}` + "\n" +
			`{"type":"context.append_loop_event","event":{"type":"tool.result","parentUuid":"call-event","toolCallId":"tool_1","result":{"output":` + output + `,"isError":true}},"time":1782012667002}` + "\n"
	}
	legacy := func(message string) string {
		return legacyRec("TurnBegin", `{"user_input":"Delete the build"}`) + "\n" +
			legacyRec("StepBegin", `{"n":1}`) + "\n" +
			legacyRec("ToolCall", `{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\":\"rm -rf build\"}"}}`) + "\n" +
			legacyRec("ToolResult", `{"tool_call_id":"tool_1","return_value":{"is_error":true,"output":"","message":`+message+`,"display":[]}}`) + "\n"
	}
	// A Kimi CLI tool error with its brief (kosong ToolError: display
	// [{"type":"brief","text":brief}]).
	briefed := func(message, brief string) string {
		return legacyRec("TurnBegin", `{"user_input":"Delete the build"}`) + "\n" +
			legacyRec("StepBegin", `{"n":1}`) + "\n" +
			legacyRec("ToolCall", `{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\":\"rm -rf build\"}"}}`) + "\n" +
			legacyRec("ToolResult", `{"tool_call_id":"tool_1","return_value":{"is_error":true,"output":"","message":`+message+`,"display":[{"type":"brief","text":`+brief+`}],"extras":null}}`) + "\n"
	}
	tests := []struct {
		name, in, status string
	}{
		{"code: the user rejected it", code(`"Tool \"Bash\" was not run because the user rejected the approval request."`), "denied"},
		{"code: the user rejected a sub-agent's call, with a reason", code(`"Tool \"Bash\" was not run because the user rejected the approval request. Reason: not now Try a different approach — don't retry the same call, don't attempt to bypass the restriction."`), "denied"},
		{"code: a permission rule", code(`"Tool \"Bash\" was denied by permission rule. Reason: no deletes"`), "denied"},
		{"code: a permission policy", code(`"Tool \"Bash\" was denied by permission policy."`), "denied"},
		{"code: the approval request was cancelled", code(`"Tool \"Bash\" was not run because the approval request was cancelled."`), "cancelled"},
		{"code: the user interrupted it", code(`"The user manually interrupted \"Bash\" (and anything else running at the same time). This was a deliberate user action, not a system error, timeout, or capacity limit. Do not retry automatically or guess at the cause — wait for the user's next instruction."`), "cancelled"},
		{"code: aborted", code(`"Tool \"Bash\" was aborted"`), "cancelled"},
		{"code: output that mentions an abort", code(`"psql: the transaction was aborted"`), "error"},
		{"code: the command failed", code(`"rm: build: Permission denied\nCommand failed with exit code: 1."`), "error"},
		{"cli: the user rejected it", legacy(`"The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed."`), "denied"},
		{"cli: the command failed", legacy(`"Command failed with exit code: 1."`), "error"},
		{"cli: killed at its timeout", legacy(`"Command killed by timeout (60s)"`), "cancelled"},
		{"cli: a PreToolUse hook blocked it, with its reason", briefed(`"rm -rf is not allowed in this repository"`, `"Hook blocked"`), "denied"},
		{"cli: a PreToolUse hook blocked it, no reason", briefed(`"Blocked by PreToolUse hook"`, `"Hook blocked"`), "denied"},
		{"cli: another error with a brief", briefed(`"No such file or directory"`, `"Failed to read file"`), "error"},
		{"code: killed at its timeout", code(`"started\nCommand killed by timeout (60s)"`), "cancelled"},
		{"code: killed at its timeout, the hint after it", code(`"Command killed by timeout (60s). If this is a long-running process such as a dev server, start it with run_in_background=true instead of running it in the foreground."`), "cancelled"},
		{"code: interrupted by the user", code(`"partial output\nInterrupted by user"`), "cancelled"},
		{"code: aborted before it started", code(`"Aborted before command started"`), "cancelled"},
		{"code: output that mentions a timeout mid-way", code(`"the step said Command killed by timeout (5s) earlier\nCommand failed with exit code: 1."`), "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), kimi.Plugin, "kimi", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := plugintest.FromResult(r).ResultStatus("tool_1"); !ok || got != tt.status {
				t.Errorf("result status %q (%v), want %q", got, ok, tt.status)
			}
		})
	}
}
