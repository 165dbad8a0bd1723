//go:build !wasip1

package pi_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// captures are the real captures of testdata/captures/pi.
func captures(tb testing.TB) []string { return plugintest.Captures(tb, "pi", "*.jsonl") }

// FuzzPi: arbitrary bytes never make the plugin fault, through the host
// pipeline (raw control bytes inside strings arrive escaped) or the bare
// driver (sdktest.Fuzz).
func FuzzPi(f *testing.F) {
	sdktest.Fuzz(f, pi.Plugin, sdktest.Options{Provider: "pi", Golden: goldenDir, Captures: captures(f)},
		[]byte("{\"type\":\"message\",\"id\":\"a\x00\",\"parentId\":null,\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"c\",\"content\":[{\"type\":\"text\",\"text\":\"Command exited with code 99999999999999999999\"}],\"isError\":true}}\n"),
		[]byte(`{"type":"message","id":"a","parentId":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":"{\"command\":[1]}"}],"stopReason":"aborted"}}`+"\n"+`{"type":"label","id":"b","parentId":"zz"}`),
		[]byte(`{"type":"message_end","message":{"role":"toolResult","toolCallId":"c","details":{"results":[{"messages":[1,{"role":"toolResult"}],"task":7}]}}}`),
	)
}
