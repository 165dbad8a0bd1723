package codex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/plugins/plugintest"
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
// host pipeline (no failed lines, every event marshals; raw control bytes
// inside strings arrive escaped) or, split into lines, through the bare
// driver, one line a call and in full batches (no fatal call, every
// record decodes and its spans stay inside the input).
func FuzzCodex(f *testing.F) {
	for _, s := range seeds(f) {
		// Large seeds make the fuzzer spend its time minimizing them.
		if len(s) <= 16<<10 {
			f.Add(s)
		}
	}
	f.Add([]byte("{\"type\":\"item.completed\",\"item\":{\"id\":\"a\x00\",\"type\":\"command_execution\"}}\n"))
	f.Add([]byte(`{"timestamp":1,"type":"response_item","payload":{"type":"function_call","arguments":"{\"command\":[1,{}]}"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		plugintest.CheckRun(t, codex.Plugin, raw, normalize.Options{Provider: "codex"})
		plugintest.Drive(t, sdk.NewDriver(codex.Plugin), "codex", plugintest.Batches(raw, 1))
		plugintest.Drive(t, sdk.NewDriver(codex.Plugin), "codex", plugintest.Batches(raw, abi.MaxBatchLines))
	})
}
