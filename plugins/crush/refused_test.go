//go:build !wasip1

package crush_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
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
			content, _ := json.Marshal(tt.content)
			raw := fmt.Sprintf(`{"$twasm":"row","table":"sessions","key":"s","version":1,"row":{"id":"s","parent_session_id":null,"title":"t","message_count":2,"prompt_tokens":0,"completion_tokens":0,"cost":0,"updated_at":1,"created_at":1,"summary_message_id":null,"children_cost":0}}
{"$twasm":"row","table":"messages","key":"m1","version":1,"row":{"time_ms":1000,"id":"m1","session_id":"s","role":"assistant","parts":[{"type":"tool_call","data":{"id":"c1","name":"edit","input":"{\"file_path\":\"a.go\"}","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1}}],"model":"m","provider":"p","created_at":1,"updated_at":1,"finished_at":1}}
{"$twasm":"row","table":"messages","key":"m2","version":2,"row":{"time_ms":2000,"id":"m2","session_id":"s","role":"tool","parts":[{"type":"tool_result","data":{"tool_call_id":"c1","name":"edit","content":%s,"metadata":"","is_error":%t}}],"model":"","created_at":2,"updated_at":2,"finished_at":null}}
`, content, tt.isError)
			o := plugintest.Run(t, crush.Plugin, []byte(raw), normalize.Options{Provider: "crush"})
			if st, ok := o.ResultStatus("c1"); st != tt.status {
				t.Errorf("status %q (a result: %v), want %q", st, ok, tt.status)
			}
		})
	}
}
