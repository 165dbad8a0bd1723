//go:build !wasip1

package cline_test

import (
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

// captureDir holds the real Cline captures (testdata/captures/README.md).
var captureDir = filepath.Join("..", "..", "testdata", "captures", "cline")

// seeds are the golden inputs and the small captures.
func seeds(t testing.TB) [][]byte {
	return plugintest.Seeds(t, filepath.Join(goldenDir, "*.jsonl"), filepath.Join(captureDir, "*.jsonl"))
}

// FuzzCline: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (plugintest.Fuzz).
func FuzzCline(f *testing.F) {
	plugintest.Fuzz(f, cline.Plugin, normalize.Options{Provider: "cline"}, append(seeds(f),
		[]byte(`[{"role":"assistant","content":"<read_file>\n<path>a</path"},{"role":"user","content":"[read_file] Result:"}]`+"\n"),
		[]byte(`[{"role":"assistant","content":[{"type":"tool_use","input":"x"}]},{"role":"user","content":[{"type":"tool_result","content":[1,{"text":2}]}]}]`+"\n"),
		[]byte(`[{"type":"say","say":"api_req_started","text":"{\"tokensIn\":-1,\"cost\":\"x\",\"cancelReason\":1}","ts":"99999999999999999999"}]`+"\n"),
	))
}
