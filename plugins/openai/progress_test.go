//go:build !wasip1

package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

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
	r, err := sdktest.Run(context.Background(), openai.Plugin, "openai", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Step.Warnings) != 0 {
		t.Errorf("warnings %q; want none", r.Step.Warnings)
	}
	var msgs []*transcript.MessagePayload
	for _, e := range r.Events {
		if e.Event.Type == transcript.MessageAssistant {
			msgs = append(msgs, e.Event.Message())
		}
	}
	if len(msgs) != 1 {
		t.Fatalf("%d assistant messages; want 1", len(msgs))
	}
	if m := msgs[0]; m.ID != "resp_1" || m.Model != "gpt-5-2025-08-07" || len(m.Blocks) != 4 || m.Usage == nil || m.Usage.OutputTokens == nil || *m.Usage.OutputTokens != 30 {
		t.Errorf("message id %q model %q, %d blocks, usage %+v; want resp_1, gpt-5-2025-08-07, 4 blocks (thinking, tool_use, tool_result, text), output 30", m.ID, m.Model, len(m.Blocks), m.Usage)
	}
}
