//go:build !wasip1

package kimi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/kimi"
)

// TestTurnEnds: how a Kimi Code turn ends decides the session's status
// (MoonshotAI/kimi-code d723cc47, packages/agent-core-v2:
// docs/wire-manifest.d.ts gives turn.ended's reason completed, cancelled,
// failed or blocked; src/agent/loop/loopService.ts writes a step.end
// whose model call threw as finishReason "interrupted" when the turn or
// step was aborted, else "error", then ends the turn "cancelled" or
// "failed" with that error, and a step the model cut at its token limit
// (kosong's "truncated") as "max_tokens"). A cancelled turn, an
// interrupted step and an output cut at the limit are incomplete; a
// failed or blocked turn is an error, with its reason; a failed step's
// error that the failed turn states again is listed once; a later answer
// makes the session ok again.
func TestTurnEnds(t *testing.T) {
	const (
		meta   = `{"type":"metadata","protocol_version":"1.5","created_at":1782012661212}`
		prompt = `{"type":"turn.prompt","agentId":"main","input":[{"type":"text","text":"Fix the bug"}],"origin":{"kind":"user"},"time":1782012666987}`
		begin  = `{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.begin","uuid":"st-1","turnId":"0","step":1},"time":1782012666989}`
		text   = `{"type":"context.append_loop_event","agentId":"main","event":{"type":"content.part","uuid":"p1","turnId":"0","step":1,"stepUuid":"st-1","part":{"type":"text","text":"Looking at it"}},"time":1782012667000}`
		usage  = `{"type":"usage.record","agentId":"main","model":"kimi-code/kimi-for-coding","usage":{"inputOther":10,"output":3,"inputCacheRead":0,"inputCacheCreation":0},"usageScope":"turn","time":1782012667002}`
		begin2 = `{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.begin","uuid":"st-2","turnId":"0","step":2},"time":1782012668000}`
		text2  = `{"type":"context.append_loop_event","agentId":"main","event":{"type":"content.part","uuid":"p2","turnId":"0","step":2,"stepUuid":"st-2","part":{"type":"text","text":"Fixed"}},"time":1782012668100}`
		end2   = `{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.end","uuid":"st-2","turnId":"0","step":2,"usage":{"inputOther":10,"output":3,"inputCacheRead":0,"inputCacheCreation":0},"finishReason":"end_turn"},"time":1782012668200}`
		again  = `{"type":"turn.prompt","agentId":"main","input":[{"type":"text","text":"Go on"}],"origin":{"kind":"user"},"time":1782012669000}`
	)
	end := func(reason string) string {
		u := `,"usage":{"inputOther":10,"output":3,"inputCacheRead":0,"inputCacheCreation":0}`
		if reason == "interrupted" || reason == "error" {
			u = "" // the model call threw: no usage
		}
		return `{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.end","uuid":"st-1","turnId":"0","step":1` + u + `,"finishReason":"` + reason + `"},"time":1782012667001}`
	}
	ended := func(reason, rest string) string {
		return `{"type":"turn.ended","agentId":"main","turnId":0,"reason":"` + reason + `"` + rest + `,"durationMs":1000,"time":1782012669000}`
	}
	const rateLimit = `,"error":{"code":"provider.rate_limit","message":"429 Too Many Requests: rate limit exceeded","retryable":true}`
	tests := []struct {
		name   string
		lines  []string
		status string
		errors []string // the step result's errors, in order
		text   string   // in the step result's error
	}{
		{"completed", []string{meta, prompt, begin, text, end("end_turn"), usage, ended("completed", "")}, "ok", nil, ""},
		{"cancelled", []string{meta, prompt, begin, text, end("end_turn"), usage,
			`{"type":"turn.cancel","agentId":"main","turnId":0,"target":"active","reason":"user_cancelled","time":1782012668000}`,
			ended("cancelled", "")}, "incomplete", nil, "cancelled"},
		{"a step interrupted, the turn cancelled", []string{meta, prompt, begin, text, end("interrupted"), ended("cancelled", "")}, "incomplete", nil, "cancelled"},
		{"a step interrupted, the log read before the turn's end", []string{meta, prompt, begin, text, end("interrupted")}, "incomplete", nil, "interrupted"},
		{"a step interrupted, the turn went on", []string{meta, prompt, begin, text, end("interrupted"), begin2, text2, end2, usage, ended("completed", "")}, "ok", nil, ""},
		{"cut at the token limit", []string{meta, prompt, begin, text, end("max_tokens"), usage, ended("completed", "")}, "incomplete", nil, "max_tokens"},
		{"cut at the token limit, answered after", []string{meta, prompt, begin, text, end("max_tokens"), usage, ended("completed", ""),
			again, begin2, text2, end2, usage, ended("completed", "")}, "ok", nil, ""},
		{"failed: the step's error listed once", []string{meta, prompt, begin, text, end("error"), ended("failed", rateLimit)}, "error",
			[]string{"429 Too Many Requests: rate limit exceeded"}, "429"},
		{"failed after a retried step: each failure listed", []string{meta, prompt, begin, text, end("error"), begin2, end2, ended("failed", rateLimit)}, "error",
			[]string{"the model call ended in error (finishReason error)", "429 Too Many Requests: rate limit exceeded"}, "429"},
		{"a step failed, the log read before the turn's end", []string{meta, prompt, begin, text, end("error")}, "error",
			[]string{"the model call ended in error (finishReason error)"}, "finishReason error"},
		{"failed without an error", []string{meta, prompt, begin, text, end("end_turn"), usage, ended("failed", "")}, "error", []string{"the turn failed"}, "the turn failed"},
		{"blocked", []string{meta, prompt,
			`{"type":"context.append_message","agentId":"main","message":{"role":"assistant","content":[{"type":"text","text":"Prompts about deploys are blocked"}],"toolCalls":[],"origin":{"kind":"hook_result","event":"UserPromptSubmit","blocked":true}},"time":1782012667000}`,
			ended("blocked", "")}, "error", []string{"the turn was blocked: a hook refused the prompt (turn.ended reason blocked)"}, "blocked"},
		{"failed, answered after", []string{meta, prompt, begin, text, end("error"), ended("failed", rateLimit),
			again, begin2, text2, end2, usage, ended("completed", "")}, "ok", []string{"429 Too Many Requests: rate limit exceeded"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), kimi.Plugin, "kimi", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			var errs []string
			for _, e := range r.Step.Errors {
				errs = append(errs, e.Message)
			}
			if r.Step.Status != tt.status || strings.Join(errs, "|") != strings.Join(tt.errors, "|") {
				t.Errorf("status %q, errors %q; want %q, %q", r.Step.Status, errs, tt.status, tt.errors)
			}
			if tt.text != "" && !strings.Contains(r.Step.Error, tt.text) {
				t.Errorf("error %q, want it to mention %q", r.Step.Error, tt.text)
			}
			if r.SilentN > 0 || len(r.Step.Unmapped) > 0 {
				t.Errorf("lines unaccounted for: silent %v, unmapped %v", r.Silent, r.Step.Unmapped)
			}
		})
	}
}
