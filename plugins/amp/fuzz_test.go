//go:build !wasip1

package amp_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/amp"
)

// FuzzAmp: arbitrary bytes never make the plugin fault, through the host
// pipeline (raw control bytes inside strings arrive escaped) or the bare
// driver (sdktest.Fuzz).
func FuzzAmp(f *testing.F) {
	sdktest.Fuzz(f, amp.Plugin, sdktest.Options{Provider: "amp", Golden: goldenDir},
		[]byte(`{"id":7,"messages":[{"role":"assistant","messageId":1e30,"content":[{"type":"tool_use","id":"t","name":"Task","input":[1]}],"usage":{"model":"o3","inputTokens":"9","cacheCreationInputTokens":-1}}]}`),
		[]byte(`{"id":"T-a","messages":[{"role":"user","meta":{"sentAt":1e300},"content":[{"type":"tool_result","toolUseID":"t","run":{"status":"done","result":{"exitCode":99999999999999999999}}}]}]}`+"\n"+`{"id":"T-b","messages":[{"role":"info","content":[{"type":"summary","summary":{"type":"thread","thread":{}}}]}]}`),
		[]byte(`{"messages":[{"role":"assistant","state":{"type":"error","error":null},"content":{"type":"text"}}]}`),
	)
}
