//go:build !wasip1

package claude_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/claude/*.golden.jsonl from the plugin's output")

// goldenDir is shared with the wasm golden run, hence at the repo root.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "claude")

// TestGolden runs every golden case natively; -update rewrites them.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, capture.NativePlugin(claude.Plugin), golden.Options{Provider: "claude", Update: *update})
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three, as a live agent's output arrives: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "claude", claude.Plugin)
}
