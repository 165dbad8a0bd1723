package wasmcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

func leb(v uint64) []byte { return wasmbin.AppendULEB(nil, v) }

func sec(id byte, body ...byte) []byte {
	return append(append([]byte{id}, leb(uint64(len(body)))...), body...)
}

func mod(secs ...[]byte) []byte {
	return append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Join(secs, nil)...)
}

var huge = leb(1<<32 - 1)

// Crafted modules that made wazero's decoder reserve memory for claims
// the file cannot hold; each is refused before it gets there.
var crafted = []struct {
	name string
	wasm []byte
}{
	// Like the one FuzzInstrument found: 20-odd bytes, 2^32-1 element
	// segments.
	{"element segments", mod(sec(9, append(huge, 0x00, 0x41, 0x00, 0x0b, 0x00)...))},
	// Found 2026-11-30: form 7 (declarative, expressions) of the typed
	// reference (ref null 0), then 1,023,723,923 expressions: wazero
	// makes a []wasm.ConstantExpression (24 bytes each) of that length,
	// 24.6 GB, where Check had read 0x63 as the reference type and the
	// heap type 0x00 as a count of none.
	{"element of a typed reference", []byte("\x00asm\x01\x00\x00\x00\t\x1d\x01\ac\x00\x93\x93\x93\xe8\x03\x00\x00\x00\t0000000000000000")},
	// Form 5 (passive, funcref), 2^32-1 expressions: 96 GiB of
	// ConstantExpression.
	{"element expressions", mod(sec(9, append([]byte{1, 5, 0x70}, huge...)...))},
	// Two tables of 2^27 elements (wazero's limit for one): 2 GiB of
	// references at instantiation.
	{"table elements", mod(sec(4, append(append(append([]byte{2, 0x70, 0}, leb(1<<27)...), 0x70, 0), leb(1<<27)...)...))},
	{"element function indexes", mod(sec(9, append([]byte{1, 0, 0x41, 0, 0x0b}, huge...)...))},
	{"section size", append(mod(), append([]byte{0}, huge...)...)},
	{"custom section", mod(append([]byte{0}, append(leb(1<<31), 1, 'x')...))},
	{"types", mod(sec(1, huge...))},
	{"parameters", mod(sec(1, append([]byte{1, 0x60}, huge...)...))},
	{"imports", mod(sec(2, huge...))},
	{"functions", mod(sec(3, huge...))},
	{"globals", mod(sec(6, huge...))},
	{"exports", mod(sec(7, huge...))},
	{"function bodies", mod(sec(10, huge...))},
	{"locals", mod(sec(10, append([]byte{1, 7, 1}, append(leb(1<<32-1), 0x7f, 0x0b)...)...))},
	{"data segments", mod(sec(11, huge...))},
	{"data bytes", mod(sec(11, append([]byte{1, 1}, huge...)...))},
	{"data count", mod(sec(12, huge...))},
	{"function names", mod(sec(0, append([]byte{4, 'n', 'a', 'm', 'e', 1, 5}, huge...)...))},
	{"local names", mod(sec(0, append([]byte{4, 'n', 'a', 'm', 'e', 2, 7, 1, 0}, huge...)...))},
	{"name string", mod(sec(0, append([]byte{4, 'n', 'a', 'm', 'e', 0, 6}, huge...)...))},
	{"truncated", mod(sec(1, 1, 0x60))[:12]},
	{"not wasm", []byte("hello, world")},
}

func TestCheckRefusesCrafted(t *testing.T) {
	for _, c := range crafted {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.wasm)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrRefused) {
				t.Fatalf("Check = %v", err)
			}
		})
	}
}

// compile compiles wasm with wazero and returns its error, or the panic
// it raised as an error that says so.
func compile(ctx context.Context, r wazero.Runtime, wasm []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("wazero panicked: %v", p)
		}
	}()
	c, err := r.CompileModule(ctx, wasm)
	if err == nil {
		c.Close(ctx)
	}
	return err
}

