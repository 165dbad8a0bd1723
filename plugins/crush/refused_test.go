//go:build !wasip1

package crush_test

import "testing"

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
