package wasmbin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

func leb(v uint64) []byte { return AppendULEB(nil, v) }

func str(s string) []byte { return append(leb(uint64(len(s))), s...) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// module is a module holding one import section with body.
func module(body []byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00\x02"), leb(uint64(len(body))), body)
}

func TestPrimitives(t *testing.T) {
	cases := []struct {
		name   string
		in     []byte
		read   func(r *Reader) (any, error)
		want   any
		reason string // an error containing it, or "" for success
		unsup  bool
	}{
		{"u32", []byte{0xe5, 0x8e, 0x26}, func(r *Reader) (any, error) { return r.U32() }, uint32(624485), "", false},
		{"u32 max", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, func(r *Reader) (any, error) { return r.U32() }, uint32(1<<32 - 1), "", false},
		{"u32 overflows", []byte{0x80, 0x80, 0x80, 0x80, 0x10}, func(r *Reader) (any, error) { return r.U32() }, nil, "u32 overflows", false},
		{"u32 too long", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, func(r *Reader) (any, error) { return r.U32() }, nil, "longer than 5", false},
		{"u32 cut", []byte{0x80}, func(r *Reader) (any, error) { return r.U32() }, nil, "unexpected end", false},
		{"s32 -1", []byte{0x7f}, func(r *Reader) (any, error) { return r.S32() }, int32(-1), "", false},
		{"s32 -123456", []byte{0xc0, 0xbb, 0x78}, func(r *Reader) (any, error) { return r.S32() }, int32(-123456), "", false},
		{"s32 63", []byte{0x3f}, func(r *Reader) (any, error) { return r.S32() }, int32(63), "", false},
		{"s32 min", []byte{0x80, 0x80, 0x80, 0x80, 0x78}, func(r *Reader) (any, error) { return r.S32() }, int32(-1 << 31), "", false},
		{"s32 max", []byte{0xff, 0xff, 0xff, 0xff, 0x07}, func(r *Reader) (any, error) { return r.S32() }, int32(1<<31 - 1), "", false},
		{"s32 overflows", []byte{0x80, 0x80, 0x80, 0x80, 0x08}, func(r *Reader) (any, error) { return r.S32() }, nil, "i32 overflows", false},
		{"s32 too long", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, func(r *Reader) (any, error) { return r.S32() }, nil, "longer than 5", false},
		{"name", cat(str("env"), []byte{9}), func(r *Reader) (any, error) { b, err := r.Name(); return string(b), err }, "env", "", false},
		{"name past the end", []byte{5, 'a'}, func(r *Reader) (any, error) { return r.Name() }, nil, "4 past the end", false},
		{"count", []byte{2, 0, 0}, func(r *Reader) (any, error) { return r.Count(2, "items") }, uint32(2), "", false},
		{"count over the limit", []byte{3, 0, 0, 0}, func(r *Reader) (any, error) { return r.Count(2, "items") }, nil, "3 items, more than 2", false},
		{"count over the bytes", []byte{3, 0, 0}, func(r *Reader) (any, error) { return r.Count(9, "items") }, nil, "3 items claimed in the 2 bytes left", false},
		{"limits min", []byte{0, 1}, func(r *Reader) (any, error) { return r.Limits() }, Limits{0, 1, 0}, "", false},
		{"limits min max", []byte{1, 1, 2}, func(r *Reader) (any, error) { return r.Limits() }, Limits{1, 1, 2}, "", false},
		{"limits 64-bit", cat([]byte{5}, leb(1<<40), leb(1<<41)), func(r *Reader) (any, error) { return r.Limits() }, Limits{5, 1 << 40, 1 << 41}, "", false},
		{"limits 32-bit overflowing", cat([]byte{0}, leb(1<<40)), func(r *Reader) (any, error) { return r.Limits() }, nil, "u32", false},
		{"limits flag", []byte{8, 0}, func(r *Reader) (any, error) { return r.Limits() }, nil, "limits flag 0x8", false},
		{"global type", []byte{0x7e, 1}, func(r *Reader) (any, error) { return r.GlobalType() }, GlobalType{0x7e, 1}, "", false},
		{"typed reference", []byte{0x63, 0x70}, func(r *Reader) (any, error) { return nil, r.ValueType() }, nil, "value type 0x63", true},
		{"reference type", []byte{0x7f}, func(r *Reader) (any, error) { return nil, r.RefType() }, nil, "reference type 0x7f", true},
		{"end", []byte{1, 2}, func(r *Reader) (any, error) { r.Byte(); return nil, r.End("thing") }, nil, "1 bytes left at the end of the thing", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reader{B: c.in, Base: 100}
			got, err := c.read(r)
			if c.reason == "" {
				if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("got %v, %v; want %v", got, err, c.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Reason, c.reason) || e.Unsupported != c.unsup {
				t.Fatalf("got %#v; want an error with %q, unsupported %v", err, c.reason, c.unsup)
			}
			if e.Offset < 100 || e.Offset > 100+len(c.in) {
				t.Fatalf("offset %d outside the input (100..%d)", e.Offset, 100+len(c.in))
			}
		})
	}
}

// TestAppendRoundTrip: what AppendULEB and AppendSLEB write, U32 and S32
// read back, in as few bytes as the value needs.
func TestAppendRoundTrip(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 300, 1<<21 - 1, 1 << 28, 1<<32 - 1} {
		b := AppendULEB(nil, uint64(v))
		r := &Reader{B: b}
		if got, err := r.U32(); err != nil || got != v || r.Left() != 0 || len(b) != max(1, (bits.Len32(v)+6)/7) {
			t.Errorf("u32 %d: % x read as %d, %v", v, b, got, err)
		}
	}
	for _, v := range []int32{0, 1, -1, 63, 64, -64, -65, 1<<31 - 1, -1 << 31} {
		b := AppendSLEB(nil, int64(v))
		r := &Reader{B: b}
		if got, err := r.S32(); err != nil || got != v || r.Left() != 0 {
			t.Errorf("s32 %d: % x read as %d, %v", v, b, got, err)
		}
	}
}