// TestCheckRefusesTypeIndexes: a type index out of range is refused
// where Check reads it (the function, import and tag sections); one in a
// function body, which Check does not decode, wazero refuses with an
// error before it uses it. A call to a function whose type index is out
// of range made wazero's validator panic (index out of range) before it
// got to that function's own check; the module is now refused first.
func TestCheckRefusesTypeIndexes(t *testing.T) {
	types := sec(1, 1, 0x60, 0, 0) // one type: () -> ()
	table := sec(4, 1, 0x70, 0, 1)
	code := func(bodies ...[]byte) []byte {
		b := leb(uint64(len(bodies)))
		for _, body := range bodies {
			b = append(append(b, leb(uint64(len(body)))...), body...)
		}
		return sec(10, b...)
	}
	cases := []struct {
		name   string
		wasm   []byte
		check  string // Check's refusal, "" when it accepts
		wazero string // wazero's error when Check accepts, "" when it compiles
	}{
		{"in range", mod(types, sec(3, 2, 0, 0), code([]byte{0, 0x10, 1, 0x0b}, []byte{0, 0x0b})), "", ""},
		{"function", mod(types, sec(3, 1, 5), code([]byte{0, 0x0b})),
			"a function of type index 5, out of range (1 types) (at byte 17)", ""},
		// The module that made wazero panic: function 0 calls function 1,
		// whose type wazero looked up before checking its index.
		{"called function", mod(types, sec(3, 2, 0, 5), code([]byte{0, 0x10, 1, 0x0b}, []byte{0, 0x0b})),
			"a function of type index 5, out of range (1 types)", ""},
		{"large index", mod(types, sec(3, 2, 0, 0xff, 0xff, 0xff, 0xff, 0x0f), code([]byte{0, 0x10, 1, 0x0b}, []byte{0, 0x0b})),
			"a function of type index 4294967295, out of range (1 types)", ""},
		{"no type section", mod(sec(3, 1, 0), code([]byte{0, 0x0b})),
			"a function of type index 0, out of range (0 types)", ""},
		{"function section before the type section", mod(sec(3, 1, 0), types, code([]byte{0, 0x0b})),
			"a function of type index 0, out of range (0 types)", ""},
		{"imported function", mod(types, sec(2, 1, 1, 'a', 1, 'b', 0, 1)),
			"an import of type index 1, out of range (1 types) (at byte 17)", ""},
		{"imported tag", mod(types, sec(2, 1, 1, 'a', 1, 'b', 4, 0, 3)),
			"an import of type index 3, out of range (1 types)", ""},
		{"tag", mod(types, sec(13, 1, 0, 2)), "a tag of type index 2, out of range (1 types)", ""},
		{"call_indirect", mod(types, sec(3, 1, 0), table, code([]byte{0, 0x41, 0, 0x11, 7, 0, 0x0b})),
			"", "invalid type index at call_indirect: 7"},
		{"block type", mod(types, sec(3, 1, 0), code([]byte{0, 0x02, 7, 0x0b, 0x0b})),
			"", "type index out of range: 7"},
		{"loop type", mod(types, sec(3, 1, 0), code([]byte{0, 0x03, 7, 0x0b, 0x0b})),
			"", "type index out of range: 7"},
		{"if type", mod(types, sec(3, 1, 0), code([]byte{0, 0x41, 0, 0x04, 7, 0x0b, 0x0b})),
			"", "type index out of range: 7"},
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.wasm)
			if c.check != "" {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(err.Error(), c.check) {
					t.Fatalf("Check = %v; want a refusal with %q", err, c.check)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check = %v", err)
			}
			err = compile(ctx, r, c.wasm)
			if c.wazero == "" && err != nil || c.wazero != "" && (err == nil || !strings.Contains(err.Error(), c.wazero)) {
				t.Fatalf("wazero: %v; want %q", err, c.wazero)
			}
		})
	}
}

