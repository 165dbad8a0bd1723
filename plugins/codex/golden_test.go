//go:build !wasip1

package codex_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden/codex from the plugin's output")

// goldenDir holds the hand-written cases: one raw input per quirk, and
// the events the host assembles from the plugin's records.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "codex")

// TestGolden runs every golden case natively; `go test ./plugins/codex
// -update` regenerates the expectations, whose diff is then reviewed.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, capture.NativePlugin(codex.Plugin), golden.Options{Provider: "codex", Update: *update})
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three, as a live agent's output arrives: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "codex", codex.Plugin)
}
