//go:build !wasip1

package copilot_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestSDKEvents28: fields of the session events as @github/copilot-sdk
// 1.0.14 declares them (dist/generated/session-events.d.ts).
// tool.execution_complete's shellExecution.exitCode ("shell completion
// facts captured before the persisted result contents are stripped") is
// the command's exit code: a non-zero one makes a call the tool reported
// success an error, also when the output has no "<exited with exit
// code N>" line (before: ok, no exit code). assistant.usage's
// contentFilterTriggered (or finishReason content_filter) is an error
// the provider reported, as the OpenAI plugin reads a finish_reason
// content_filter (before: nothing said). An abort whose reason is
// autopilot_credit_limit (autopilot stopped at its --max-ai-credits
// limit) is an error, as Claude Code's error_max_budget_usd is (before:
// incomplete, as a user's abort).
func TestSDKEvents28(t *testing.T) {
	ev := func(typ, data string) string { return `{"type":"` + typ + `","data":` + data + `}` + "\n" }
	call := ev("user.message", `{"content":"run it"}`) +
		ev("assistant.message", `{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":{"command":"make test"}}]}`) +
		ev("tool.execution_start", `{"toolCallId":"c1","toolName":"bash","arguments":{"command":"make test"}}`)
	answer := ev("assistant.message", `{"messageId":"m2","content":"done"}`)
	tests := []struct {
		name, in     string
		status       string // the call's result status ("" no result checked)
		exit         int64  // its exit code (-1 none)
		errText      string // the result's error
		step, stepEr string // the step's status and error
	}{
		{"stated exit code 2, output stripped",
			call + ev("tool.execution_complete", `{"toolCallId":"c1","success":true,"result":{"content":"FAIL ./pkg\nmake: *** [test] Error 2"},"shellExecution":{"exitCode":2}}`) + answer,
			"error", 2, "exit code 2: make: *** [test] Error 2", "ok", ""},
		{"stated exit code 0",
			call + ev("tool.execution_complete", `{"toolCallId":"c1","success":true,"result":{"content":"ok"},"shellExecution":{"exitCode":0}}`) + answer,
			"ok", 0, "", "ok", ""},
		{"stated exit code beside the output's line",
			call + ev("tool.execution_complete", `{"toolCallId":"c1","success":true,"result":{"content":"boom\n<exited with exit code 1>"},"shellExecution":{"exitCode":1}}`) + answer,
			"error", 1, "exit code 1: boom", "ok", ""},
		{"content filter on the last call",
			ev("user.message", `{"content":"hi"}`) + answer + ev("assistant.usage", `{"model":"gpt-5","inputTokens":10,"outputTokens":2,"finishReason":"content_filter","contentFilterTriggered":true}`),
			"", -1, "", "error", "content_filter: the model's output was blocked or cut by the provider's content filter"},
		{"autopilot stopped at its credit limit",
			ev("user.message", `{"content":"fix all the bugs"}`) + ev("assistant.turn_start", `{"turnId":"0"}`) + ev("abort", `{"reason":"autopilot_credit_limit"}`) + ev("session.shutdown", `{"shutdownType":"routine"}`),
			"", -1, "", "error", "autopilot stopped the run: its objective reached the --max-ai-credits limit (abort autopilot_credit_limit)"},
		{"the user aborted",
			ev("user.message", `{"content":"fix all the bugs"}`) + ev("abort", `{"reason":"user_initiated"}`) + ev("session.shutdown", `{"shutdownType":"routine"}`),
			"", -1, "", "incomplete", "the log ends on a prompt that got no answer"},
		{"usage without a filter",
			ev("user.message", `{"content":"hi"}`) + answer + ev("assistant.usage", `{"model":"gpt-5","inputTokens":10,"outputTokens":2,"finishReason":"stop","contentFilterTriggered":false}`),
			"", -1, "", "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, copilot.Plugin, []byte(tt.in), normalize.Options{Provider: "copilot"})
			if o.Result.Status != tt.step || o.Result.Error != tt.stepEr {
				t.Errorf("step %s (%q), want %s (%q)", o.Result.Status, o.Result.Error, tt.step, tt.stepEr)
			}
			if tt.status == "" {
				return
			}
			_, results := o.Tools()
			if len(results) != 1 {
				t.Fatalf("%d results, want 1", len(results))
			}
			r := results[0]
			exit := int64(-1)
			if r.ExitCode != nil {
				exit = int64(*r.ExitCode)
			}
			if r.Status != tt.status || exit != tt.exit || r.Error != tt.errText {
				t.Errorf("result %s, exit %d, error %q; want %s, %d, %q", r.Status, exit, r.Error, tt.status, tt.exit, tt.errText)
			}
		})
	}
}
