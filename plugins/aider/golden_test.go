//go:build !wasip1

package aider_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/aider"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/aider/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "aider")

// TestGolden checks the plugin over its golden cases (sdktest.Test): each
// rendering is its golden file (-update rewrites them), no line is lost
// to a fault or left unaccounted for (spec §6.8), every event is a valid
// transcript line, and one line a call or three give the same rendering
// as full batches; so do the captures.
func TestGolden(t *testing.T) {
	sdktest.Test(t, aider.Plugin, sdktest.Options{Provider: "aider", Golden: goldenDir, Captures: captures(t), Update: *update, Check: checkFacts})
}
