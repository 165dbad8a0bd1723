//go:build !wasip1

package codex_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// BenchmarkCodexNative reports the plugin's own throughput (batches built
// beforehand, as the host hands them over) and the native pipeline's
// (tapes, batches, plugin and event assembly).
func BenchmarkCodexNative(b *testing.B) {
	// The golden inputs and captures (every format and quirk) repeated
	// to about 10 MB, so the figure is a mix rather than one format's best
	// case.
	raw := plugintest.Corpus(seeds(b), 10<<20)
	b.Run("plugin", func(b *testing.B) {
		batches := plugintest.Batches(raw, wire.MaxBatchLines)
		d := codex.Plugin.Driver()
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			d.Begin(nil)
			for _, batch := range batches {
				if st, msg := d.Feed(batch); st == wire.StatusFatal {
					b.Fatal(msg)
				}
			}
			d.End()
		}
	})
	b.Run("pipeline", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := normalize.Run(context.Background(), normalize.NativeInstance(codex.Plugin), bytes.NewReader(raw), discard{},
				normalize.Options{Provider: "codex"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type discard struct{}

func (discard) Emit(context.Context, string, []*transcript.Event) error { return nil }
func (discard) OpenScope(context.Context, normalize.Scope) error        { return nil }
func (discard) CloseScope(context.Context, string, string, string) error {
	return nil
}
