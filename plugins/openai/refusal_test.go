//go:build !wasip1

package openai_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
)

// TestRefusalIsError: a response whose answer is a refusal (Chat
// Completions' message.refusal, streamed as delta.refusal; a Responses
// refusal content part, streamed as response.refusal.delta/.done) is an
// error naming the refusal, in a body and in a stream alike, as an
// Anthropic stop_reason refusal is (spec §6.7: the same situation gets
// the same status in every plugin). Before, each was ok. The refusal stays
// the message's text and the final answer; an answer without a refusal
// is still ok, and another choice that answered does not override a
// choice that refused.
func TestRefusalIsError(t *testing.T) {
	const (
		refused = "refusal: the model declined to answer: I can't help with that."
		chatRef = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`
		chatOK  = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Paris","refusal":null},"finish_reason":"stop"}]}`
		chatTwo = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"},{"index":1,"message":{"role":"assistant","content":"Paris"},"finish_reason":"stop"}]}`
		respRef = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]}]}`
		respOK  = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Paris","annotations":[]}]}]}`
	)
	chatSSE := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","refusal":"I can't help "},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"refusal":"with that."},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	respStream := `{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5","output":[]}}` + "\n" +
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}` + "\n" +
		`{"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"I can't help with that."}` + "\n" +
		`{"type":"response.refusal.done","item_id":"msg_1","output_index":0,"content_index":0,"refusal":"I can't help with that."}` + "\n" +
		`{"type":"response.completed","response":` + respRef + `}` + "\n"
	tests := []struct {
		name, in, status, err string
	}{
		{"chat body refused", chatRef, "error", refused},
		{"chat body answered", chatOK, "ok", ""},
		{"chat body, one choice refused, another answered", chatTwo, "error", refused},
		{"chat stream refused", chatSSE, "error", refused},
		{"responses body refused", respRef, "error", refused},
		{"responses body answered", respOK, "ok", ""},
		{"responses stream refused", respStream, "error", refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, openai.Plugin, []byte(tt.in), normalize.Options{Provider: "openai"})
			if o.Result.Status != tt.status || o.Result.Error != tt.err {
				t.Errorf("status %s (%q), want %s (%q)", o.Result.Status, o.Result.Error, tt.status, tt.err)
			}
			if tt.status == "error" && o.Result.FinalText != "I can't help with that." {
				t.Errorf("final text %q, want the refusal", o.Result.FinalText)
			}
		})
	}
}
