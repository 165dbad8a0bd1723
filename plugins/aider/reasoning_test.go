//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestReasoningTags: the reasoning Aider writes between its reasoning
// tags (a reasoning model's, as in histories of Aider v0.86 with Qwen3
// and Gemma models) is a thinking block before the answer's text, the
// tags in neither, and a SEARCH/REPLACE block drafted in it is no edit.
// The lines are written for the test, in the shape those histories have.
func TestReasoningTags(t *testing.T) {
	const open, end = "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>", "</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>"
	tests := []struct {
		name   string
		lines  []string
		blocks []string // the answers' blocks, "type:text", in order
		edits  []int    // the edit calls' numbers of edits, in order
	}{
		{
			name:   "reasoning then answer",
			lines:  []string{"#### make hello.txt  ", "", open, "", "The user wants a file.", "", "a.txt", "```", "<<<<<<< SEARCH", "=======", "draft", ">>>>>>> REPLACE", "```", "", end, "", "Here it is:", "", "hello.txt", "```", "<<<<<<< SEARCH", "=======", "hello", ">>>>>>> REPLACE", "```", "", "> Applied edit to hello.txt  "},
			blocks: []string{"thinking:The user wants a file.\n\na.txt\n```\n<<<<<<< SEARCH\n=======\ndraft\n>>>>>>> REPLACE\n```", "text:Here it is:\n\nhello.txt\n```\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n```"},
			edits:  []int{1},
		},
		{
			name:   "reasoning cut by an interrupt",
			lines:  []string{"#### hi  ", "", open, "", "Thinking about hi", "> ^C KeyboardInterrupt  "},
			blocks: []string{"thinking:Thinking about hi"},
		},
		{
			name:   "no reasoning",
			lines:  []string{"#### hi  ", "", "Hello.", "", "How can I help?"},
			blocks: []string{"text:Hello.\n\nHow can I help?"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSession(t, "2026-04-22 22:40:47", tt.lines...)
			var blocks []string
			var edits []int
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil && m.Role == "assistant" {
					for _, b := range m.Blocks {
						blocks = append(blocks, string(b.Type)+":"+b.Text+b.Thinking)
					}
				}
				if c := e.Event.Tool(); c != nil && e.Event.Type == transcript.ToolCall && c.Name == "edit" {
					edits = append(edits, strings.Count(string(c.Input), `"search"`))
				}
			}
			if strings.Join(blocks, "|") != strings.Join(tt.blocks, "|") {
				t.Errorf("blocks\n%q\nwant\n%q", blocks, tt.blocks)
			}
			if len(edits) != len(tt.edits) || len(edits) > 0 && edits[0] != tt.edits[0] {
				t.Errorf("edit calls' edits %v, want %v", edits, tt.edits)
			}
		})
	}
}
