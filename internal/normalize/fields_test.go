package normalize

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/wire"
)

// A span a plugin reports (a tool output, a file's content) is read
// with as many allocations whatever its size: it was unquoted into a
// buffer grown from nothing (a copy per doubling) and then copied once
// more into the string, and each string of a JSON value the same way, so
// a large output cost several times its size in copies and fresh memory.
// The values are what they were: the unquoted text, compact JSON, quoted
// text.
func TestFieldSpansAllocateOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field func(lit, obj []byte) wire.Field
		get   func(f *fields) string
		want  func(text string, lit []byte) string
	}{
		{"string span as a string",
			func(lit, obj []byte) wire.Field {
				return wire.Field{Tag: wire.TOutput, Kind: wire.VSpan, Off: 0, N: len(lit), Mode: wire.SpanString}
			},
			func(f *fields) string { return f.str(wire.TOutput) },
			func(text string, lit []byte) string { return text }},
		{"JSON span compacted",
			func(lit, obj []byte) wire.Field {
				return wire.Field{Tag: wire.TInput, Kind: wire.VSpan, Off: len(lit) + 1, N: len(obj), Mode: wire.SpanJSON}
			},
			func(f *fields) string { return string(f.json(wire.TInput)) },
			func(text string, lit []byte) string { return `{"path":"/a/b","content":` + string(lit) + `}` }},
		{"string span as JSON text",
			func(lit, obj []byte) wire.Field {
				return wire.Field{Tag: wire.TInput, Kind: wire.VSpan, Off: 0, N: len(lit), Mode: wire.SpanString}
			},
			func(f *fields) string { return string(f.json(wire.TInput)) },
			func(text string, lit []byte) string { return string(lit) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allocs := map[int]float64{}
			for _, n := range []int{10, 1000} {
				text := strings.Repeat("line with \"quotes\", a tab\t and \\u00e9 é\n", n)
				lit := jsonstr.AppendQuoted(nil, text)
				obj := []byte(`{ "path" : "/a/b", "content" : ` + string(lit) + ` }`)
				input := append(append(append([]byte{}, lit...), ' '), obj...)
				f := &fields{rec: &wire.Record{Fields: []wire.Field{tc.field(lit, obj)}}, input: input}
				if got, want := tc.get(f), tc.want(text, lit); got != want {
					t.Fatalf("%d lines: value differs: got %d bytes, want %d", n, len(got), len(want))
				}
				allocs[n] = testing.AllocsPerRun(10, func() { _ = tc.get(f) })
			}
			if allocs[1000] != allocs[10] {
				t.Errorf("%v allocations for 1000 lines, %v for 10: the count grows with the size", allocs[1000], allocs[10])
			}
		})
	}
}
