//go:build !wasip1

package claude_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/claude"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/claude/*.golden.jsonl from the plugin's output")

// goldenDir is shared with the wasm golden run, hence at the repo root.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "claude")

// TestGolden checks the plugin over its golden cases (sdktest.Test): each
// rendering is its golden file (-update rewrites them), no line is lost
// to a fault or left unaccounted for (spec §6.8), every event is a valid
// transcript line, and one line a call or three give the same rendering
// as full batches, as a live agent's output arrives.
func TestGolden(t *testing.T) {
	sdktest.Test(t, claude.Plugin, sdktest.Options{Provider: "claude", Golden: goldenDir, Update: *update})
}
