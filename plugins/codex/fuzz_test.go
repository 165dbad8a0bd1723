//go:build !wasip1

package codex_test

import (
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/codex"
)

// captures are the shared captures (../shared/fixtures/codex), when
// present.
func captures(tb testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// FuzzCodex: arbitrary bytes never make the plugin fault, through the
// host pipeline (raw control bytes inside strings arrive escaped) or the
// bare driver (sdktest.Fuzz).
func FuzzCodex(f *testing.F) {
	sdktest.Fuzz(f, codex.Plugin, sdktest.Options{Provider: "codex", Golden: goldenDir, Captures: captures(f)},
		[]byte("{\"type\":\"item.completed\",\"item\":{\"id\":\"a\x00\",\"type\":\"command_execution\"}}\n"),
		[]byte(`{"timestamp":1,"type":"response_item","payload":{"type":"function_call","arguments":"{\"command\":[1,{}]}"}}`),
	)
}
