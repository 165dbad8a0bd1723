//go:build !wasip1

package openai_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenDir is at the repository root, where the wasm golden run
// (make golden) finds it too.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "openai")

// TestGolden runs every golden case natively; -update rewrites the
// expectations, whose diff is then reviewed line by line.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, capture.NativePlugin(openai.Plugin), golden.Options{Provider: "openai", Update: *update})
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three, as a live agent's output arrives: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "openai", openai.Plugin)
}