func TestSection(t *testing.T) {
	in := cat([]byte{1}, leb(3), []byte{7, 8, 9}, []byte{0})
	r := &Reader{B: in, Base: 8}
	id, body, err := r.Section("section")
	if err != nil || id != 1 || !bytes.Equal(body.B, []byte{7, 8, 9}) || body.Base != 10 || body.Pos != 0 {
		t.Fatalf("got %d %+v %v", id, body, err)
	}
	if _, _, err := r.Section("section"); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Fatalf("a cut header: %v", err)
	}
	r = &Reader{B: []byte{1, 9, 0}}
	if _, _, err := r.Section("section"); err == nil || !strings.Contains(err.Error(), "a section of 9 bytes, 8 past the end") {
		t.Fatalf("a body past the end: %v", err)
	}
}

// importCases are import sections, read by TestImports and seeding
// FuzzImports.
var importCases = []struct {
	name   string
	body   []byte
	want   []Import // Offset is checked; Module and Name as strings
	reason string
}{
	{"every kind", cat(leb(5),
		str("env"), str("f"), []byte{0}, leb(300),
		str("env"), str("t"), []byte{1, 0x70, 1, 1, 10},
		str("env"), str("m"), []byte{2, 0, 2},
		str("env"), str("g"), []byte{3, 0x7f, 1},
		str("env"), str("e"), []byte{4, 0, 1}),
		[]Import{
			{Module: []byte("env"), Name: []byte("f"), Kind: ImportFunc, Index: 300, Offset: 1},
			{Module: []byte("env"), Name: []byte("t"), Kind: ImportTable, RefType: 0x70, Limits: Limits{1, 1, 10}, Offset: 10},
			{Module: []byte("env"), Name: []byte("m"), Kind: ImportMemory, Limits: Limits{0, 2, 0}, Offset: 21},
			{Module: []byte("env"), Name: []byte("g"), Kind: ImportGlobal, Global: GlobalType{0x7f, 1}, Offset: 30},
			{Module: []byte("env"), Name: []byte("e"), Kind: ImportTag, Index: 1, Offset: 39},
		}, ""},
	{"none", leb(0), nil, ""},
	{"unknown kind", cat(leb(1), str("a"), str("b"), []byte{5, 0}), nil, "import kind 0x5"},
	{"typed reference global", cat(leb(1), str("a"), str("b"), []byte{3, 0x64, 0x70, 0}), nil, "value type 0x64"},
	{"count past the bytes", cat(leb(900), str("a")), nil, "900 imports claimed in the 2 bytes left"},
	{"cut", cat(leb(1), str("a"), str("b")), nil, "unexpected end"},
}

