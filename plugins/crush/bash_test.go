//go:build !wasip1

package crush_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
	"github.com/twasm/twasm/transcript"
)

// TestBashResultBeforeCwd: Crush's bash tool writes a "<cwd>DIR</cwd>"
// line after a command's output, after its "Exit code N" and abort notice
// too (a real database shows it: testdata/captures/crush/arc42_*); the
// outcome is read from the output before that line.
func TestBashResultBeforeCwd(t *testing.T) {
	tests := []struct {
		name, content string
		status        string
		exit          *int
	}{
		{"exit code then cwd", "fatal: no upstream\n\nExit code 128\n\n<cwd>/home/me/p</cwd>", "error", new(128)},
		{"exit code last", "FAIL\n\nExit code 1", "error", new(1)},
		{"aborted then cwd", "building...\nCommand was aborted before completion\n\n<cwd>/home/me/p</cwd>", "cancelled", nil},
		{"output then cwd", "ok  \texample.com/p\n\n<cwd>/home/me/p</cwd>", "ok", nil},
		{"exit code not last", "Exit code 3\nthen more output\n\n<cwd>/home/me/p</cwd>", "ok", nil},
		{"cwd inside the output", "echo <cwd>/x</cwd>\nExit code 2", "error", new(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runResult(t, "bash", `{\"command\":\"x\"}`, tt.content, false)
			var res *transcript.ToolPayload
			for _, it := range o.Sink.Items {
				if it.Event != nil && it.Event.Type == transcript.ToolResult {
					res = it.Event.Tool()
				}
			}
			if res == nil {
				t.Fatal("no tool.result")
			}
			if res.Status != tt.status {
				t.Errorf("status %q, want %q", res.Status, tt.status)
			}
			switch {
			case tt.exit == nil && res.ExitCode != nil:
				t.Errorf("exit code %d, want none", *res.ExitCode)
			case tt.exit != nil && (res.ExitCode == nil || *res.ExitCode != *tt.exit):
				t.Errorf("exit code %v, want %d", res.ExitCode, *tt.exit)
			}
		})
	}
}

// runResult runs a session of one call of tool (its input a JSON text,
// escaped for a JSON string) and the tool message answering it with
// content and is_error, as crush.db's rows hold them.
func runResult(t *testing.T, tool, input, content string, isError bool) *plugintest.Outcome {
	t.Helper()
	text, _ := json.Marshal(content)
	raw := fmt.Sprintf(`{"$twasm":"row","table":"sessions","key":"s","version":1,"row":{"id":"s","parent_session_id":null,"title":"t","message_count":2,"prompt_tokens":0,"completion_tokens":0,"cost":0,"updated_at":1,"created_at":1,"summary_message_id":null,"children_cost":0}}
{"$twasm":"row","table":"messages","key":"m1","version":1,"row":{"time_ms":1000,"id":"m1","session_id":"s","role":"assistant","parts":[{"type":"tool_call","data":{"id":"c1","name":%q,"input":"%s","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1}}],"model":"m","provider":"p","created_at":1,"updated_at":1,"finished_at":1}}
{"$twasm":"row","table":"messages","key":"m2","version":2,"row":{"time_ms":2000,"id":"m2","session_id":"s","role":"tool","parts":[{"type":"tool_result","data":{"tool_call_id":"c1","name":%q,"content":%s,"metadata":"","is_error":%t}}],"model":"","created_at":2,"updated_at":2,"finished_at":null}}
`, tool, input, tool, text, isError)
	return plugintest.Run(t, crush.Plugin, []byte(raw), normalize.Options{Provider: "crush"})
}

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
