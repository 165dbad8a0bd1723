//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestConfirmations: a confirmation's answer decides its status (no,
// skip and don't ask again refuse it), and the "#### " line Aider writes
// when the user types a word as the answer is no prompt. The lines are
// modelled on real histories (Aider v0.85.1 and v0.86.2, an "Add file to
// the chat?" answered "skip" and "all", one answered "d").
func TestConfirmations(t *testing.T) {
	const q = "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: "
	tests := []struct {
		name    string
		lines   []string
		prompts []string // the user's prompts, in order
		status  []string // the confirm calls' result statuses, in order
	}{
		{
			name:    "don't ask again is declined",
			lines:   []string{"#### fix it  ", "", "Done.", "", "> Tokens: 1.0k sent, 10 received.  ", "> main.ts  ", "> " + q + "d  "},
			prompts: []string{"fix it"},
			status:  []string{"denied"},
		},
		{
			name:    "a typed word is echoed as a #### line, not a prompt",
			lines:   []string{"#### fix it  ", "", "Done.", "", "> a.c  ", "> " + q + "a  ", "> b.c  ", "", "#### " + q + "all  ", "> " + q + "a  ", "> c.c  ", "", "#### " + q + "skip  ", "> " + q + "s  ", "", "#### thanks  "},
			prompts: []string{"fix it", "thanks"},
			status:  []string{"ok", "ok", "denied"},
		},
		{
			name:    "yes and all are taken",
			lines:   []string{"#### go  ", "", "Ok.", "", "> " + q + "y  ", "> " + q + "a  "},
			prompts: []string{"go"},
			status:  []string{"ok", "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSession(t, "2026-04-22 22:40:47", tt.lines...)
			var prompts, status []string
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil && m.Role == "user" {
					for _, b := range m.Blocks {
						prompts = append(prompts, b.Text)
					}
				}
				if tr := e.Event.Tool(); tr != nil && e.Event.Type == transcript.ToolResult && tr.Name == "confirm" {
					status = append(status, tr.Status)
				}
			}
			if strings.Join(prompts, "|") != strings.Join(tt.prompts, "|") {
				t.Errorf("prompts %q, want %q", prompts, tt.prompts)
			}
			if strings.Join(status, "|") != strings.Join(tt.status, "|") {
				t.Errorf("confirm statuses %q, want %q", status, tt.status)
			}
		})
	}
}
