//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestEditException: Aider's apply_updates (base_coder.py, Aider-AI/aider
// 5dc9490) reports an exception while it writes the answer's edits as
// "Exception while updating files:" and the exception's text, applies
// none of them and reflects the text back to the model. The edits are a
// call "edit" that failed with that text, as after "The LLM did not
// conform to the edit format."; before, they made no call at all.
func TestEditException(t *testing.T) {
	answer := []string{"#### Rename old to new in helpers.py  ", "", "helpers.py", "```python", "<<<<<<< SEARCH", "def old():", "=======", "def new():", ">>>>>>> REPLACE", "```", "", "> Tokens: 1.2k sent, 60 received.  "}
	tests := []struct {
		name      string
		lines     []string
		edits     int
		status    string // the edit's result status, normalized
		errorText string
	}{
		{"an exception while writing the files", append(append([]string{}, answer...),
			"> Exception while updating files:  ", "> [Errno 13] Permission denied: 'helpers.py'  "), 1, "error", "[Errno 13] Permission denied: 'helpers.py'"},
		{"the edits applied", append(append([]string{}, answer...), "> Applied edit to helpers.py  "), 1, "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSession(t, "2026-05-22 10:00:00", tt.lines...)
			edits, status, errText := 0, "", ""
			for _, e := range r.Events {
				p := e.Event.Tool()
				if p == nil || p.Name != "edit" {
					continue
				}
				switch e.Event.Type {
				case transcript.ToolCall:
					edits++
				case transcript.ToolResult:
					status, errText = p.Status, p.Error
				}
			}
			if edits != tt.edits || status != tt.status || !strings.Contains(errText, tt.errorText) {
				t.Errorf("edits %d, result %q %q; want %d, %q with %q", edits, status, errText, tt.edits, tt.status, tt.errorText)
			}
		})
	}
}
