//go:build !wasip1

package openai_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// chunk is one chat.completion.chunk of response chatcmpl-1 with the
// given choices and extra top-level fields, SSE framed.
func chunk(choices, extra string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1784728648,"model":"gpt-5-2025-08-07","choices":[` +
		choices + `]` + extra + "}\n\n"
}

// TestChatChunksAccounted: every chunk of a Chat Completions stream is
// accounted for (spec §6.8), including those that add nothing to the
// transcript: an empty delta between pieces (Mistral, z.ai, Hugging
// Face), a delta of url_citation annotations alone and an empty
// reasoning_details entry (OpenRouter), and the chunk of moderation
// results OpenAI sends after the last choice's (pydantic-ai's cassettes,
// recorded 2026-07-22). Before, each was a silent line. A
// reasoning.encrypted entry (OpenRouter relaying o3 or Grok) is reasoning
// no one can read: a redacted thinking block, as the Responses API's
// encrypted_content is. What a moderation result flagged is a warning.
func TestChatChunksAccounted(t *testing.T) {
	const (
		text  = `{"index":0,"delta":{"role":"assistant","content":"Paris"},"finish_reason":null}`
		empty = `{"index":0,"delta":{"content":""},"finish_reason":null}`
		stop  = `{"index":0,"delta":{},"finish_reason":"stop"}`
		usage = `,"usage":{"prompt_tokens":13,"completion_tokens":11,"total_tokens":24}`
		notes = `{"index":0,"delta":{"content":"","role":"assistant","annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com","title":"","start_index":0,"end_index":0}}]},"finish_reason":null}`
		blank = `{"index":0,"delta":{"role":"assistant","content":"","reasoning":null,"reasoning_details":[{"type":"reasoning.text","text":"","signature":"","format":"anthropic-claude-v1","index":0}]},"finish_reason":null}`
		enc   = `{"index":0,"delta":{"role":"assistant","content":"","reasoning":null,"reasoning_details":[{"type":"reasoning.encrypted","data":"gAAAAABpCCSI","id":"rs_1","format":"openai-responses-v1","index":0}]},"finish_reason":null}`
		clean = `,"moderation":{"input":{"type":"moderation_results","model":"omni-moderation-latest","results":[{"type":"moderation_result","flagged":false,"categories":{"violence":false}}]},"output":{"type":"moderation_results","model":"omni-moderation-latest","results":[{"type":"moderation_result","flagged":false,"categories":{"violence":false}}]}}`
		flag  = `,"moderation":{"input":{"type":"moderation_results","model":"omni-moderation-latest","results":[{"type":"moderation_result","flagged":true,"categories":{"harassment":true,"hate":false,"violence":true}}]},"output":{"type":"moderation_results","results":[{"flagged":false,"categories":{}}]}}`
	)
	tests := []struct {
		name     string
		in       string
		redacted int    // redacted thinking blocks
		warning  string // a warning that must be there ("" none)
	}{
		{"empty delta between pieces", chunk(text, "") + chunk(empty, "") + chunk(text, "") + chunk(stop, ""), 0, ""},
		{"annotations alone", chunk(text, "") + chunk(notes, "") + chunk(stop, ""), 0, ""},
		{"empty reasoning_details", chunk(blank, "") + chunk(blank, "") + chunk(text, "") + chunk(stop, ""), 0, ""},
		{"encrypted reasoning", chunk(text, "") + chunk(enc, "") + chunk(stop, ""), 1, ""},
		{"finish_reason repeated", chunk(text, "") + chunk(stop, "") + chunk(empty[:len(empty)-len("null}")]+`"stop"}`, ""), 0, ""},
		{"moderation, nothing flagged", chunk(text, "") + chunk(stop, "") + chunk("", usage) + chunk("", clean) + "data: [DONE]\n", 0, ""},
		{"moderation, input flagged", chunk(text, "") + chunk(stop, "") + chunk("", usage) + chunk("", flag) + "data: [DONE]\n", 0,
			"openai moderation flagged the input: harassment, violence (omni-moderation-latest)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), openai.Plugin, "openai", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if r.SilentN != 0 {
				t.Errorf("%d silent line(s), the first %v; want none", r.SilentN, r.Silent)
			}
			if len(r.Step.Unmapped) != 0 {
				t.Errorf("unmapped %v", r.Step.Unmapped)
			}
			if r.Step.Status != "ok" {
				t.Errorf("status %q (%s)", r.Step.Status, r.Step.Error)
			}
			redacted, msgs := 0, 0
			for _, e := range r.Events {
				if e.Event.Type != transcript.MessageAssistant {
					continue
				}
				msgs++
				for _, b := range e.Event.Message().Blocks {
					if b.Type == transcript.BlockThinking && b.Redacted {
						redacted++
					}
				}
			}
			if msgs != 1 || redacted != tt.redacted {
				t.Errorf("%d assistant messages, %d redacted thinking blocks; want 1, %d", msgs, redacted, tt.redacted)
			}
			found := false
			for _, w := range r.Step.Warnings {
				if strings.Contains(w, "moderation") {
					found = found || w == tt.warning
					if tt.warning == "" || w != tt.warning {
						t.Errorf("warning %q; want %q", w, tt.warning)
					}
				}
			}
			if tt.warning != "" && !found {
				t.Errorf("warnings %q; want %q", r.Step.Warnings, tt.warning)
			}
		})
	}
}

// TestUnknownDeltaCounted: a chunk whose delta holds only a field the
// plugin does not read is counted unmapped ("delta/<field>"), not
// declared ignored as an empty chunk: what a server adds (Groq's
// executed_tools was one) must show in the drift report.
func TestUnknownDeltaCounted(t *testing.T) {
	in := chunk(`{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}`, "") +
		chunk(`{"index":0,"delta":{"server_tools":[{"type":"search","query":"q"}],"content":""},"finish_reason":null}`, "") +
		chunk(`{"index":0,"delta":{"content":"","token_id":7351,"citations":[]},"finish_reason":null}`, "") +
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`, "")
	r, err := sdktest.Run(context.Background(), openai.Plugin, "openai", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.SilentN != 0 || len(r.Step.Unmapped) != 1 || r.Step.Unmapped["delta/server_tools"] != 1 {
		t.Errorf("%d silent line(s), unmapped %v; want none silent, delta/server_tools 1", r.SilentN, r.Step.Unmapped)
	}
}