// Valid modules pass: the bundled plugins when they are built, and a
// module using every section.
func TestCheckAccepts(t *testing.T) {
	every := mod(
		sec(1, 1, 0x60, 1, 0x7f, 1, 0x7f),
		sec(2, 1, 3, 'e', 'n', 'v', 1, 'g', 3, 0x7f, 0),
		sec(3, 1, 0),
		sec(4, 1, 0x70, 0, 1),
		sec(5, 1, 0, 1),
		sec(6, 1, 0x7f, 1, 0x41, 0x2a, 0x0b),
		sec(7, 1, 1, 'f', 0, 0),
		sec(9, 1, 0, 0x41, 0, 0x0b, 1, 0),
		sec(12, 1),
		sec(10, 1, 6, 1, 1, 0x7f, 0x20, 0x00, 0x0b),
		sec(11, 1, 0, 0x41, 0, 0x0b, 2, 'h', 'i'),
		sec(0, 4, 'n', 'a', 'm', 'e', 1, 4, 1, 0, 1, 'f'),
	)
	if err := Check(every); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	if _, err := r.CompileModule(ctx, every); err != nil {
		t.Fatalf("the test module is not valid: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "bundled", "wasm", "*.wasm"))
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), ".") {
			continue // a module still being written by make (pluginbuild's temporary file)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// allocated is the bytes the process has allocated on the heap so far
// (runtime/metrics, no stop-the-world).
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// compileBound is what compiling a module Check accepts may allocate:
// 1 GiB, far above what a fuzzer's inputs of a few KiB need and far below
// a count the bytes cannot hold (2^32 items of 24 bytes are 96 GiB).
const compileBound = 1 << 30

// FuzzCheck: Check never panics, and a module it accepts makes wazero's
// compiler allocate at most compileBound bytes. A claim the bytes cannot
// hold either fails that assertion or, when the allocation itself fails,
// kills the worker ("fatal error: out of memory"), which the fuzzer
// reports as a crash too. BoundTables never panics on what Check
// accepts, and what it returns Check accepts too, with tables whose
// maxima sum to at most MaxTableElements.
func FuzzCheck(f *testing.F) {
	for _, c := range crafted {
		f.Add(c.wasm)
	}
	f.Add(mod(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 1, 2, 0, 0x0b)))
	// Function 0 calls function 1 (of type 0 here): a type index out of
	// range in its place made wazero's validator panic.
	f.Add(mod(sec(1, 1, 0x60, 0, 0), sec(3, 2, 0, 0), sec(10, 2, 4, 0, 0x10, 1, 0x0b, 2, 0, 0x0b)))
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if Check(wasm) != nil {
			return
		}
		before := allocated()
		if err := compile(ctx, r, wasm); err != nil && strings.HasPrefix(err.Error(), "wazero panicked") {
			t.Fatalf("a %d-byte module Check accepted: %v", len(wasm), err)
		}
		if n := allocated() - before; n > compileBound {
			t.Fatalf("compiling a %d-byte module Check accepted allocated %d bytes", len(wasm), n)
		}
		out, err := BoundTables(wasm)
		if err != nil {
			return
		}
		if err := Check(out); err != nil {
			t.Fatalf("Check refuses what BoundTables made of a module it accepted: %v", err)
		}
		var sum uint64
		for _, l := range tableLimits(t, out) {
			if l.Flag != 1 || l.Max > MaxTableElements {
				t.Fatalf("table limits %+v after BoundTables", l)
			}
			sum += l.Max
		}
		if sum > MaxTableElements {
			t.Fatalf("table maxima sum to %d", sum)
		}
	})
}

