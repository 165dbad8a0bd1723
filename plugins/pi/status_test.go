//go:build !wasip1

package pi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// TestUnrunCallsAndCutResponses: what pi-mono's agent loop
// (packages/agent/src/agent-loop.ts at 83378aa) writes for a call that
// never ran says so in its result's status, and a response cut at the
// output token limit (stopReason length) is a warning.
func TestUnrunCallsAndCutResponses(t *testing.T) {
	head := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-15T10:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-03-15T10:00:01.000Z","message":{"role":"user","content":"go","timestamp":1773568801000}}`
	call := func(stop string) string {
		return fmt.Sprintf(`{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-03-15T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"make"}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":%q,"timestamp":1773568802000}}`, stop)
	}
	result := func(text string, isError bool) string {
		return fmt.Sprintf(`{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2026-03-15T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":%q}],"isError":%t,"timestamp":1773568803000}}`, text, isError)
	}
	for _, tc := range []struct {
		name, raw, status, warning string
	}{
		{"a call an extension blocked without a reason: denied", head + "\n" + call("toolUse") + "\n" + result("Tool execution was blocked", true), "denied", ""},
		// The reason is the result's only text, details {}: the shape of
		// a tool that threw (agent-loop.ts createErrorToolResult), so it
		// stays an error.
		{"a call blocked with a reason: error", head + "\n" + call("toolUse") + "\n" + result("Not in this repository", true), "error", ""},
		{"a call skipped for a queued message: cancelled", head + "\n" + call("toolUse") + "\n" + result("Skipped due to queued user message.", true), "cancelled", ""},
		{"the words as a tool's output are ok", head + "\n" + call("toolUse") + "\n" + result("Tool execution was blocked", false), "ok", ""},
		{"a response cut at the token limit: a warning", head + "\n" + call("length") + "\n" + result("done", false), "ok", "the response was cut at the output token limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, pi.Plugin, []byte(tc.raw+"\n"), normalize.Options{Provider: "pi"})
			if st, _ := o.ResultStatus("c1"); st != tc.status {
				t.Errorf("c1's status %q, want %q", st, tc.status)
			}
			w := strings.Join(o.Result.Warnings, "|")
			if tc.warning != "" && !strings.Contains(w, tc.warning) || tc.warning == "" && strings.Contains(w, "token limit") {
				t.Errorf("warnings %q, want %q", o.Result.Warnings, tc.warning)
			}
		})
	}
}
