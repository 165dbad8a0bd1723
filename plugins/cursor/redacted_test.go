//go:build !wasip1

package cursor_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
	"github.com/twasm/twasm/transcript"
)

// TestRedactedThinkingMarker: Cursor's agent transcripts write the
// model's thinking they leave out as "[REDACTED]": after a blank line at
// the end of a text block, or as a text block of its own where the turn
// only thought before its calls (a real transcript, ReviewStage/luke's
// testdata capture, ends every assistant text so; peers' readers of
// real transcripts say the same). It is nothing the model said: a
// thinking block marked redacted, never a text, never the answer. It was
// read as text: the final answer ended "\n\n[REDACTED]" and each turn
// that only thought said "[REDACTED]". The call ids stay the line's
// block numbers, whatever blocks the marker added.
func TestRedactedThinkingMarker(t *testing.T) {
	const prompt = `{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Wednesday, Aug 12, 2026, 7:51 PM (UTC-7)</timestamp>\n<user_query>\nadd it\n</user_query>"}]}}`
	const ended = `{"type":"turn_ended","status":"success"}`
	tests := []struct {
		name   string
		lines  []string
		blocks []string // the assistant blocks, in order: "text:<text>", "redacted", "call:<id>"
		final  string
	}{
		{"text, then the marker after a blank line, then calls", []string{prompt,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"Checking first.\n\n[REDACTED]"},{"type":"tool_use","name":"Read","input":{"path":"/w/a"}},{"type":"tool_use","name":"Shell","input":{"command":"ls"}}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"Done.\n\n[REDACTED]"}]}}`, ended},
			[]string{"text:Checking first.", "redacted", "call:cursor-2-1", "call:cursor-2-2", "text:Done.", "redacted"}, "Done."},
		{"the marker alone: a turn that only thought before its call", []string{prompt,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"[REDACTED]"},{"type":"tool_use","name":"Shell","input":{"command":"ls"}}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"Listed."}]}}`, ended},
			[]string{"redacted", "call:cursor-2-1", "text:Listed."}, "Listed."},
		{"an answer whose thinking was left out is still the answer", []string{prompt,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"All set.\n\n[REDACTED]"}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"[REDACTED]"}]}}`, ended},
			[]string{"text:All set.", "redacted", "redacted"}, "All set."},
		{"content as a string", []string{prompt,
			`{"role":"assistant","message":{"content":"Answer.\n\n[REDACTED]"}}`, ended},
			[]string{"text:Answer.", "redacted"}, "Answer."},
		{"the word in the model's own sentence is text", []string{prompt,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"The key was [REDACTED]"}]}}`, ended},
			[]string{"text:The key was [REDACTED]"}, "The key was [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Join(tt.lines, "\n") + "\n"
			o := plugintest.Run(t, cursor.Plugin, []byte(in), normalize.Options{Provider: "cursor"})
			var got []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					switch {
					case b.Type == transcript.BlockText:
						got = append(got, "text:"+b.Text)
					case b.Type == transcript.BlockThinking && b.Redacted && b.Thinking == "":
						got = append(got, "redacted")
					case b.Type == transcript.BlockToolUse:
						got = append(got, "call:"+b.ToolID)
					default:
						got = append(got, string(b.Type))
					}
				}
			}
			if !slices.Equal(got, tt.blocks) {
				t.Errorf("assistant blocks %q, want %q", got, tt.blocks)
			}
			if o.Result.FinalText != tt.final {
				t.Errorf("final text %q, want %q", o.Result.FinalText, tt.final)
			}
			if o.Result.Status != "ok" {
				t.Errorf("status %q, want ok", o.Result.Status)
			}
		})
	}
}
