//go:build !wasip1

package pi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// captureDir holds the real Pi captures (testdata/captures/README.md).
var captureDir = filepath.Join("..", "..", "testdata", "captures", "pi")

// seeds are the golden inputs and the small real captures.
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, pattern := range []string{filepath.Join(goldenDir, "*.jsonl"), filepath.Join(captureDir, "*.jsonl")} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if strings.HasSuffix(f, ".golden.jsonl") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// Large seeds make the fuzzer spend its time minimizing them.
			if len(b) <= 16<<10 {
				out = append(out, b)
			}
		}
	}
	return out
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
