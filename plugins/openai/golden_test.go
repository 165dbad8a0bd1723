//go:build !wasip1

package openai_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/openai"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenDir is at the repository root, where the wasm golden run
// (make golden) finds it too.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "openai")

// TestGolden checks the plugin over its golden cases (sdktest.Test): each
// rendering is its golden file (-update rewrites them), no line is lost
// to a fault or left unaccounted for (spec §6.8), every event is a valid
// transcript line, and one line a call or three give the same rendering
// as full batches, as a live agent's output arrives.
func TestGolden(t *testing.T) {
	sdktest.Test(t, openai.Plugin, sdktest.Options{Provider: "openai", Golden: goldenDir, Update: *update})
}
