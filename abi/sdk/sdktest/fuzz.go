package sdktest

import (
	"context"
	"os"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/wire"
)

// maxSeed bounds the size of a test input used as a fuzz seed: the
// fuzzer spends its time minimizing large seeds.
const maxSeed = 16 << 10

// Fuzz is a plugin's fuzz test, seeded with the golden inputs and
// captures opts names (those up to 16 KiB) and with seeds. Whatever the
// bytes, the plugin never faults and accounts for every raw line (spec
// §6.8: records, declared ignored or counted unmapped): through the
// host's pipeline, where every event it assembles must be a valid
// transcript line, and through the bare driver, one line a call and in
// full batches, where every record must decode and every span must point
// inside the call's input.
//
//	func FuzzMyAgent(f *testing.F) {
//		sdktest.Fuzz(f, myagent.Plugin, opts, []byte(`{"type":"x"}`))
//	}
func Fuzz(f *testing.F, p sdk.Plugin, opts Options, seeds ...[]byte) {
	for _, s := range append(testInputs(f, opts, maxSeed), seeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := Run(context.Background(), p, opts.Provider, raw)
		if err != nil {
			t.Fatal(err)
		}
		if r.Step.FailedLines != 0 {
			t.Fatalf("%d raw line(s) lost to a plugin fault: %q", r.Step.FailedLines, r.Step.Warnings)
		}
		if msg := r.silent(); msg != "" {
			t.Fatal(msg)
		}
		checkEvents(t, r.Events)
		drive(t, p.Driver(), opts.Provider, wire.Batches(raw, 1))
		drive(t, p.Driver(), opts.Provider, wire.Batches(raw, wire.MaxBatchLines))
	})
}

// Benchmark measures p alone through its driver, without the host's
// assembly (the batches are built beforehand): one stream per golden
// input and capture of opts, in full batches, per iteration.
func Benchmark(b *testing.B, p sdk.Plugin, opts Options) {
	var streams [][][]byte
	size := 0
	for _, in := range testInputs(b, opts, 0) {
		streams = append(streams, wire.Batches(in, wire.MaxBatchLines))
		size += len(in)
	}
	if len(streams) == 0 {
		b.Fatal("sdktest: no golden case and no capture to measure")
	}
	d := p.Driver()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, bs := range streams {
			drive(b, d, opts.Provider, bs)
		}
	}
}

// testInputs reads the golden inputs and captures of opts, those of at
// most max bytes (0: all).
func testInputs(tb testing.TB, opts Options, max int) [][]byte {
	tb.Helper()
	var paths []string
	if opts.Golden != "" {
		cases, err := golden.Cases(opts.Golden)
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range cases {
			paths = append(paths, c.Input)
		}
	}
	paths = append(paths, opts.Captures...)
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if max == 0 || len(b) <= max {
			out = append(out, b)
		}
	}
	return out
}

// drive runs one stream of batches through d, begun for provider. It
// fails when a call is fatal, when the records of a call do not decode,
// or when a span points outside the call's input.
func drive(tb testing.TB, d wire.Driver, provider string, bs [][]byte) {
	tb.Helper()
	if st, msg := d.Begin([]byte(`{"provider":"` + provider + `"}`)); st != wire.StatusOK {
		tb.Fatalf("begin: %d %s", st, msg)
	}
	for i, b := range bs {
		st, msg := d.Feed(b)
		if st == wire.StatusFatal {
			tb.Fatalf("feed batch %d: fatal: %s", i+1, msg)
		}
		checkRecords(tb, d.Output(), len(b))
	}
	st, msg := d.End()
	if st == wire.StatusFatal {
		tb.Fatalf("end: fatal: %s", msg)
	}
	checkRecords(tb, d.Output(), 0)
}

func checkRecords(tb testing.TB, out []byte, inputLen int) {
	tb.Helper()
	dec := wire.NewDecoder(out)
	for {
		rec, err := dec.Next()
		if err != nil {
			tb.Fatalf("records do not decode: %v", err)
		}
		if rec == nil {
			return
		}
		for _, f := range rec.Fields {
			if f.Kind == wire.VSpan && f.Off+f.N > inputLen {
				tb.Fatalf("op %d: span [%d,%d) beyond the input (%d bytes)", rec.Op, f.Off, f.Off+f.N, inputLen)
			}
		}
	}
}
