//go:build !wasip1

package openai_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// TestConformance runs every real capture of ../shared/fixtures/openai:
// no fault, no complete capture left incomplete, every tool call in the
// raw input is a tool.call, every piece of model text lands in an
// assistant block, and nothing is unmapped beyond the checked-in
// expectation (testdata/conformance).
func TestConformance(t *testing.T) {
	plugintest.Conformance{
		Plugin:   openai.Plugin,
		Provider: "openai",
		Skip:     func(name string) bool { return strings.HasSuffix(name, ".stderr.txt") },
		Facts: func(t *testing.T, raw []byte) ([]string, []string) {
			ids, frags := rawFacts(raw)
			t.Logf("%d tool calls, %d text pieces in the raw input", len(ids), len(frags))
			return ids, frags
		},
		Messages: func(ev *transcript.Event) bool { mp := ev.Message(); return mp != nil && mp.Role == "assistant" },
		Check: func(t *testing.T, o *plugintest.Outcome) {
			// A capture whose own terminal event says the output was
			// cut (finish_reason length, a Responses "incomplete") is
			// incomplete; one cut off by the transport is not here.
			if o.Result.Status == transcript.StatusIncomplete && !strings.Contains(o.Result.Error, "token limit") && !strings.Contains(o.Result.Error, "response incomplete") {
				t.Errorf("a complete capture normalized as incomplete (error %q)", o.Result.Error)
			}
		},
	}.Test(t)
}

// Item types that are tool calls, and the field that names them.
var callTypes = map[string]string{
	"function_call": "call_id", "custom_tool_call": "call_id", "local_shell_call": "call_id",
	"shell_call": "call_id", "apply_patch_call": "call_id", "computer_call": "call_id",
	"web_search_call": "id", "file_search_call": "id", "code_interpreter_call": "id",
	"mcp_call": "id", "image_generation_call": "id", "mcp_approval_request": "id",
}

// rawFacts reads a capture independently of the plugin (encoding/json):
// the id of every tool call (Chat tool_calls[].id, Responses call items),
// and every piece of model text (content, reasoning, refusal, their
// deltas, output_text and summary_text).
func rawFacts(raw []byte) (ids, frags []string) {
	docs := plugintest.Docs(raw)
	seen := map[string]bool{}
	id := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	text := func(v any) {
		if s, _ := v.(string); s != "" {
			frags = append(frags, s)
		}
	}
	var walk func(v any, parent string)
	walk = func(v any, parent string) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, parent)
			}
		case map[string]any:
			typ, _ := x["type"].(string)
			if f, ok := callTypes[typ]; ok {
				s, _ := x[f].(string)
				id(s)
			}
			if _, ok := x["function"].(map[string]any); ok && parent == "tool_calls" {
				s, _ := x["id"].(string)
				id(s)
			}
			switch {
			case parent == "message" || parent == "delta":
				text(x["content"])
				text(x["reasoning_content"])
				text(x["refusal"])
			case typ == "output_text" || typ == "summary_text":
				text(x["text"])
			case typ == "refusal":
				text(x["refusal"])
			case typ == "response.output_text.delta" || typ == "response.reasoning_summary_text.delta" || typ == "response.refusal.delta":
				text(x["delta"])
			}
			for k, e := range x {
				walk(e, k)
			}
		}
	}
	for _, d := range docs {
		walk(d, "")
	}
	return ids, frags
}
