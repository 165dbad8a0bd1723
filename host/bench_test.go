package host

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/echoplugin"
	"github.com/twasm/twasm/internal/wire"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
)

// benchInput is a stream of batches of echo-style lines, with tapes, and
// its size in bytes of raw lines.
func benchInput(lines, perBatch int) (batches [][]byte, rawBytes int) {
	for no := 1; no <= lines; no += perBatch {
		ls := make([]string, 0, perBatch)
		for i := 0; i < perBatch && no+i <= lines; i++ {
			l := fmt.Sprintf(`{"type":"assistant","id":"msg_%06d","text":"I'll read the file first, then run the tests to see what fails: line %d"}`, no+i, no+i)
			rawBytes += len(l) + 1
			ls = append(ls, l)
		}
		batches = append(batches, batch(no, ls...))
	}
	return batches, rawBytes
}

// echoPlugin is the native build of the echo plugin: the baseline.
var echoPlugin = echoplugin.Plugin

// BenchmarkEcho runs the same stream through the echo plugin in wasm
// (bundled: no timeout; external: with the per-call timeout) and natively
// through sdk.Plugin.Driver.
func BenchmarkEcho(b *testing.B) {
	const lines, perBatch = 4096, 64
	batches, raw := benchInput(lines, perBatch)
	report := func(b *testing.B) {
		sec := b.Elapsed().Seconds()
		b.ReportMetric(float64(raw)*float64(b.N)/sec/1e6, "MB/s")
		b.ReportMetric(float64(lines)*float64(b.N)/sec, "lines/s")
		b.ReportMetric(0, "ns/op")
	}
	ctx := context.Background()
	for _, mode := range []struct {
		name    string
		bundled bool
	}{{"wasm-bundled", true}, {"wasm-external", false}} {
		b.Run(mode.name, func(b *testing.B) {
			rt := newRuntime(b, testOptions())
			p := load(b, rt, "echo", mode.bundled)
			in, err := p.newInstance(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close(ctx)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				in.Begin(ctx, abi.BeginOptions{Provider: "echo"})
				for _, bt := range batches {
					if _, err := in.Feed(ctx, bt); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := in.End(ctx); err != nil {
					b.Fatal(err)
				}
			}
			report(b)
		})
	}
	b.Run("native", func(b *testing.B) {
		d := echoPlugin.Driver()
		for i := 0; i < b.N; i++ {
			d.Begin([]byte(`{"provider":"echo"}`))
			for _, bt := range batches {
				if st, msg := d.Feed(bt); st != wire.StatusOK {
					b.Fatal(msg)
				}
				// The host copies the records out of the plugin; so
				// does this baseline.
				_ = append([]byte(nil), d.Output()...)
			}
			d.End()
		}
		report(b)
	})
}

// BenchmarkStartup measures a process's start: a new Runtime, then the
// echo plugin loaded from a warm compilation cache (compile from cache,
// instantiate, handshake).
func BenchmarkStartup(b *testing.B) {
	wasm := plugin(b, "echo")
	cache := b.TempDir()
	ctx := context.Background()
	cfg := set(testOptions(), func(o *Options) { o.CacheDir = cache })
	warm, err := New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := warm.Load(ctx, wasm, Source{Path: "echo.wasm", Bundled: true}); err != nil {
		b.Fatal(err)
	}
	warm.Close(ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rt, err := New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.Load(ctx, wasm, Source{Path: "echo.wasm", Bundled: true}); err != nil {
			b.Fatal(err)
		}
		rt.Close(ctx)
	}
}

// BenchmarkInstantiate measures a new instance when the pool is empty.
func BenchmarkInstantiate(b *testing.B) {
	rt := newRuntime(b, set(testOptions(), func(o *Options) { o.CacheDir = wasmbuild.TestCacheDir() + "/wazero" }))
	p := load(b, rt, "echo", true)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := p.instantiate(ctx)
		if err != nil {
			b.Fatal(err)
		}
		m.close(ctx)
	}
}

// BenchmarkStopLatency measures how late a call is stopped past its time
// limit (host doc: within a few milliseconds of the deadline plus the
// longest single instruction or host call), for guests that spin, fill
// 64 MiB of memory a pass, or loop on empty outputs, in both ways an
// external plugin is stopped. Tests assert that a guest is stopped, and
// with which error; how soon is this benchmark's to say.
func BenchmarkStopLatency(b *testing.B) {
	const timeout = 20 * time.Millisecond
	ctx := context.Background()
	for _, mode := range stopModes {
		for _, cmd := range []string{"spin", "fill", "outloop"} {
			b.Run(mode.name+"/"+cmd, func(b *testing.B) {
				rt := newRuntime(b, set(faultOptions(), func(o *Options) { o.CallTimeout = timeout; o.MemoryLimit = 256 << 20 }))
				p := loadAs(b, rt, "misbehave", mode.wasm)
				var late, worst time.Duration
				for i := 0; i < b.N; i++ {
					in, err := p.newInstance(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if err := in.Begin(ctx, abi.BeginOptions{}); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					_, err = in.Feed(ctx, batch(1, cmd))
					d := time.Since(start) - timeout
					in.Close(ctx)
					if !errors.Is(err, errTimeout) {
						b.Fatalf("%s: %v", cmd, err)
					}
					late += d
					worst = max(worst, d)
				}
				b.ReportMetric(float64(late.Microseconds())/1e3/float64(b.N), "ms-late/op")
				b.ReportMetric(float64(worst.Microseconds())/1e3, "ms-late-max")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
