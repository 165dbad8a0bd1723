//go:build !wasip1

package copilot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestFusionAndExternalTools: the session events of @github/copilot-sdk
// 1.0.x (session-events.d.ts) that say something failed or that a tool
// ran are read, not left unmapped. A HydraFusion routing failure
// (session.fusion_route_failed: the turn falls back to a concrete model)
// and a phase that failed (assistant.fusion_phase_failed, status failed)
// are errors of the step, which an answer after them leaves ok and which
// are the step's error when nothing answers after them; a phase
// cancelled is a warning. A client-side tool the CLI asks the SDK's host
// to run (external_tool.requested) is a tool call, once when the
// assistant's toolRequests named it already; its outcome is the
// tool.execution_complete that follows (external_tool.completed only
// tells the client to dismiss its prompt), and a call with no completion
// stays dangling.
func TestFusionAndExternalTools(t *testing.T) {
	start := sessionStart("1.0.102")
	user := `{"type":"user.message","data":{"content":"Fix the build"},"id":"e1","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"}`
	answer := `{"type":"assistant.message","data":{"messageId":"m9","content":"Fixed.","toolRequests":[]},"id":"e9","timestamp":"2026-11-01T10:00:09.000Z","parentId":"e8"}`
	routeFailed := `{"type":"session.fusion_route_failed","data":{"attemptId":"a1","errorMessage":"router returned 503","fallbackModel":"claude-sonnet-4.6","policy":"balanced","reason":"router_unavailable","routingLatencyMs":812,"syntheticModel":"fusion"},"id":"e2","timestamp":"2026-11-01T10:00:02.000Z","parentId":"e1"}`
	phase := func(status, msg string) string {
		return `{"type":"assistant.fusion_phase_failed","data":{"conversationScope":"root","degradedToPhaseId":"p2","durationMs":4100,"errorMessage":"` + msg + `","fusionId":"f1","model":"gpt-5.5","phaseId":"p1","phaseKind":"judge","reason":"provider_error","role":"judge","status":"` + status + `","usage":{"cachedTokens":0,"inputTokens":900,"outputTokens":12,"requestCount":1,"totalNanoAiu":0}},"id":"e3","timestamp":"2026-11-01T10:00:03.000Z","parentId":"e2"}`
	}
	asked := `{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"tc1","name":"lookup","arguments":{"id":"alpha"}}]},"id":"e4","timestamp":"2026-11-01T10:00:04.000Z","parentId":"e3"}`
	requested := `{"type":"external_tool.requested","data":{"requestId":"r1","sessionId":"s1","toolCallId":"tc1","toolName":"lookup","arguments":{"id":"alpha"},"workingDirectory":"/w"},"id":"e5","timestamp":"2026-11-01T10:00:05.000Z","parentId":"e4"}`
	completed := `{"type":"external_tool.completed","data":{"requestId":"r1"},"id":"e6","timestamp":"2026-11-01T10:00:06.000Z","parentId":"e5"}`
	resultOK := `{"type":"tool.execution_complete","data":{"toolCallId":"tc1","success":true,"result":{"content":"alpha is 42"}},"id":"e7","timestamp":"2026-11-01T10:00:07.000Z","parentId":"e6"}`
	resultFailed := `{"type":"tool.execution_complete","data":{"toolCallId":"tc1","success":false,"error":{"message":"lookup: no such id"}},"id":"e7","timestamp":"2026-11-01T10:00:07.000Z","parentId":"e6"}`
	tests := []struct {
		name     string
		lines    []string
		status   string
		errors   []string // each held by one of the step's errors, in order
		warnings []string
		calls    int
		result   string // tc1's result status; "" none
	}{
		{"a routing failure, then an answer", []string{start, user, routeFailed, answer}, "ok",
			[]string{"HydraFusion routing failed (router_unavailable): router returned 503; the turn fell back to claude-sonnet-4.6"}, nil, 0, ""},
		{"a routing failure that nothing answers", []string{start, user, routeFailed}, "error",
			[]string{"router returned 503"}, nil, 0, ""},
		{"a phase that failed, degraded, then an answer", []string{start, user, phase("failed", "judge timed out"), answer}, "ok",
			[]string{"HydraFusion judge phase on gpt-5.5 failed (provider_error): judge timed out; the turn went on in phase p2"}, nil, 0, ""},
		{"a phase that failed last", []string{start, user, phase("failed", "judge timed out")}, "error",
			[]string{"judge timed out"}, nil, 0, ""},
		{"a phase cancelled", []string{start, user, phase("cancelled", ""), answer}, "ok",
			nil, []string{"copilot: HydraFusion judge phase on gpt-5.5 cancelled (provider_error); the turn went on in phase p2"}, 0, ""},
		{"an external tool the assistant asked for, ok", []string{start, user, asked, requested, completed, resultOK, answer}, "ok",
			nil, nil, 1, "ok"},
		{"an external tool that failed", []string{start, user, asked, requested, completed, resultFailed, answer}, "ok",
			nil, nil, 1, "error"},
		{"an external tool request alone is the call", []string{start, user, requested, completed, resultOK, answer}, "ok",
			nil, nil, 1, "ok"},
		{"an external tool with no completion dangles", []string{start, user, asked, requested}, "incomplete",
			nil, nil, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), copilot.Plugin, "copilot", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if len(res.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", res.Unmapped, r.SilentN)
			}
			if res.Status != tt.status {
				t.Errorf("status %q (%q), want %q", res.Status, res.Error, tt.status)
			}
			if len(res.Errors) != len(tt.errors) {
				t.Errorf("errors %+v, want %d", res.Errors, len(tt.errors))
			} else {
				for i, e := range tt.errors {
					if !strings.Contains(res.Errors[i].Message, e) {
						t.Errorf("error %d %q, want it to hold %q", i, res.Errors[i].Message, e)
					}
				}
			}
			if strings.Join(res.Warnings, "|") != strings.Join(tt.warnings, "|") {
				t.Errorf("warnings %q, want %q", res.Warnings, tt.warnings)
			}
			out := plugintest.FromResult(r)
			calls, _ := out.Tools()
			if len(calls) != tt.calls {
				t.Errorf("%d tool calls, want %d", len(calls), tt.calls)
			}
			if got, _ := out.ResultStatus("tc1"); got != tt.result {
				t.Errorf("tc1's result %q, want %q", got, tt.result)
			}
		})
	}
}
