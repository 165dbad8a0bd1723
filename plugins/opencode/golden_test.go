//go:build !wasip1

package opencode_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/opencode/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "opencode")

// TestGolden checks the plugin over its golden cases and the real
// captures (sdktest.Test): each rendering is its golden file (-update
// rewrites them), no line is lost to a fault or left unaccounted for
// (spec §6.8), every event is a valid transcript line, and one line a
// call or three give the same rendering as full batches, as a live
// agent's output arrives; checkFacts checks each run against what the
// raw input states.
func TestGolden(t *testing.T) {
	captures := plugintest.Captures(t, "opencode", "*.jsonl")
	sdktest.Test(t, opencode.Plugin, sdktest.Options{Provider: "opencode", Golden: goldenDir, Captures: captures, Update: *update, Check: checkFacts})
}
