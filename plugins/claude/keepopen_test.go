//go:build !wasip1

package claude

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
)

// TestStreamKeepsMessageOpen: events that write nothing to the message
// being streamed keep it open: a tool's input_json_delta events (joined
// in the plugin, written when the block stops; a Write of a long file
// streams hundreds), pings, citations_delta events. Before, the host
// closed the message after 64 raw lines without news of it, with a
// warning, and what came after became a second message: the tool_use
// block a second time (in Claude Code's stream-json with
// --include-partial-messages under the same message id), or the rest of
// the text without id or model (the API's SSE).
func TestStreamKeepsMessageOpen(t *testing.T) {
	sse := func(evs ...string) string {
		var b strings.Builder
		for _, e := range evs {
			var v struct{ Type string }
			if err := json.Unmarshal([]byte(e), &v); err != nil {
				t.Fatal(err)
			}
			b.WriteString("event: " + v.Type + "\ndata: " + e + "\n\n")
		}
		return b.String()
	}
	partial := func(evs ...string) string {
		var b strings.Builder
		b.WriteString(`{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","cwd":"/tmp","tools":[]}` + "\n")
		for _, e := range evs {
			b.WriteString(`{"type":"stream_event","event":` + e + `,"session_id":"s1","parent_tool_use_id":null,"uuid":"u"}` + "\n")
		}
		return b.String()
	}
	const start = `{"type":"message_start","message":{"model":"claude-sonnet-4-5","id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	many := func(n int, ev func(i int) string) []string {
		var out []string
		for i := range n {
			out = append(out, ev(i))
		}
		return out
	}
	write := append([]string{start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Write","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\": \"/tmp/a.txt\", \"content\": \""}}`},
		many(100, func(i int) string {
			return `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"line ` + strconv.Itoa(i) + `\\n"}}`
		})...)
	write = append(write, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":500}}`, `{"type":"message_stop"}`)
	text := append([]string{start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`},
		many(80, func(int) string { return `{"type": "ping"}` })...)
	text = append(text, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}}`)
	text = append(text, many(70, func(int) string {
		return `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"x","url":"https://example.com","title":"t","encrypted_index":"Eq"}}}`
	})...)
	text = append(text, `{"type":"content_block_stop","index":0}`, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`, `{"type":"message_stop"}`)

	tests := []struct {
		name, provider, in string
		blocks             string // the one message's block types
		input              bool   // a Write whose content is line 0 to line 99
	}{
		{"API SSE, a long tool input", "anthropic", sse(write...), "tool_use", true},
		{"stream-json partial messages, a long tool input", "claude", partial(write...), "tool_use", true},
		{"API SSE, pings and citations", "anthropic", sse(text...), "text", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := plugintest.OneAssistant(t, Plugin, tt.provider, []byte(tt.in))
			var types []string
			for _, b := range m.Blocks {
				types = append(types, string(b.Type))
			}
			if m.ID != "msg_1" || m.Model != "claude-sonnet-4-5" || strings.Join(types, ",") != tt.blocks {
				t.Errorf("message %q %q blocks %q; want msg_1 claude-sonnet-4-5 %q", m.ID, m.Model, types, tt.blocks)
			}
			if tt.input {
				var in struct{ Content string }
				if err := json.Unmarshal(m.Blocks[0].ToolInput, &in); err != nil || !strings.HasPrefix(in.Content, "line 0\n") || !strings.HasSuffix(in.Content, "line 99\n") {
					t.Errorf("tool input %.80s... (%v); want the content line 0 to line 99", m.Blocks[0].ToolInput, err)
				}
			}
		})
	}
}
