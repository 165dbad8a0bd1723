package wasmdata

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// module builds a module with one memory of pages pages and the given raw
// data section body (nil: none), plus extra sections appended as is.
func module(pages byte, data []byte, extra ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 5, 3, 1, 0, pages) // memory section: one memory, min pages
	for _, e := range extra {
		b = append(b, e...)
	}
	if data != nil {
		b = append(b, sectionData)
		b = wasmbin.AppendULEB(b, uint64(len(data)))
		b = append(b, data...)
	}
	// A custom section after the data section must survive.
	return append(b, 0, 6, 3, 'e', 'n', 'd', 'x', 'y')
}

// active encodes active segments at the given offsets.
func active(segs ...segment) []byte {
	b := wasmbin.AppendULEB(nil, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, 0x41)
		b = wasmbin.AppendSLEB(b, int64(int32(s.off)))
		b = append(b, 0x0b)
		b = wasmbin.AppendULEB(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// cell is one non-zero byte of an initial memory.
type cell struct {
	addr uint32
	b    byte
}

// image is the initial memory a module's data section gives, as its
// non-zero bytes in address order (fresh memory is zero elsewhere).
func image(t *testing.T, wasm []byte) []cell {
	t.Helper()
	body := dataSection(t, wasm)
	if body == nil {
		return nil
	}
	segs, err := segments(body)
	if err != nil {
		t.Fatal(err)
	}
	var img []cell
	for _, s := range segs {
		for i, b := range s.data {
			if b != 0 {
				img = append(img, cell{s.off + uint32(i), b})
			}
		}
	}
	return img
}

// dataSection is the body of wasm's data section (the last one, as
// Compact takes it), nil without one.
func dataSection(t *testing.T, wasm []byte) (body []byte) {
	t.Helper()
	r := wasmbin.Reader{B: wasm, Pos: 8}
	for r.Left() > 0 {
		id, sec, err := r.Section("section")
		if err != nil {
			t.Fatal(err)
		}
		if id == sectionData {
			body = sec.B
		}
	}
	return body
}

// count is the number of segments in wasm's data section.
func count(t *testing.T, wasm []byte) int {
	t.Helper()
	body := dataSection(t, wasm)
	if body == nil {
		return 0
	}
	r := wasmbin.Reader{B: body}
	n, err := r.U32()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func compiles(t *testing.T, wasm []byte) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	if _, err := r.CompileModule(ctx, wasm); err != nil {
		t.Fatalf("wazero refuses the result: %v", err)
	}
}

func TestCompact(t *testing.T) {
	seg := func(off uint32, s string) segment { return segment{off: off, data: []byte(s)} }
	for _, tc := range []struct {
		name   string
		segs   []segment
		maxGap int
		want   int // segments after
	}{
		{"adjacent", []segment{seg(10, "ab"), seg(12, "cd")}, 0, 1},
		{"gap at the limit", []segment{seg(10, "ab"), seg(16, "cd")}, 4, 1},
		{"gap past the limit", []segment{seg(10, "ab"), seg(17, "cd")}, 4, 2},
		{"unsorted input", []segment{seg(100, "z"), seg(10, "ab"), seg(13, "cd"), seg(102, "y")}, 8, 2},
		{"high offsets (negative i32.const)", []segment{seg(0xffff0000, "a"), seg(0xffff0002, "b")}, 8, 1},
		{"one segment", []segment{seg(0, "abc")}, 8, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := module(1, active(tc.segs...))
			out, err := Compact(in, tc.maxGap)
			if err != nil {
				t.Fatal(err)
			}
			if got := count(t, out); got != tc.want {
				t.Fatalf("%d segments, want %d", got, tc.want)
			}
			if count(t, in) == tc.want && !bytes.Equal(in, out) {
				t.Fatal("nothing to merge, yet the module changed")
			}
			if !slices.Equal(image(t, in), image(t, out)) {
				t.Fatalf("image changed:\n%v\n%v", image(t, in), image(t, out))
			}
			if !bytes.HasSuffix(out, []byte{0, 6, 3, 'e', 'n', 'd', 'x', 'y'}) || !bytes.Equal(out[:13], in[:13]) {
				t.Fatal("other sections changed")
			}
			if tc.segs[0].off < 1<<31 {
				// (wazero takes seconds over a segment near 4 GiB.)
				compiles(t, out)
			}
		})
	}
}

func TestCompactLeavesAlone(t *testing.T) {
	two := func(first []byte) []byte { // first segment raw, then a normal one
		b := []byte{2}
		b = append(b, first...)
		return append(b, 0, 0x41, 20, 0x0b, 1, 'x')
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"passive segment", module(1, two([]byte{1, 1, 'p'})), ErrUnsupported},
		{"explicit memory index", module(1, two([]byte{2, 0, 0x41, 0, 0x0b, 1, 'm'})), ErrUnsupported},
		{"offset from a global", module(1, two([]byte{0, 0x23, 0, 0x0b, 1, 'g'})), ErrUnsupported},
		{"offset expression longer than a const", module(1, two([]byte{0, 0x41, 0, 0x41, 0, 0x6a, 0x0b, 1, 'e'})), ErrUnsupported},
		{"empty segment", module(1, two([]byte{0, 0x41, 0, 0x0b, 0})), ErrUnsupported},
		{"overlap", module(1, active(segment{10, []byte("abcd")}, segment{12, []byte("xy")})), ErrUnsupported},
		{"data count section", module(1, active(segment{0, []byte("a")}, segment{1, []byte("b")}), []byte{sectionDataCount, 1, 2}), ErrUnsupported},
		{"truncated segment", module(1, []byte{2, 0, 0x41, 0, 0x0b, 9, 'a'}), ErrMalformed},
		{"count larger than the segments", module(1, []byte{5, 0, 0x41, 0, 0x0b, 1, 'a'}), ErrMalformed},
		{"trailing bytes", module(1, append(active(segment{0, []byte("a")}), 7)), ErrMalformed},
		{"section longer than the module", []byte("\x00asm\x01\x00\x00\x00\x0b\x7f"), ErrMalformed},
		{"not wasm", []byte("hello"), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Compact(tc.in, 1<<20)
			if !errors.Is(err, tc.want) || out != nil {
				t.Fatalf("got %v (%d bytes), want %v", err, len(out), tc.want)
			}
		})
	}
	noData := module(1, nil)
	if out, err := Compact(noData, 64); err != nil || !bytes.Equal(out, noData) {
		t.Fatalf("no data section: %v", err)
	}
}

