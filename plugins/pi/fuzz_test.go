//go:build !wasip1

package pi_test

import (
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// captureDir holds the real Pi captures (testdata/captures/README.md).
var captureDir = filepath.Join("..", "..", "testdata", "captures", "pi")

// seeds are the golden inputs and the small captures.
func seeds(t testing.TB) [][]byte {
	return plugintest.Seeds(t, filepath.Join(goldenDir, "*.jsonl"), filepath.Join(captureDir, "*.jsonl"))
}

// FuzzPi: arbitrary bytes never make the plugin fault, through the host
// pipeline (raw control bytes inside strings arrive escaped) or the bare
// driver (plugintest.Fuzz).
func FuzzPi(f *testing.F) {
	plugintest.Fuzz(f, pi.Plugin, normalize.Options{Provider: "pi"}, append(seeds(f),
		[]byte("{\"type\":\"message\",\"id\":\"a\x00\",\"parentId\":null,\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"c\",\"content\":[{\"type\":\"text\",\"text\":\"Command exited with code 99999999999999999999\"}],\"isError\":true}}\n"),
		[]byte(`{"type":"message","id":"a","parentId":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":"{\"command\":[1]}"}],"stopReason":"aborted"}}`+"\n"+`{"type":"label","id":"b","parentId":"zz"}`),
		[]byte(`{"type":"message_end","message":{"role":"toolResult","toolCallId":"c","details":{"results":[{"messages":[1,{"role":"toolResult"}],"task":7}]}}}`),
	))
}
