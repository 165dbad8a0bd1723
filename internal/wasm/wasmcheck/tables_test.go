package wasmcheck

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// tableLimits reads the limits of the tables of a module BoundTables
// returned.
func tableLimits(t *testing.T, wasm []byte) []wasmbin.Limits {
	t.Helper()
	r := &reader{wasmbin.Reader{B: wasm, Pos: 8}}
	var out []wasmbin.Limits
	for r.Left() > 0 {
		id, body, err := r.Section("section")
		if err != nil {
			t.Fatal(err)
		}
		if id != 4 {
			continue
		}
		s := &reader{body}
		if err := s.vec(MaxTables, "tables", func() error {
			if err := s.RefType(); err != nil {
				return err
			}
			l, err := s.Limits()
			out = append(out, l)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.End("table section"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestBoundTables(t *testing.T) {
	const all = MaxTableElements
	typeSec := sec(1, 1, 0x60, 0, 0)
	custom := sec(0, 1, 'x', 7, 7)
	cases := []struct {
		name   string
		tables []byte // the table section's body; nil: no section
		want   []wasmbin.Limits
		same   bool // returned as it is
	}{
		{"no table section", nil, nil, true},
		{"no tables", []byte{0}, nil, true},
		// wasm-ld (TinyGo): maximum equal to the minimum.
		{"max equal to min", []byte{1, 0x70, 1, 0x15, 0x15}, []wasmbin.Limits{{Flag: 1, Min: 0x15, Max: 0x15}}, true},
		// Go's linker: no maximum.
		{"no maximum", append([]byte{1, 0x70, 0}, leb(12027)...), []wasmbin.Limits{{Flag: 1, Min: 12027, Max: all}}, false},
		{"maximum above the bound", append([]byte{1, 0x6f, 1, 3}, leb(1<<27)...), []wasmbin.Limits{{Flag: 1, Min: 3, Max: all}}, false},
		{"two tables share what the minimums leave", append([]byte{2, 0x70, 0, 10, 0x6f, 1, 0}, leb(1<<27)...),
			[]wasmbin.Limits{{Flag: 1, Min: 10, Max: 10 + (all-10)/2}, {Flag: 1, Min: 0, Max: (all - 10) / 2}}, false},
		{"a small maximum is kept", []byte{2, 0x70, 1, 0, 5, 0x70, 0, 0},
			[]wasmbin.Limits{{Flag: 1, Min: 0, Max: 5}, {Flag: 1, Min: 0, Max: all / 2}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secs := [][]byte{custom, typeSec}
			if c.tables != nil {
				secs = append(secs, sec(4, c.tables...))
			}
			secs = append(secs, sec(5, 1, 0, 1), custom)
			wasm := mod(secs...)
			in := bytes.Clone(wasm)
			if err := Check(wasm); err != nil {
				t.Fatal(err)
			}
			out, err := BoundTables(wasm)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(wasm, in) {
				t.Fatal("input modified")
			}
			if same := len(out) > 0 && &out[0] == &wasm[0]; same != c.same {
				t.Errorf("returned as it is: %v, want %v", same, c.same)
			}
			got := tableLimits(t, out)
			if len(got) != len(c.want) {
				t.Fatalf("limits %+v, want %+v", got, c.want)
			}
			var sum uint64
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("table %d: %+v, want %+v", i, got[i], c.want[i])
				}
				sum += got[i].Max
			}
			if sum > all {
				t.Errorf("maxima sum to %d, more than %d", sum, all)
			}
			// Every other section is kept byte for byte, in its place.
			if !bytes.HasPrefix(out[8:], custom) || !bytes.HasSuffix(out, append(sec(5, 1, 0, 1), custom...)) {
				t.Errorf("other sections moved or changed: % x", out)
			}
			if err := Check(out); err != nil {
				t.Errorf("Check refuses the output: %v", err)
			}
			ctx := context.Background()
			rt := wazero.NewRuntime(ctx)
			defer rt.Close(ctx)
			if _, err := rt.CompileModule(ctx, out); err != nil {
				t.Errorf("wazero refuses the output: %v", err)
			}
		})
	}
}

func TestBoundTablesRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		wasm []byte
	}{
		{"64-bit table", mod(sec(4, 1, 0x70, 4, 1))},
		{"shared limits", mod(sec(4, 1, 0x70, 3, 1, 2))},
		{"two table sections", mod(sec(4, 1, 0x70, 0, 1), sec(4, 0))},
		{"truncated", mod(sec(4, 2, 0x70, 0, 1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BoundTables(c.wasm)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrRefused) {
				t.Fatalf("got %v, want an *Error", err)
			}
		})
	}
}
