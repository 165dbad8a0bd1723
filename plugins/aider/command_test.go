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
			name:    "a path is the user's words",
			lines:   []string{"#### log to a file  ", "", "Which file?", "", "#### /tmp/app.log  "},
			origins: []string{"prompt", "prompt"},
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
			r := runSession(t, "2025-07-23 11:25:21", tt.lines...)
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

// TestArchitectRelay: in architect mode Aider hands the architect's
// answer to the editor model and writes it again as "#### " lines (the
// editor coder's input): the architect's words, injected context, not a
// prompt of the user's; the answer after it is the editor's, of the
// editor's model. Modelled on a real history (Aider v0.85.2, architect
// edit format, editor-whole; the architect answering again once the
// files it named were added), written for the test.
func TestArchitectRelay(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		origins []string
		models  []string
	}{
		{
			name: "architect edit format",
			lines: []string{"> Model: o3 with architect edit format  ", "> Editor model: gpt-4.1 with editor-whole edit format  ", "",
				"#### make it a web service  ", "", "Add main.py, please.", "", "> Tokens: 1.2k sent, 10 received.  ", "> main.py  ", "> Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  ", "",
				"Changes to make:  ", "1) add app.py", "", "> Tokens: 1.6k sent, 1.7k received.  ", "",
				"#### Changes to make:  ", "#### 1) add app.py  ", "", "app.py", "```", "print(1)", "```", "", "> Tokens: 2.0k sent, 300 received.  ", "> Applied edit to app.py  ", "",
				"#### thanks  ", "", "You're welcome."},
			origins: []string{"prompt", "injected_context", "prompt"},
			models:  []string{"o3", "o3", "gpt-4.1", "o3"},
		},
		{
			name: "a one-off /architect",
			lines: []string{"> Model: sonnet with diff edit format  ", "",
				"#### /architect plan it  ", "", "Plan: do x.", "", "> Tokens: 1.0k sent, 10 received.  ", "",
				"#### Plan: do x.  ", "", "Done x.", "",
				"#### Plan: do x.  ", "", "Again."},
			origins: []string{"prompt", "injected_context", "prompt"},
			models:  []string{"sonnet", "sonnet", "sonnet"},
		},
		{
			name:    "not architect: the same words are the user's",
			lines:   []string{"> Model: sonnet with diff edit format  ", "", "#### say hi  ", "", "hi", "", "#### hi  ", "", "hello"},
			origins: []string{"prompt", "prompt"},
			models:  []string{"sonnet", "sonnet"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSession(t, "2025-08-04 13:59:12", tt.lines...)
			var origins, models []string
			for _, e := range r.Events {
				m := e.Event.Message()
				switch {
				case m == nil:
				case e.Event.Type == transcript.MessageUser:
					origins = append(origins, string(m.Blocks[0].Origin))
				default:
					models = append(models, m.Model)
				}
			}
			if strings.Join(origins, ",") != strings.Join(tt.origins, ",") {
				t.Errorf("origins %v, want %v", origins, tt.origins)
			}
			if strings.Join(models, ",") != strings.Join(tt.models, ",") {
				t.Errorf("models %v, want %v", models, tt.models)
			}
		})
	}
}
