//go:build !wasip1

package codex_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// BenchmarkCodexNative reports the plugin's own throughput (batches built
// beforehand, as the host hands them over) and the native pipeline's
// (tapes, batches, plugin and event assembly).
func BenchmarkCodexNative(b *testing.B) {
	opts := sdktest.Options{Provider: "codex", Golden: goldenDir, Captures: captures(b)}
	b.Run("plugin", func(b *testing.B) { sdktest.Benchmark(b, codex.Plugin, opts) })
	b.Run("pipeline", func(b *testing.B) {
		var inputs [][]byte
		for _, f := range inputFiles(b, opts) {
			raw, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			inputs = append(inputs, raw)
		}
		size := 0
		for _, in := range inputs {
			size += len(in)
		}
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range inputs {
				if _, err := normalize.Run(context.Background(), normalize.NativeInstance(codex.Plugin), bytes.NewReader(raw), discard{},
					normalize.Options{Provider: "codex"}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// inputFiles are the golden inputs and captures of opts.
func inputFiles(tb testing.TB, opts sdktest.Options) []string {
	cases, err := golden.Cases(opts.Golden)
	if err != nil {
		tb.Fatal(err)
	}
	var files []string
	for _, c := range cases {
		files = append(files, c.Input)
	}
	return append(files, opts.Captures...)
}

type discard struct{}

func (discard) Emit(context.Context, string, []*transcript.Event) error { return nil }
func (discard) OpenScope(context.Context, normalize.Scope) error        { return nil }
func (discard) CloseScope(context.Context, string, string, string) error {
	return nil
}
