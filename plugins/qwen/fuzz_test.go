//go:build !wasip1

package qwen_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// captures are the Qwen Code captures of testdata/captures/qwen.
func captures(tb testing.TB) []string { return plugintest.Captures(tb, "qwen", "*.jsonl") }

// FuzzQwen: arbitrary bytes never make the plugin fault, through the host
// pipeline (raw control bytes inside strings arrive escaped) or the bare
// driver (sdktest.Fuzz).
func FuzzQwen(f *testing.F) {
	sdktest.Fuzz(f, qwen.Plugin, sdktest.Options{Provider: "qwen", Golden: goldenDir, Captures: captures(f)},
		[]byte(`{"uuid":"a","sessionId":"s","type":"tool_result","message":{"parts":[{"functionResponse":{"id":7,"response":{"error":{"message":null}}}}]},"toolCallResult":{"callId":"a\u0000","status":"cancelled"}}`),
		[]byte(`{"uuid":"a","sessionId":"s","type":"assistant","isSidechain":true,"agentId":"x","message":{"parts":[{"functionCall":{"id":"c","name":"agent","args":[1]}}]},"usageMetadata":{"promptTokenCount":"9","thoughtsTokenCount":-1,"totalTokenCount":1e30}}`+"\n"+`{"uuid":"b","sessionId":"s","type":"tool_result","message":{"parts":[{"functionResponse":{"id":"c","name":"agent","response":{"output":"Exit Code: 99999999999999999999"}}}]},"toolCallResult":{"callId":"c","status":"success","resultDisplay":{"status":"failed","terminateReason":7}}}`),
		[]byte(`{"messages":[1,{"type":"gemini","toolCalls":[{"id":"x"}]}]}`+"\n"+`{"uuid":"z","type":"user"}`),
	)
}
