package codex_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// corpus is the golden inputs (every format and quirk) repeated to about
// 10 MB, so the figure is a mix rather than one format's best case.
func corpus(b *testing.B) []byte {
	var one []byte
	for _, s := range seeds(b) {
		one = append(one, s...)
		if len(s) > 0 && s[len(s)-1] != '\n' {
			one = append(one, '\n')
		}
	}
	var all []byte
	for len(all) < 10<<20 {
		all = append(all, one...)
	}
	return all
}

// BenchmarkCodexNative reports the plugin's own throughput (batches built
// beforehand, as the host hands them over) and the native pipeline's
// (tapes, batches, plugin and event assembly).
func BenchmarkCodexNative(b *testing.B) {
	raw := corpus(b)
	b.Run("plugin", func(b *testing.B) {
		var batches [][]byte
		var toks []abi.Token
		lines := bytes.Split(raw, []byte("\n"))
		for start := 0; start < len(lines); start += abi.MaxBatchLines {
			end := min(start+abi.MaxBatchLines, len(lines))
			batch := abi.AppendBatchHeader(nil, end-start)
			for i := start; i < end; i++ {
				tape, ok := abi.BuildTape(toks[:0], lines[i])
				if !ok {
					tape = tape[:0]
				}
				toks = tape
				batch = abi.AppendBatchLine(batch, i+1, lines[i], tape)
			}
			batches = append(batches, batch)
		}
		d := sdk.NewDriver(codex.Plugin)
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			d.Begin(nil)
			for _, batch := range batches {
				if st, msg := d.Feed(batch); st == abi.StatusFatal {
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

func (discard) Emit(context.Context, string, *transcript.Event) error { return nil }
func (discard) OpenScope(context.Context, normalize.Scope) error      { return nil }
func (discard) CloseScope(context.Context, string, string, string) error {
	return nil
}
