//go:build !wasip1

package cline_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/cline/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "cline")

// TestGolden runs every golden case natively; -update rewrites them.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, capture.NativePlugin(cline.Plugin), golden.Options{Provider: "cline", Update: *update})
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "cline", cline.Plugin)
}
