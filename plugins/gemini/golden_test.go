package gemini_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/gemini/*.golden.jsonl from the plugin's output")

// goldenDir is at the repo root because the wasm golden run (twasm golden
// check) reads the same cases.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "gemini")

func newNative() (normalize.Instance, error) { return normalize.NativeInstance(gemini.Plugin), nil }

// TestGolden runs every golden case natively; -update rewrites them.
func TestGolden(t *testing.T) {
	goldentest.Test(t, goldenDir, "gemini", newNative, *update)
}

// TestGoldenBatching runs the golden cases one line a call and in batches
// of three, as a live agent's output arrives: the same transcripts.
func TestGoldenBatching(t *testing.T) {
	plugintest.CheckGoldenBatching(t, goldenDir, "gemini", gemini.Plugin)
}
