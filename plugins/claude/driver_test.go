//go:build !wasip1

package claude_test

import (
	"context"
	"maps"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
)

// FuzzClaude: arbitrary bytes never make the plugin fault, through the host
// pipeline or the bare driver (sdktest.Fuzz).
func FuzzClaude(f *testing.F) {
	sdktest.Fuzz(f, claude.Plugin, sdktest.Options{Provider: "claude", Golden: goldenDir},
		[]byte("{\n  \"type\": \"result\"\n"),
		[]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":{"type":"input_json_delta","partial_json":"\u0000"}}}`),
	)
}

// BenchmarkClaudeNative measures the plugin alone through sdk.Plugin.Driver over the
// golden inputs repeated to about 10 MB.
func BenchmarkClaudeNative(b *testing.B) {
	sdktest.Benchmark(b, claude.Plugin, sdktest.Options{Provider: "claude", Golden: goldenDir})
}

// TestOutcomes pins the step-level decisions on small inline streams.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		name, in, status, format string
		unmapped                 map[string]int
	}{
		{"no terminal event is incomplete", `{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.0"}`, "incomplete", "stream-json", nil},
		{"success with is_error is an error", `{"type":"result","subtype":"success","is_error":true,"result":"boom"}`, "error", "json", nil},
		{"error subtype without text", `{"type":"result","subtype":"error_max_turns","is_error":false}`, "error", "json", nil},
		{"session log ending on a prompt is incomplete", `{"type":"user","sessionId":"s","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hi"},"uuid":"u"}`, "incomplete", "session-log", nil},
		{"answered session log is ok", `{"type":"user","sessionId":"s","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hi"},"uuid":"u"}` + "\n" +
			`{"type":"assistant","sessionId":"s","parentUuid":"u","isSidechain":false,"message":{"id":"m","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hello"}]},"uuid":"a"}`, "ok", "session-log", nil},
		{"session log ending on a dangling call is incomplete", `{"type":"assistant","sessionId":"s","parentUuid":null,"isSidechain":false,"message":{"id":"m","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},"uuid":"a"}`, "incomplete", "session-log", nil},
		{"session log error then answer is ok", `{"type":"assistant","sessionId":"s","parentUuid":null,"isSidechain":false,"isApiErrorMessage":true,"message":{"id":"m","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 overloaded"}]},"uuid":"a"}` + "\n" +
			`{"type":"user","sessionId":"s","parentUuid":"a","isSidechain":false,"message":{"role":"user","content":"again"},"uuid":"u"}` + "\n" +
			`{"type":"assistant","sessionId":"s","parentUuid":"u","isSidechain":false,"message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"text","text":"done"}]},"uuid":"b"}`, "ok", "session-log", nil},
		{"session log api error message", `{"type":"assistant","sessionId":"s","parentUuid":null,"isSidechain":false,"isApiErrorMessage":true,"message":{"id":"m","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 overloaded"}]},"uuid":"a"}`, "error", "session-log", nil},
		{"session log with error field", `{"type":"assistant","sessionId":"s","parentUuid":null,"isSidechain":false,"error":"rate_limit","message":{"id":"m","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"Rate limited"}]},"uuid":"u"}`, "error", "session-log", nil},
		{"sse cut before message_stop", `data: {"type":"message_start","message":{"id":"m","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1}}}`, "incomplete", "anthropic-sse", nil},
		{"sse framing is not unmapped", "event: ping\ndata: {\"type\":\"ping\"}\n\n: comment\ndata: [DONE]", "incomplete", "anthropic-sse", nil},
		{"api error object", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "error", "anthropic-messages", nil},
		{"banner only", "Welcome to Claude\n\x1b[31mred\x1b[0m", "incomplete", "", map[string]int{"non_json": 2}},
		{"unknown types are counted", `{"type":"ai-title","sessionId":"s","title":"x"}` + "\n" + `{"type":"system","subtype":"brand_new","session_id":"s"}` + "\n" + `{"type":"nova","sessionId":"s"}`, "ok", "session-log", map[string]int{"system/brand_new": 1, "nova": 1}},
		{"2.1.2xx bookkeeping records are not unmapped", `{"type":"teleported-from","remoteSessionId":"r1","branch":"main","messageCount":0}` + "\n" +
			`{"type":"bridge-session","sessionId":"s","bridgeSessionId":"cse_01x","lastSequenceNum":0}` + "\n" +
			`{"type":"user","sessionId":"s","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hi"},"uuid":"u"}` + "\n" +
			`{"type":"file-history-delta","messageId":"u","snapshotMessageId":"u","trackingPath":"notes.md","backup":{"backupFileName":"deadbeef@v1","version":1,"backupTime":"2026-09-30T10:00:04.500Z","realParentDir":"/w"},"timestamp":"2026-09-30T10:00:04.500Z"}` + "\n" +
			`{"type":"assistant","sessionId":"s","parentUuid":"u","isSidechain":false,"message":{"id":"m","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hello"}]},"uuid":"a"}` + "\n" +
			`{"type":"pr-link","sessionId":"s","prNumber":42,"prUrl":"https://github.com/o/r/pull/42","prRepository":"o/r","timestamp":"2026-09-30T10:00:05.000Z"}`, "ok", "session-log", nil},
		{"unclosed pretty object", "{\n  \"type\": \"result\",\n", "incomplete", "", map[string]int{"non_json": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := plugintest.Run(t, claude.Plugin, []byte(tt.in), normalize.Options{Provider: "claude"}).Result
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

// TestCostState pins the cost-state record of 2.1.28x session logs: its
// totalCostUSD is the step's provider-stated cost (set mode: the last
// record's figure, never a sum), the line is accounted for, and a
// cost-state without the figure is declared ignored, not unmapped.
func TestCostState(t *testing.T) {
	const (
		prompt = `{"type":"user","sessionId":"s","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hi"},"uuid":"u"}`
		answer = `{"type":"assistant","sessionId":"s","parentUuid":"u","isSidechain":false,"message":{"id":"m","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":3,"output_tokens":2}},"uuid":"a"}`
	)
	costState := func(c string) string {
		return `{"hasUnknownModelCost":false,"modelUsage":{"claude-x":{"inputTokens":3,"outputTokens":2,"costUSD":` + c + `}},"sessionId":"s","startTime":1790776181615,"totalCostUSD":` + c + `,"type":"cost-state"}`
	}
	tests := []struct {
		name string
		in   string
		cost float64 // -1: no cost stated
	}{
		{"one process", prompt + "\n" + answer + "\n" + costState("0.0009675"), 0.0009675},
		{"the last figure, not a sum", prompt + "\n" + answer + "\n" + costState("0.25") + "\n" + prompt + "\n" + answer + "\n" + costState("0.5"), 0.5},
		{"no figure", prompt + "\n" + answer + "\n" + `{"sessionId":"s","startTime":1,"type":"cost-state"}`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), claude.Plugin, "claude", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if res.Status != "ok" || res.Format != "session-log" {
				t.Errorf("status, format = %q, %q; want ok, session-log", res.Status, res.Format)
			}
			if len(res.Unmapped) != 0 {
				t.Errorf("unmapped = %v, want none", res.Unmapped)
			}
			switch {
			case tt.cost < 0 && res.CostUSD != nil:
				t.Errorf("cost = %v, want none", *res.CostUSD)
			case tt.cost >= 0 && (res.CostUSD == nil || *res.CostUSD != tt.cost):
				t.Errorf("cost = %v, want %v", res.CostUSD, tt.cost)
			}
			if r.SilentN != 0 {
				t.Errorf("%d silent line(s)", r.SilentN)
			}
		})
	}
}