// TestExecutedTools: the tools a server runs itself and lists as
// executed_tools (Groq's compound models: a search, a page visit) are
// tool calls with their results, in a body's message and in a stream's
// deltas (the call first, then again with its output). Before, the
// plugin dropped them: the answer cited searches the transcript did not
// show, and the stream's two chunks were silent lines (pydantic-ai's
// test_groq_model_web_search_tool cassettes).
func TestExecutedTools(t *testing.T) {
	const (
		search = `{"index":0,"type":"search","arguments":"{\"query\": \"weather in San Francisco\"}"`
		visit  = `{"index":1,"type":"visit","arguments":"{\"url\": \"https://example.com/\"}"`
		found  = `,"output":"Title: Weather\nURL: https://example.com/","search_results":{"results":[{"title":"Weather","url":"https://example.com/"}]}}`
	)
	body := `{"id":"chatcmpl-1","object":"chat.completion","created":1758144046,"model":"groq/compound","choices":[{"index":0,"message":{"role":"assistant","content":"It is sunny.","executed_tools":[` +
		search + found + `,` + visit + `,"output":"Title: Example"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	delta := func(d string) string {
		return chunk(`{"index":0,"delta":`+d+`,"finish_reason":null}`, "")
	}
	stream := delta(`{"role":"assistant","reasoning":"Searching."}`) +
		delta(`{"executed_tools":[`+search+`,"search_results":{"results":[]}}]}`) +
		delta(`{"executed_tools":[`+search+found+`]}`) +
		delta(`{"content":"It is sunny."}`) +
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`, `,"x_groq":{"usage":{"queue_time":0.2,"prompt_tokens":5003,"completion_tokens":359,"total_tokens":5362}}`)
	tests := []struct {
		name, in      string
		calls         []string // name=output
		input, output int64
	}{
		{"body", body, []string{"search=Title: Weather\nURL: https://example.com/", "visit=Title: Example"}, 10, 5},
		{"stream", stream, []string{"search=Title: Weather\nURL: https://example.com/"}, 5003, 359},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), openai.Plugin, "openai", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if r.SilentN != 0 || len(r.Step.Unmapped) != 0 {
				t.Errorf("%d silent line(s) %v, unmapped %v; want none", r.SilentN, r.Silent, r.Step.Unmapped)
			}
			var got []string
			names := map[string]string{}
			for _, e := range r.Events {
				tp := e.Event.Tool()
				switch {
				case tp == nil:
				case e.Event.Type == transcript.ToolCall:
					names[tp.CallID] = tp.Name
				case e.Event.Type == transcript.ToolResult:
					if tp.Status != "ok" {
						t.Errorf("result of %s: status %q", tp.CallID, tp.Status)
					}
					got = append(got, names[tp.CallID]+"="+tp.Output)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.calls, "|") {
				t.Errorf("calls with results %q; want %q", got, tt.calls)
			}
			// Groq states a stream's usage in x_groq.usage; before, the
			// stream had none.
			if u := r.Step.Usage; u == nil || u.InputTokens == nil || *u.InputTokens != tt.input || u.OutputTokens == nil || *u.OutputTokens != tt.output {
				t.Errorf("usage %+v; want input %d, output %d", u, tt.input, tt.output)
			}
		})
	}
}

