//go:build !wasip1

package droid_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/droid"
)

// captures are the Factory Droid captures of testdata/captures/droid.
func captures(tb testing.TB) []string { return plugintest.Captures(tb, "droid", "*.jsonl") }

// FuzzDroid: arbitrary bytes never make the plugin fault, through the host
// pipeline (raw control bytes inside strings arrive escaped) or the bare
// driver (sdktest.Fuzz).
func FuzzDroid(f *testing.F) {
	sdktest.Fuzz(f, droid.Plugin, sdktest.Options{Provider: "droid", Golden: goldenDir, Captures: captures(f)},
		[]byte(`{"$twasm":"file","path":"-x/a.settings.json","document":true}`+"\n"+`{"model":7,"tokenUsage":{"inputTokens":"1","thinkingTokens":-3,"outputTokens":1e30}}`+"\n"+`{"$twasm":"file","path":"-x/a.jsonl"}`+"\n"+`{"type":"message","id":"m","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"text":7}],"is_error":"yes"}]}}`),
		[]byte(`{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","id":{},"input":"x"},{"type":"thinking"}]}}`+"\n"+`{"type":"message","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"Error: Command failed (exit code: 99999999999999999999)"}]}}`),
	)
}
