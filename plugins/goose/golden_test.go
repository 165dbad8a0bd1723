//go:build !wasip1

package goose_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/goose/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "goose")

// TestGolden checks the plugin over its golden cases (sdktest.Test): each
// rendering is its golden file (-update rewrites them), no line is lost
// to a fault or left unaccounted for (spec §6.8), every event is a valid
// transcript line, and one line a call or three give the same rendering
// as full batches; so do the real captures of testdata/captures/goose,
// and checkFacts checks each run against what its raw input states.
func TestGolden(t *testing.T) {
	captures := plugintest.Captures(t, "goose", "*.jsonl")
	sdktest.Test(t, goose.Plugin, sdktest.Options{Provider: "goose", Golden: goldenDir, Captures: captures, Update: *update, Check: checkFacts})
}
