//go:build !wasip1

package crush_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
	"github.com/twasm/twasm/transcript"
)

// TestRefusedAndCancelledResults: the tool results Crush writes for a
// call that never ran, as its source writes them (charmbracelet/crush
// 37f36e9: internal/agent/tools/tools.go, internal/agent/hooked_tool.go,
// internal/agent/agent.go), say denied or cancelled; a tool's own error
// says error.
func TestRefusedAndCancelledResults(t *testing.T) {
	tests := []struct {
		name, content string
		isError       bool
		status        string
	}{
		{"the user refused the permission", "User denied permission", true, "denied"},
		{"a PreToolUse hook blocked the call", "Tool call blocked by hook. Reason: no pushes to main", true, "denied"},
		{"a hook halted the turn", "Turn halted by hook. Reason: budget exceeded", true, "denied"},
		{"the user cancelled before the result (2026)", "Error: user cancelled assistant tool calling", true, "cancelled"},
		{"the user cancelled before the result (2025)", "Tool execution canceled by user", true, "cancelled"},
		{"the request failed before the result", "There was an error while executing the tool", true, "error"},
		{"the hook's words without is_error are output", "Tool call blocked by hook. Reason: none", false, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runResult(t, "edit", `{\"file_path\":\"a.go\"}`, tt.content, tt.isError)
			if st, ok := o.ResultStatus("c1"); st != tt.status {
				t.Errorf("status %q (a result: %v), want %q", st, ok, tt.status)
			}
		})
	}
}

// TestReasoningWithheld: a reasoning part without text but with a
// signature of the model's reasoning (Anthropic's signature, Google's
// thought_signature, OpenAI's responses_data: internal/message/content.go)
// is a redacted thinking block: the model reasoned, the text is withheld.
func TestReasoningWithheld(t *testing.T) {
	for _, data := range []string{`{"thinking":"","signature":"sig"}`, `{"thinking":"","thought_signature":"c2ln"}`, `{"thinking":"","responses_data":{"id":"rs_1"}}`} {
		t.Run(data, func(t *testing.T) {
			raw := `{"$twasm":"row","table":"messages","key":"m1","version":1,"row":{"time_ms":1000,"id":"m1","session_id":"s","role":"assistant","parts":[{"type":"reasoning","data":` + data + `},{"type":"text","data":{"text":"Done."}}],"model":"m","provider":"p","created_at":1,"updated_at":1,"finished_at":1}}` + "\n"
			o := plugintest.Run(t, crush.Plugin, []byte(raw), normalize.Options{Provider: "crush"})
			redacted := false
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Message() == nil {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					redacted = redacted || b.Type == transcript.BlockThinking && b.Redacted
				}
			}
			if !redacted {
				t.Error("no redacted thinking block")
			}
		})
	}
}
