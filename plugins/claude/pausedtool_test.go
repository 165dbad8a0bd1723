//go:build !wasip1

package claude

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/transcript"
)

// TestServerResultWithoutCall: a response that continues a turn the
// server paused (stop_reason pause_turn, then a new request with the
// paused content) may open with a server tool's result whose call was
// the previous response's (pydantic-ai's test_pause_turn_web_search_vcr
// and its streaming twin: the second response opens with a
// web_search_tool_result). The capture holds no call for it, so the host
// makes one up from the result: named after the result's block type
// (web_search), where it was "unknown".
func TestServerResultWithoutCall(t *testing.T) {
	const result = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01RG","content":[{"type":"web_search_result","title":"t","url":"https://example.com","encrypted_content":"Eq","page_age":null}]}`
	body := `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[` + result +
		`,{"type":"text","text":"Found it."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`
	stream := `event: message_start
data: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":` + result + `}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}
`
	for name, in := range map[string]string{"body": body, "stream": stream} {
		t.Run(name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), Plugin, "anthropic", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, e := range r.Events {
				if e.Event.Type == transcript.ToolCall {
					calls = append(calls, e.Event.Tool().Name)
				}
			}
			if strings.Join(calls, ",") != "web_search" {
				t.Errorf("tool calls %q; want [web_search]", calls)
			}
			if len(r.Step.Warnings) != 1 || !strings.Contains(r.Step.Warnings[0], `a call named "web_search" was synthesized`) {
				t.Errorf("warnings %q; want the call named web_search made up from its result", r.Step.Warnings)
			}
		})
	}
}
