//go:build !wasip1

package openai_test

import (
	"maps"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
)

// FuzzOpenAI: arbitrary bytes never make the plugin fault, through the host
// pipeline or the bare driver (sdktest.Fuzz).
func FuzzOpenAI(f *testing.F) {
	sdktest.Fuzz(f, openai.Plugin, sdktest.Options{Provider: "openai", Golden: goldenDir},
		[]byte("{\n  \"object\": \"chat.completion\",\n"),
		[]byte(`data: {"choices":[{"index":-1,"delta":{"tool_calls":[{"function":{"arguments":"\u0000"}},{"index":9e99}]}}]}`),
		[]byte(`{"type":"response.function_call_arguments.delta","item_id":"","delta":"{"}`+"\n"+`{"type":"response.completed"}`),
	)
}

// BenchmarkOpenAINative measures the plugin alone through sdk.Plugin.Driver over the
// golden inputs repeated to about 10 MB.
func BenchmarkOpenAINative(b *testing.B) {
	sdktest.Benchmark(b, openai.Plugin, sdktest.Options{Provider: "openai", Golden: goldenDir})
}

// TestOutcomes pins the step-level decisions on small inline streams.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		name, in, status, format string
		unmapped                 map[string]int
	}{
		{"chat stream cut before finish_reason is incomplete",
			`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
			"incomplete", "chat-sse", nil},
		{"[DONE] without finish_reason is ok",
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n",
			"ok", "chat-sse", nil},
		{"sse framing is not unmapped", "event: message\nid: 7\nretry: 100\n: ping\ndata:\ndata: [DONE]", "ok", "", nil},
		{"error body", `{"error":{"message":"","type":"","code":"rate_limit_exceeded"}}`, "error", "", nil},
		{"responses error event alone", `{"type":"error","code":"server_error","message":"boom","param":null}`, "error", "responses-sse", nil},
		{"responses cut after created", `{"type":"response.created","response":{"id":"r","status":"in_progress"}}`, "incomplete", "responses-sse", nil},
		{"responses cancelled", `{"id":"r","object":"response","status":"cancelled","output":[]}`, "error", "responses", nil},
		{"responses incomplete for another reason", `{"id":"r","object":"response","status":"incomplete","incomplete_details":{"reason":"interrupted"},"output":[]}`, "incomplete", "responses", nil},
		{"background response still in progress", `{"id":"r","object":"response","status":"in_progress","output":[]}`, "incomplete", "responses", nil},
		{"banner and unknown payloads are counted",
			"Welcome\n{\"object\":\"list\",\"data\":[]}\n{\"type\":\"session.created\"}\n[1,2]",
			"incomplete", "", map[string]int{"non_json": 1, "object/list": 1, "session.created": 1, "non_object": 2}},
		{"unclosed pretty object", "{\n  \"object\": \"chat.completion\",\n", "incomplete", "", map[string]int{"non_json": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := plugintest.Run(t, openai.Plugin, []byte(tt.in), normalize.Options{Provider: "openai"}).Result
			if res.Status != tt.status || res.Format != tt.format {
				t.Errorf("status, format = %q, %q; want %q, %q (error %q)", res.Status, res.Format, tt.status, tt.format, res.Error)
			}
			if !maps.Equal(res.Unmapped, tt.unmapped) {
				t.Errorf("unmapped = %v, want %v", res.Unmapped, tt.unmapped)
			}
			if res.FailedLines != 0 {
				t.Errorf("failed lines %d: %q", res.FailedLines, res.Warnings)
			}
		})
	}
}
