package pluginbench

import (
	"bytes"
	"context"
	"testing"

	"github.com/twasm/twasm/normalize"
)

// BenchmarkMemory reports the steady size of a plugin instance's wasm
// memory: one trusted (bundled-mode) claude instance normalizes the claude
// corpus b.N times, and the largest linear memory seen after a pass is
// reported as wasm-bytes (the memory size after the last pass as
// wasm-bytes-end). Throughput is reported too but is the same work as
// BenchmarkNormalize/claude/wasm.
func BenchmarkMemory(b *testing.B) {
	data := corpus(b, goldenInputs(b, "claude"))
	b.Run("claude/wasm", func(b *testing.B) {
		p := wasmPlugin(b, "claude", false)
		ctx := context.Background()
		in, err := p.NewInstance(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close(ctx)
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		var most uint32
		for i := 0; i < b.N; i++ {
			var sink countSink
			res, err := normalize.Run(ctx, in, bytes.NewReader(data), &sink, normalize.Options{Provider: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			if res.FailedLines > 0 {
				b.Fatalf("%d lines failed: %v", res.FailedLines, res.Warnings)
			}
			most = max(most, in.MemorySize())
		}
		b.StopTimer()
		if most == 0 {
			b.Fatal("the instance reports no memory")
		}
		b.ReportMetric(float64(most), "wasm-bytes")
		b.ReportMetric(float64(in.MemorySize()), "wasm-bytes-end")
	})
}
