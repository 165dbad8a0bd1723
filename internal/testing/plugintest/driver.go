package plugintest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/wire"
)

// GoldenInputs returns the raw inputs of the golden cases in dir (every
// file but the *.golden.jsonl expectations); none fails the test.
func GoldenInputs(tb testing.TB, dir string) [][]byte {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, f := range m {
		if strings.HasSuffix(f, ".golden.jsonl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		tb.Fatal("no golden inputs in", dir)
	}
	return out
}

// Seeds returns the fuzzing seeds of a plugin: the files the patterns
// match (golden inputs, captures), the *.golden.jsonl expectations
// excepted, of at most 16 KiB each (large seeds make the fuzzer spend its
// time minimizing them).
func Seeds(tb testing.TB, patterns ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, pattern := range patterns {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if strings.HasSuffix(f, ".golden.jsonl") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			if len(b) <= 16<<10 {
				out = append(out, b)
			}
		}
	}
	return out
}

// Corpus repeats inputs, each ending with a line feed, to at least size
// bytes (for benchmarks).
func Corpus(inputs [][]byte, size int) []byte {
	var corpus []byte
	for len(corpus) < size {
		for _, in := range inputs {
			corpus = append(corpus, in...)
			if len(in) > 0 && in[len(in)-1] != '\n' {
				corpus = append(corpus, '\n')
			}
		}
	}
	return corpus
}

// Batches cuts raw into driver batches of at most maxLines lines the way
// the host does: blank lines are skipped, every other line is indexed
// with wire.BuildTape (an empty tape when it is not JSON), and a batch
// stays within wire.MaxBatchBytes. Unlike the host it does not escape raw
// control bytes: the plugin sees such a line as not JSON.
func Batches(raw []byte, maxLines int) [][]byte {
	var out [][]byte
	var cur []byte
	n := 0
	flush := func() {
		if n > 0 {
			out = append(out, append(wire.AppendBatchHeader(nil, n), cur...))
		}
		cur, n = nil, 0
	}
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		toks, ok := wire.BuildTape(nil, line)
		if !ok {
			toks = nil
		}
		if n == maxLines || len(cur)+wire.BatchLineSize(len(line), len(toks)) > wire.MaxBatchBytes {
			flush()
		}
		cur = wire.AppendBatchLine(cur, i+1, line, toks)
		n++
	}
	flush()
	return out
}

// Drive runs one stream of batches through d, begun for provider. It
// fails the test when a call is fatal, when the records of a call do not
// decode, or when a span points outside the call's input.
func Drive(tb testing.TB, d wire.Driver, provider string, bs [][]byte) {
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

// Fuzz fuzzes p, seeded with seeds (the golden inputs, say): whatever the
// bytes, the host pipeline runs them without a fault ([CheckRun], with
// opts), and so does the bare driver, one line a call and in full batches
// ([Drive]).
func Fuzz(f *testing.F, p sdk.Plugin, opts normalize.Options, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		CheckRun(t, p, raw, opts)
		Drive(t, p.Driver(), opts.Provider, Batches(raw, 1))
		Drive(t, p.Driver(), opts.Provider, Batches(raw, wire.MaxBatchLines))
	})
}

// Benchmark measures p alone through sdk.Plugin.Driver (no host assembly; the
// batches are built beforehand) over inputs repeated to about 10 MB.
func Benchmark(b *testing.B, p sdk.Plugin, provider string, inputs [][]byte) {
	corpus := Corpus(inputs, 10<<20)
	bs := Batches(corpus, wire.MaxBatchLines)
	d := p.Driver()
	b.SetBytes(int64(len(corpus)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Drive(b, d, provider, bs)
	}
}
