//go:build !wasip1

package kimi_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// captures are the Kimi captures of testdata/captures/kimi.
func captures(tb testing.TB) []string { return plugintest.Captures(tb, "kimi", "*.jsonl") }

// FuzzKimi: arbitrary bytes never make the plugin fault, through the host
// pipeline (raw control bytes inside strings arrive escaped) or the bare
// driver (sdktest.Fuzz).
func FuzzKimi(f *testing.F) {
	sdktest.Fuzz(f, kimi.Plugin, sdktest.Options{Provider: "kimi", Golden: goldenDir, Captures: captures(f)},
		[]byte(`{"$twasm":"source","path":"h/s/wire.jsonl"}`+"\n"+`{"timestamp":1e300,"message":{"type":"SubagentEvent","payload":{"parent_tool_call_id":"x","event":{"type":"ToolCall","payload":{"id":"x","function":{"name":"Agent","arguments":7}}}}}}`+"\n"+`{"timestamp":"t","message":{"type":"ToolCallPart","payload":{"arguments_part":"{"}}}`+"\n"+`{"message":{"type":"ToolResult","payload":{"tool_call_id":"x","return_value":{"is_error":true,"output":[{"text":1}]}}}}`),
		[]byte(`{"type":"context.append_loop_event","event":{"type":"step.end","usage":{"inputOther":"9","output":-1}}}`+"\n"+`{"type":"usage.record","model":7,"usage":[]}`+"\n"+`{"type":"context.append_message","message":{"role":"assistant","toolCalls":[{"id":"c","arguments":"{\\"a\\":"}]}}`+"\n"+`{"type":"turn.ended","reason":"failed","error":{"code":{}}}`),
	)
}