// TestCompactGoModule compacts a real Go-built plugin: the same image in a
// handful of segments, accepted by wazero.
func TestCompactGoModule(t *testing.T) {
	wasm := wasmbuild.ForTest(t, filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo"))
	out, err := Compact(wasm, 64)
	if err != nil {
		t.Fatal(err)
	}
	before, after := count(t, wasm), count(t, out)
	t.Logf("%d segments -> %d; %d bytes -> %d", before, after, len(wasm), len(out))
	if before < 1000 || after > 64 {
		t.Fatalf("%d segments -> %d: Go's linker or Compact changed", before, after)
	}
	if !slices.Equal(image(t, wasm), image(t, out)) {
		t.Fatal("the memory image changed")
	}
	compiles(t, out)
}

func FuzzCompact(f *testing.F) {
	f.Add(module(1, active(segment{10, []byte("ab")}, segment{14, []byte("cd")})), 4)
	f.Add(module(1, []byte{2, 1, 1, 'p', 0, 0x41, 20, 0x0b, 1, 'x'}), 8)
	if b, err := os.ReadFile(filepath.Join("..", "..", "bundled", "wasm", "echo.wasm")); err == nil {
		f.Add(b, 64)
	}
	f.Fuzz(func(t *testing.T, in []byte, maxGap int) {
		if maxGap < 0 {
			maxGap = -maxGap
		}
		out, err := Compact(in, maxGap%4096)
		if err != nil {
			if out != nil {
				t.Fatal("bytes with an error")
			}
			return
		}
		if !slices.Equal(image(t, in), image(t, out)) {
			t.Fatal("image changed")
		}
	})
}

func BenchmarkCompactGoModule(b *testing.B) {
	wasm := wasmbuild.ForTest(b, filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo"))
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := Compact(wasm, 64); err != nil {
			b.Fatal(err)
		}
	}
}
