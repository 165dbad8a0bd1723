//go:build !wasip1

package pi_test

import (
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/pi"
)

// captureDir holds the real Pi captures (testdata/captures/README.md).
var captureDir = filepath.Join("..", "..", "testdata", "captures", "pi")

// captures are the real captures of testdata/captures/pi.
func captures(tb testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(captureDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captures in %s: %v", captureDir, err)
	}
	return files
}

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