// TestCheckForms: every constant-expression opcode and element-segment
// form is read to its end (a pre-filter need not validate, only know
// where each item ends), and what it cannot read is refused with the
// place and the reason.
func TestCheckForms(t *testing.T) {
	global := func(expr ...byte) []byte { return mod(sec(6, append([]byte{1, 0x7f, 0}, expr...)...)) }
	elem := func(seg ...byte) []byte { return mod(sec(9, append([]byte{1}, seg...)...)) }
	body := func(b []byte) []byte { return append(append([]byte{1}, leb(uint64(len(b)))...), b...) } // a code section of one body
	cases := []struct {
		name   string
		wasm   []byte
		reason string // "" when Check accepts
	}{
		{"i64.const", global(0x42, 0x80, 0x80, 0x01, 0x0b), ""},
		{"f32.const", global(0x43, 0, 0, 0x80, 0x3f, 0x0b), ""},
		{"f64.const", global(0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x0b), ""},
		{"global.get", global(0x23, 0, 0x0b), ""},
		{"ref.null", global(0xd0, 0x70, 0x0b), ""},
		{"ref.func", global(0xd2, 3, 0x0b), ""},
		{"extended constants", global(0x41, 1, 0x41, 2, 0x6a, 0x0b), ""},
		{"v128.const", global(append(append([]byte{0xfd, 12}, make([]byte, 16)...), 0x0b)...), ""},
		{"other 0xfd opcode", global(0xfd, 13, 0x0b), "opcode 0xfd 13 in a constant expression"},
		{"other opcode", global(0x20, 0, 0x0b), "opcode 0x20 in a constant expression"},
		{"cut f64", global(0x44, 0, 0), "a f64 of 8 bytes"},
		{"element form 1 (passive, kind)", elem(1, 0, 1, 0), ""},
		{"element form 2 (table, kind)", elem(2, 0, 0x41, 0, 0x0b, 0, 1, 0), ""},
		{"element form 4 (expressions)", elem(4, 0x41, 0, 0x0b, 1, 0xd2, 0, 0x0b), ""},
		{"element form 5 (passive, type, expressions)", elem(5, 0x70, 1, 0xd0, 0x70, 0x0b), ""},
		{"element form 7 (declarative)", elem(7, 0x70, 0), ""},
		{"element form 8", elem(8), "element segment form 8"},
		{"data form 1 (passive)", mod(sec(11, 1, 1, 2, 'h', 'i')), ""},
		{"data form 2 (memory index)", mod(sec(11, 1, 2, 0, 0x41, 0, 0x0b, 1, 'x')), ""},
		{"data form 3", mod(sec(11, 1, 3)), "data segment form 3"},
		{"tag section", mod(sec(1, 1, 0x60, 0, 0), sec(13, 1, 0, 0)), ""},
		{"start section", mod(sec(8, 0)), ""},
		{"unknown section", mod(sec(14)), "unknown section id 14"},
		{"type form", mod(sec(1, 1, 0x5f)), "type form 0x5f"},
		{"function body too big", mod(sec(10, append([]byte{1}, leb(MaxFunctionBytes+1)...)...)), "more than 7654321"},
		{"too many locals", mod(sec(10, body(append(append(append([]byte{2}, leb(MaxLocals)...), 0x7f), append(leb(1), 0x7f, 0x0b)...))...)), "more than 50000 locals"},
		{"element of a non-null typed reference", elem(6, 0, 0x41, 0, 0x0b, 0x64, 0x70, 0), "reference type 0x64"},
		{"element kind", elem(3, 0, 1, 0), ""},
		{"bytes after a section's items", mod(sec(9, 1, 1, 0, 0, 0x0b)), "1 bytes left at the end of the section 9"},
		{"tables at the element limit", mod(sec(4, append(append(append([]byte{2, 0x70, 0}, leb(MaxTableElements-1)...), 0x70, 0), leb(1)...)...)), ""},
		{"tables past the element limit", mod(sec(4, append(append(append([]byte{2, 0x70, 0}, leb(MaxTableElements)...), 0x70, 0), leb(1)...)...)), "tables of more than 10000000 elements in all"},
		{"table of a typed reference", mod(sec(4, 1, 0x63, 0, 1)), "reference type 0x63"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.wasm)
			if c.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), c.reason) || !strings.Contains(err.Error(), "(at byte ") {
				t.Fatalf("Check = %v; want a refusal with %q", err, c.reason)
			}
			if e.Offset < 8 || e.Offset > len(c.wasm) {
				t.Fatalf("offset %d outside the module's sections (8..%d)", e.Offset, len(c.wasm))
			}
		})
	}
}
