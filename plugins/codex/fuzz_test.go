//go:build !wasip1

package codex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
)

// seeds are the golden inputs and the shared captures, when present.
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, pattern := range []string{filepath.Join(goldenDir, "*.jsonl"), filepath.Join(fixtureDir, "*.jsonl")} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if bytes.HasSuffix([]byte(f), []byte(".golden.jsonl")) {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// FuzzCodex: arbitrary bytes never make the plugin fault, through the
// host pipeline (raw control bytes inside strings arrive escaped) or the
// bare driver (plugintest.Fuzz).
func FuzzCodex(f *testing.F) {
	var small [][]byte
	for _, s := range seeds(f) {
		// Large seeds make the fuzzer spend its time minimizing them.
		if len(s) <= 16<<10 {
			small = append(small, s)
		}
	}
	plugintest.Fuzz(f, codex.Plugin, normalize.Options{Provider: "codex"}, append(small,
		[]byte("{\"type\":\"item.completed\",\"item\":{\"id\":\"a\x00\",\"type\":\"command_execution\"}}\n"),
		[]byte(`{"timestamp":1,"type":"response_item","payload":{"type":"function_call","arguments":"{\"command\":[1,{}]}"}}`),
	))
}
