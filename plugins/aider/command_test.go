//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestLocalCommands: an in-chat command Aider carries out itself ("/add",
// "/run", "!", "/exit", an unknown one) is the user's word to Aider,
// injected context, not a prompt waiting for the model's answer, so a
// session that ends on one is not incomplete; "/ask" and the other
// commands that send the model a request are prompts. Modelled on real
// histories (sessions ending on "/run ...", "/add ...", "/copy-context",
// "/bye"), written for the test.
func TestLocalCommands(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		origins []string // the user messages' origins, in order
		status  string
	}{
		{
			name:    "an answer, then commands",
			lines:   []string{"#### fix it  ", "", "Fixed.", "", "#### /run make test  ", "> Add 0.8k tokens of command output to the chat? (Y)es/(N)o [Yes]: n  ", "", "#### !ls  ", "", "#### /bye  ", "> Invalid command: /bye  "},
			origins: []string{"prompt", "injected_context", "injected_context", "injected_context"},
			status:  "ok",
		},
		{
			name:    "only commands",
			lines:   []string{"#### /add **  ", "> Added a.go to the chat  ", "", "#### /copy-context explain this  ", "", "#### /exit  "},
			origins: []string{"injected_context", "injected_context", "injected_context"},
			status:  "ok",
		},
		{
			name:    "a question asked with /ask, unanswered",
			lines:   []string{"#### /add a.go  ", "", "#### /ask why does it fail?  "},
			origins: []string{"injected_context", "prompt"},
			status:  "incomplete",
		},
		{
			name:    "a question asked with /ask, answered",
			lines:   []string{"#### /ask why does it fail?  ", "", "Because.", "", "#### /drop a.go  "},
			origins: []string{"prompt", "injected_context"},
			status:  "ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHistory(t, "2025-07-23 11:25:21", tt.lines...)
			var origins []string
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil && e.Event.Type == transcript.MessageUser {
					for _, b := range m.Blocks {
						origins = append(origins, string(b.Origin))
					}
				}
			}
			if strings.Join(origins, ",") != strings.Join(tt.origins, ",") {
				t.Errorf("origins %v, want %v", origins, tt.origins)
			}
			if r.Step.Status != tt.status {
				t.Errorf("status %q, want %q", r.Step.Status, tt.status)
			}
		})
	}
}