func TestImports(t *testing.T) {
	for _, c := range importCases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reader{B: c.body}
			var got []Import
			err := r.Imports(1000, func(im Import) error { got = append(got, im); return nil })
			if c.reason != "" {
				if err == nil || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("got %v; want an error with %q", err, c.reason)
				}
				return
			}
			if err != nil || r.End("import section") != nil {
				t.Fatalf("Imports: %v; %d bytes left", err, r.Left())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	stop := errors.New("stop")
	r := &Reader{B: importCases[0].body}
	n := 0
	if err := r.Imports(1000, func(Import) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("the callback's error: %v after %d imports", err, n)
	}
	r = &Reader{B: importCases[0].body}
	if err := r.Imports(4, func(Import) error { return nil }); err == nil || !strings.Contains(err.Error(), "more than 4") {
		t.Fatalf("the limit: %v", err)
	}
}

// FuzzImports: reading any import section never panics, fails only with
// an *Error inside the input, hands out names that are the input's own
// bytes, and agrees with wazero: a module holding the section that
// wazero compiles imports the functions and memories this reader found,
// in order.
func FuzzImports(f *testing.F) {
	for _, c := range importCases {
		f.Add(c.body)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := &Reader{B: body, Base: 10}
		var funcs []string
		memories := 0
		last := -1
		err := r.Imports(1<<32-1, func(im Import) error {
			if im.Offset <= last || im.Offset < 10 || im.Offset >= 10+len(body) {
				t.Fatalf("import offset %d after %d, outside 10..%d", im.Offset, last, 10+len(body))
			}
			last = im.Offset
			for _, s := range [][]byte{im.Module, im.Name} {
				if len(s) > 0 && !inside(s, body) {
					t.Fatal("a name that is not the input's bytes")
				}
			}
			switch im.Kind {
			case ImportFunc:
				funcs = append(funcs, string(im.Module)+"."+string(im.Name))
			case ImportMemory:
				memories++
			}
			return nil
		})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 10 || e.Offset > 10+len(body) {
				t.Fatalf("error %#v outside the input", err)
			}
			return
		}
		if r.End("import section") != nil {
			return
		}
		c, err := rt.CompileModule(ctx, module(body))
		if err != nil {
			return // wazero validates more: types, limits
		}
		defer c.Close(ctx)
		var got []string
		for _, d := range c.ImportedFunctions() {
			m, n, _ := d.Import()
			got = append(got, m+"."+n)
		}
		if fmt.Sprint(got) != fmt.Sprint(funcs) || len(c.ImportedMemories()) != memories {
			t.Fatalf("wazero imports functions %q and %d memories; the reader found %q and %d",
				got, len(c.ImportedMemories()), funcs, memories)
		}
	})
}

// inside reports whether s is a sub-slice of b.
func inside(s, b []byte) bool {
	for i := range b {
		if &b[i] == &s[0] {
			return i+len(s) <= len(b)
		}
	}
	return false
}
