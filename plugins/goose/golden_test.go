//go:build !wasip1

package goose_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/goose/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "goose")

// TestGolden runs every golden case natively; -update rewrites them.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, capture.NativePlugin(goose.Plugin), golden.Options{Provider: "goose", Update: *update})
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three, as a live agent's output arrives: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "goose", goose.Plugin)
}
