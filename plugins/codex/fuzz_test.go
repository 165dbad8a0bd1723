package codex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/codex"
)

// feedLines runs the plugin natively over raw, split into lines, in
// batches of up to batchLines lines, the way the host does. It fails the
// test when a call returns StatusFatal or its records do not decode or
// point outside the call's input.
func feedLines(t testing.TB, raw []byte, batchLines int) {
	d := sdk.NewDriver(codex.Plugin)
	if st, msg := d.Begin([]byte(`{"provider":"codex"}`)); st != abi.StatusOK {
		t.Fatalf("begin: %d %s", st, msg)
	}
	var lines [][]byte
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	var toks []abi.Token
	for start := 0; start < len(lines); start += batchLines {
		end := min(start+batchLines, len(lines))
		batch := abi.AppendBatchHeader(nil, end-start)
		for i := start; i < end; i++ {
			tape, ok := abi.BuildTape(toks[:0], lines[i])
			if !ok {
				tape = tape[:0]
			}
			toks = tape
			batch = abi.AppendBatchLine(batch, i+1, lines[i], tape)
		}
		st, msg := d.Feed(batch)
		if st == abi.StatusFatal {
			t.Fatalf("feed lines %d-%d: fatal: %s", start+1, end, msg)
		}
		checkRecords(t, d.Output(), len(batch))
	}
	st, msg := d.End()
	if st == abi.StatusFatal {
		t.Fatalf("end: fatal: %s", msg)
	}
	checkRecords(t, d.Output(), 0)
}

func checkRecords(t testing.TB, out []byte, inputLen int) {
	dec := abi.NewDecoder(out)
	for {
		rec, err := dec.Next()
		if err != nil {
			t.Fatalf("records do not decode: %v", err)
		}
		if rec == nil {
			return
		}
		for _, f := range rec.Fields {
			if f.Kind == abi.VSpan && f.Off+f.N > inputLen {
				t.Fatalf("op %d: span [%d,%d) beyond the input (%d bytes)", rec.Op, f.Off, f.Off+f.N, inputLen)
			}
		}
	}
}

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

// FuzzCodex: arbitrary bytes, split into lines, never make the plugin
// fault, and its records always decode.
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
		feedLines(t, raw, 1)
		feedLines(t, raw, abi.MaxBatchLines)
	})
}
