//go:build !wasip1

package pi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/pi"
	"github.com/twasm/twasm/transcript"
)

// TestSystemSections: later versions record the system prompt as a
// system message whose content is empty and whose sections hold the
// prompt's named parts (a real pi 0.87.1 session: preamble, cwd, docs,
// rules, tools), with the tools' schemas in toolsAdded. Before, the
// message was one empty system_prompt block: the prompt's text was lost.
// Now each section is a block, in order; a system message of content
// keeps its content; one stating only tools added makes no message.
func TestSystemSections(t *testing.T) {
	const head = `{"type":"session","version":3,"id":"s1","timestamp":"2026-09-30T11:37:32.309Z","cwd":"/work/proj"}` + "\n"
	sys := func(msg string) string {
		return `{"type":"message","id":"87a2c271","parentId":null,"timestamp":"2026-09-30T11:37:32.351Z","message":` + msg + `}` + "\n"
	}
	const prompt = `{"type":"message","id":"db61899c","parentId":"87a2c271","timestamp":"2026-09-30T11:37:32.351Z","message":{"role":"user","content":[{"type":"text","text":"run echo fixture please"}],"timestamp":1790768252349}}` + "\n"
	tests := []struct {
		name, raw string
		blocks    []string
	}{
		{"sections", head + sys(`{"role":"system","content":"","sections":{"preamble":"You are an expert coding assistant operating inside pi.","cwd":"<cwd>\n/work/proj\n</cwd>","rules":"<rules>\n- Use bash\n</rules>"},"toolsAdded":[{"name":"read","description":"Read a file","parameters":{"type":"object"}}],"timestamp":1790768252349}`) + prompt,
			[]string{"You are an expert coding assistant operating inside pi.", "<cwd>\n/work/proj\n</cwd>", "<rules>\n- Use bash\n</rules>"}},
		{"content", head + sys(`{"role":"system","content":"fixture-update","toolsAdded":[{"name":"late_tool","description":"x","parameters":{"type":"object"}}],"timestamp":1790768252349}`) + prompt,
			[]string{"fixture-update"}},
		{"tools only", head + sys(`{"role":"system","content":"","toolsAdded":[{"name":"late_tool","description":"x","parameters":{"type":"object"}}],"timestamp":1790768252349}`) + prompt,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), pi.Plugin, "pi", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			prompts := 0
			for _, e := range r.Events {
				if e.Type != transcript.MessageUser {
					continue
				}
				for _, b := range e.Message().Blocks {
					switch b.Origin {
					case transcript.OriginSystemPrompt:
						got = append(got, b.Text)
					case transcript.OriginPrompt:
						prompts++
					}
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.blocks, "|") || len(got) != len(tt.blocks) {
				t.Errorf("system prompt blocks %q, want %q", got, tt.blocks)
			}
			if prompts != 1 {
				t.Errorf("%d prompts, want 1", prompts)
			}
		})
	}
}