// TestResponsesModeration: the moderation results of a Responses API
// response (one flat moderation_result per side, in the object and in
// the stream's response.completed) are a warning when they flagged
// something, as Chat Completions' are; before, nothing said that the
// input had been flagged (pydantic-ai's
// test_openai_responses_moderation_block_policy: flagged under a block
// policy, the response still complete).
func TestResponsesModeration(t *testing.T) {
	const (
		mod  = `"moderation":{"input":{"type":"moderation_result","model":"omni-moderation-latest","flagged":true,"categories":{"harassment":false,"violence":true}},"output":{"type":"moderation_result","model":"omni-moderation-latest","flagged":false,"categories":{"violence":false}}}`
		resp = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-2025-08-07","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"I can't help with that.","annotations":[]}]}],"usage":{"input_tokens":12,"output_tokens":8,"total_tokens":20},` + mod + `}`
	)
	const want = "openai moderation flagged the input: violence (omni-moderation-latest)"
	for _, in := range []string{resp, `{"type":"response.completed","sequence_number":9,"response":` + resp + `}`} {
		r, err := sdktest.Run(context.Background(), openai.Plugin, "openai", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if r.Step.Status != "ok" || len(r.Step.Warnings) != 1 || r.Step.Warnings[0] != want {
			t.Errorf("status %q, warnings %q; want ok, [%q]", r.Step.Status, r.Step.Warnings, want)
		}
	}
}

// TestResponsesProgressKeepsMessage: a hosted tool's progress events (the
// code interpreter's code, streamed as code deltas, hundreds of lines
// before the call's item is done) keep the response's message open. Before,
// the host closed it after 64 raw lines without news of it, and the rest
// of the response became a second message with neither model nor id, with
// a warning (pydantic-ai's test_openai_responses_code_execution_return_image
// stream, 270 events).
func TestResponsesProgressKeepsMessage(t *testing.T) {
	var b strings.Builder
	line := func(s string) { b.WriteString("data: " + s + "\n\n") }
	line(`{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5-2025-08-07","output":[]}}`)
	line(`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`)
	line(`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`)
	line(`{"type":"response.output_item.added","output_index":1,"item":{"id":"ci_1","type":"code_interpreter_call","status":"in_progress","code":"","container_id":"cntr_1","outputs":null}}`)
	line(`{"type":"response.code_interpreter_call.in_progress","output_index":1,"item_id":"ci_1"}`)
	for range 100 {
		line(`{"type":"response.code_interpreter_call_code.delta","output_index":1,"item_id":"ci_1","delta":"x"}`)
	}
	line(`{"type":"response.code_interpreter_call.completed","output_index":1,"item_id":"ci_1"}`)
	ci := `{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"print(1)","container_id":"cntr_1","outputs":[{"type":"logs","logs":"1\n"}]}`
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"It printed 1.","annotations":[]}]}`
	line(`{"type":"response.output_item.done","output_index":1,"item":` + ci + `}`)
	line(`{"type":"response.output_item.done","output_index":2,"item":` + msg + `}`)
	line(`{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-2025-08-07","output":[{"id":"rs_1","type":"reasoning","summary":[]},` + ci + `,` + msg + `],"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":10},"total_tokens":50}}}`)
	m := plugintest.OneAssistant(t, openai.Plugin, "openai", []byte(b.String()))
	if m.ID != "resp_1" || m.Model != "gpt-5-2025-08-07" || len(m.Blocks) != 4 || m.Usage == nil || m.Usage.OutputTokens == nil || *m.Usage.OutputTokens != 30 {
		t.Errorf("message id %q model %q, %d blocks, usage %+v; want resp_1, gpt-5-2025-08-07, 4 blocks (thinking, tool_use, tool_result, text), output 30", m.ID, m.Model, len(m.Blocks), m.Usage)
	}
}

// TestResponsesAnnotationsKeepMessage: an answer's url_citation
// annotations, one response.output_text.annotation.added event each (a
// web search's answer cites dozens), keep the response's message open
// as a hosted tool's progress does. Before, after 64 of them the host
// closed the message, and the output_text.done and output_item.done that
// followed wrote the answer's text again into a second message, with the
// usage, without id or model.
func TestResponsesAnnotationsKeepMessage(t *testing.T) {
	var b strings.Builder
	line := func(s string) { b.WriteString("data: " + s + "\n\n") }
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Answer.","annotations":[]}]}`
	line(`{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5","output":[]}}`)
	line(`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`)
	line(`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Answer."}`)
	for i := range 80 {
		line(`{"type":"response.output_text.annotation.added","item_id":"msg_1","output_index":0,"content_index":0,"annotation_index":` + strconv.Itoa(i) + `,"annotation":{"type":"url_citation","url":"https://example.com/","title":"t","start_index":0,"end_index":6}}`)
	}
	line(`{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"Answer."}`)
	line(`{"type":"response.output_item.done","output_index":0,"item":` + msg + `}`)
	line(`{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[` + msg + `],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}}`)
	r, err := sdktest.Run(context.Background(), openai.Plugin, "openai", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range r.Events {
		if e.Event.Type != transcript.MessageAssistant {
			continue
		}
		m := e.Event.Message()
		if m.ID != "resp_1" || m.Model != "gpt-5" {
			t.Errorf("message id %q model %q; want resp_1, gpt-5", m.ID, m.Model)
		}
		for _, bl := range m.Blocks {
			texts = append(texts, bl.Text)
		}
	}
	if len(r.Step.Warnings) != 0 || strings.Join(texts, "|") != "Answer." {
		t.Errorf("warnings %q, texts %q; want none, [Answer.]", r.Step.Warnings, texts)
	}
}
