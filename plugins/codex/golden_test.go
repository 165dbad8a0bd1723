//go:build !wasip1

package codex_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/codex"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden/codex from the plugin's output")

// goldenDir holds the hand-written cases: one raw input per quirk, and
// the events the host assembles from the plugin's records.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "codex")

// TestGolden checks the plugin over its golden cases (sdktest.Test): each
// rendering is its golden file (-update rewrites them), no line is lost
// to a fault or left unaccounted for (spec §6.8), every event is a valid
// transcript line, and one line a call or three give the same rendering
// as full batches, as a live agent's output arrives.
func TestGolden(t *testing.T) {
	sdktest.Test(t, codex.Plugin, sdktest.Options{Provider: "codex", Golden: goldenDir, Update: *update})
}
