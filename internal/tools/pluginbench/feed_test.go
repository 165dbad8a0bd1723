package pluginbench

import (
	"bytes"
	"context"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/wire"
)

// batches cuts data into the batches the host would send to a plugin
// that declared keys.
func batches(data []byte, keys *wire.KeySet) [][]byte {
	var out [][]byte
	var cur []byte
	n := 0
	var toks []wire.Token
	no := 0
	flush := func() {
		if n == 0 {
			return
		}
		cur[0], cur[1], cur[2], cur[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
		out = append(out, cur)
		cur, n = nil, 0
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		no++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if n == 0 {
			cur = wire.AppendBatchHeader(nil, 0)
		}
		var ok bool
		toks, ok = wire.BuildTapeKeys(toks[:0], line, keys)
		if !ok {
			toks = toks[:0]
		}
		cur = wire.AppendBatchLine(cur, no, line, toks)
		n++
		if n == wire.MaxBatchLines || len(cur) > wire.MaxBatchBytes {
			flush()
		}
	}
	flush()
	return out
}

// BenchmarkFeed isolates the plugin: the same pre-built batches go to the
// plugin natively and through wasm; no tape building, no assembly.
func BenchmarkFeed(b *testing.B) {
	for _, pl := range plugins {
		c := corpus(b, goldenInputs(b, pl.name))
		// Each copy a stream of its own, as in BenchmarkNormalize: the
		// same batches, Begin and End around each.
		copies := c.copies()
		bs := make([][][]byte, len(copies))
		for i, one := range copies {
			bs[i] = batches(one, declared(pl.p))
		}
		feed := func(b *testing.B, inst normalize.Instance) {
			b.SetBytes(int64(len(c.data)))
			ctx := context.Background()
			start := cpuTime()
			defer reportCPU(b, start, int64(len(c.data)))
			for i := 0; i < b.N; i++ {
				for _, one := range bs {
					if err := inst.Begin(ctx, abi.BeginOptions{Provider: pl.name}); err != nil {
						b.Fatal(err)
					}
					for _, batch := range one {
						if _, err := inst.Feed(ctx, batch); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := inst.End(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		b.Run(pl.name+"/native", func(b *testing.B) { feed(b, normalize.NativeInstance(pl.p)) })
		b.Run(pl.name+"/wasm", func(b *testing.B) {
			in := newInstance(b, wasmPlugin(b, pl.name, false))
			defer in.Close(context.Background())
			feed(b, in)
		})
	}
}

// declared is the key set the host marks in p's tapes, nil when p
// declares no keys.
func declared(p sdk.Plugin) *wire.KeySet {
	if p.Keys == nil {
		return nil
	}
	return wire.NewKeySet(p.Keys.Names()...)
}
