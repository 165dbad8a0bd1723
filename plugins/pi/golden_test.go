//go:build !wasip1

package pi_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/pi/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "pi")

// TestGolden runs every golden case natively; -update rewrites them.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, capture.NativePlugin(pi.Plugin), golden.Options{Provider: "pi", Update: *update})
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three, as a live agent's output arrives: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "pi", pi.Plugin)
}
