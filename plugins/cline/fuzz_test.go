//go:build !wasip1

package cline_test

import (
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
)

// captureDir holds the real Cline captures (testdata/captures/README.md).
var captureDir = filepath.Join("..", "..", "testdata", "captures", "cline")

// captures are the real captures of testdata/captures/cline (none yet).
func captures(tb testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(captureDir, "*.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// FuzzCline: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzCline(f *testing.F) {
	sdktest.Fuzz(f, cline.Plugin, sdktest.Options{Provider: "cline", Golden: goldenDir, Captures: captures(f)},
		[]byte(`[{"role":"assistant","content":"<read_file>\n<path>a</path"},{"role":"user","content":"[read_file] Result:"}]`+"\n"),
		[]byte(`[{"role":"assistant","content":[{"type":"tool_use","input":"x"}]},{"role":"user","content":[{"type":"tool_result","content":[1,{"text":2}]}]}]`+"\n"),
		[]byte(`[{"type":"say","say":"api_req_started","text":"{\"tokensIn\":-1,\"cost\":\"x\",\"cancelReason\":1}","ts":"99999999999999999999"}]`+"\n"),
	)
}
