package wasminterrupt

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// bulkOps: fill (dst, value, n) is memory.fill, copy (dst, src, n)
// memory.copy, over one page of memory.
var bulkOps = wasmMod(
	sec(1, vec(fnType([]byte{i32, i32, i32}, nil))),
	sec(3, vec(leb(0), leb(0))),
	sec(5, vec([]byte{0, 1})),
	sec(7, vec(exportFn("fill", 0), exportFn("copy", 1))),
	sec(10, vec(
		body(0x20, 0, 0x20, 1, 0x20, 2, 0xfc, 0x0b, 0x00, 0x0b),
		body(0x20, 0, 0x20, 1, 0x20, 2, 0xfc, 0x0a, 0x00, 0x00, 0x0b),
	)),
)

// TestBulkHelpers runs memory.fill and memory.copy as the module has them
// and as Instrument rewrites them (calls of its fill and copy functions),
// on the same memory, and wants the same memory after every call and the
// same trap for every range outside the memory: every length the
// functions handle themselves and some past it, ranges that overlap in
// either direction, that end at the memory's end or one byte past it.
func TestBulkHelpers(t *testing.T) {
	ctx := context.Background()
	out, err := Instrument(bulkOps)
	if err != nil {
		t.Fatal(err)
	}
	// Each instruction is left once only, in its helper, for the lengths
	// the helper does not handle.
	if n, m := bytes.Count(out, memoryFill), bytes.Count(out, memoryCopy); n != 1 || m != 1 {
		t.Fatalf("%d memory.fill and %d memory.copy in the output, want 1 each (in the helpers)", n, m)
	}
	plain, rewritten := instantiate(t, bulkOps), instantiate(t, out)
	const size = 1 << 16
	pattern := make([]byte, size)
	for i := range pattern {
		pattern[i] = byte(i*7 + 3)
	}
	run := func(fn string, args ...uint64) {
		t.Helper()
		var mems [2][]byte
		var errs [2]error
		for i, mod := range []api.Module{plain, rewritten} {
			mod.Memory().Write(0, pattern)
			_, errs[i] = mod.ExportedFunction(fn).Call(ctx, args...)
			mems[i], _ = mod.Memory().Read(0, size)
		}
		if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && !strings.Contains(errs[1].Error(), "out of bounds memory access") {
			t.Fatalf("%s%v: %v, rewritten %v", fn, args, errs[0], errs[1])
		}
		if !bytes.Equal(mems[0], mems[1]) {
			at := 0
			for mems[0][at] == mems[1][at] {
				at++
			}
			t.Fatalf("%s%v: memory differs from byte %d: % x, rewritten % x", fn, args, at,
				mems[0][at:min(at+8, size)], mems[1][at:min(at+8, size)])
		}
	}
	lengths := func(yield func(int) bool) {
		for n := range copyInline + 10 {
			if !yield(n) {
				return
			}
		}
		for n := fillInline - 9; n <= fillInline+9; n++ {
			if !yield(n) {
				return
			}
		}
	}
	calls := 0
	for n := range lengths {
		for _, v := range []uint64{0, 0xab, 0x1ff} {
			for _, dst := range []int{0, 1, 5, 1000, size - n, size - n + 1, size + 1, 1<<32 - 1} {
				run("fill", uint64(uint32(dst)), v, uint64(n))
				calls++
			}
		}
		for _, src := range []int{100, size - n, size - n + 1} {
			for _, d := range []int{-9, -8, -1, 0, 1, 7, 8, 9, 17, 40, size} {
				dst := src + d
				if d == size {
					dst = 2 * size // outside
				}
				run("copy", uint64(uint32(dst)), uint64(uint32(src)), uint64(n))
				calls++
			}
		}
	}
	t.Logf("%d calls compared", calls)
}

// constFill is a memory.fill of a constant value and length.
type constFill struct {
	value int32
	n     uint32
}

// constFills is a module of one function per fill, exported as fill<i>:
// (a i64, dst i32) -> i64 sets an i64 local to a+7, fills at dst and
// returns the local, so that the local the rewriter adds must be
// numbered after the parameters and the locals.
func constFills(fills []constFill) []byte {
	var funcs, exports, bodies [][]byte
	for i, f := range fills {
		funcs = append(funcs, leb(0))
		exports = append(exports, exportFn(fmt.Sprintf("fill%d", i), uint32(i)))
		code := cat([]byte{0x20, 0, 0x42, 7, 0x7c, 0x21, 2, 0x20, 1, 0x41}, wasmbin.AppendSLEB(nil, int64(f.value)),
			[]byte{0x41}, wasmbin.AppendSLEB(nil, int64(f.n)), memoryFill, []byte{0x20, 2, 0x0b})
		bodies = append(bodies, withLocals(vec(cat(leb(1), []byte{i64})), code...))
	}
	return wasmMod(sec(1, vec(fnType([]byte{i64, i32}, []byte{i64}))), sec(3, vec(funcs...)),
		sec(5, vec([]byte{0, 1})), sec(7, vec(exports...)), sec(10, vec(bodies...)))
}

// TestConstantFills runs memory.fill of a constant value and length as
// the module has it and as Instrument rewrites it (stores, inlineFill, for
// 1 to fillInline bytes; a call of fill for 0 bytes and past fillInline),
// and wants the same memory and result after every call and the same trap
// for every range outside the memory, as TestBulkHelpers does for the
// helpers.
func TestConstantFills(t *testing.T) {
	ctx := context.Background()
	var fills, inlined []constFill
	for _, v := range []int32{0, 0xab, 0x1ff, -1} {
		for n := range uint32(34) {
			fills = append(fills, constFill{v, n})
		}
		for n := uint32(fillInline - 9); n <= fillInline+2; n++ {
			fills = append(fills, constFill{v, n})
		}
	}
	for _, f := range fills {
		if f.n >= 1 && f.n <= fillInline {
			inlined = append(inlined, f)
		}
	}
	// Inlined, the fills leave no memory.fill and need no helper.
	out, err := Instrument(constFills(inlined))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, memoryFill); n != 0 {
		t.Fatalf("%d memory.fill left in the output of fills of 1 to %d bytes, want none", n, fillInline)
	}
	mod := constFills(fills)
	if out, err = Instrument(mod); err != nil {
		t.Fatal(err)
	}
	plain, rewritten := instantiate(t, mod), instantiate(t, out)
	const size = 1 << 16
	pattern := make([]byte, size)
	for i := range pattern {
		pattern[i] = byte(i*7 + 3)
	}
	calls := 0
	for i, f := range fills {
		fn := fmt.Sprintf("fill%d", i)
		n := int(f.n)
		for _, dst := range []int{0, 1, 5, 1000, size - n, size - n + 1, size + 1, 1<<32 - 1} {
			var mems [2][]byte
			var errs [2]error
			var res [2][]uint64
			for j, m := range []api.Module{plain, rewritten} {
				m.Memory().Write(0, pattern)
				res[j], errs[j] = m.ExportedFunction(fn).Call(ctx, 35, uint64(uint32(dst)))
				mems[j], _ = m.Memory().Read(0, size)
			}
			if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && !strings.Contains(errs[1].Error(), "out of bounds memory access") {
				t.Fatalf("%s (value %#x, %d bytes) at %d: %v, rewritten %v", fn, f.value, f.n, dst, errs[0], errs[1])
			}
			if errs[0] == nil && (res[0][0] != 42 || res[1][0] != 42) {
				t.Fatalf("%s at %d returned %d, rewritten %d, want 42", fn, dst, res[0][0], res[1][0])
			}
			if !bytes.Equal(mems[0], mems[1]) {
				at := 0
				for mems[0][at] == mems[1][at] {
					at++
				}
				t.Fatalf("%s (value %#x, %d bytes) at %d: memory differs from byte %d: % x, rewritten % x", fn, f.value, f.n, dst, at,
					mems[0][at:min(at+8, size)], mems[1][at:min(at+8, size)])
			}
			calls++
		}
	}
	t.Logf("%d calls compared", calls)
}

// TestLoopBeginsWithBulk: a loop whose block type takes the operands
// (multi-value) can begin with a bulk instruction, at the very offset
// where the loop's check goes. The check must come first: the rewriter
// used to put the helper's call there first and then cut the body
// backwards (a slice out of range: a panic on a valid module).
func TestLoopBeginsWithBulk(t *testing.T) {
	ctx := context.Background()
	ops := [][]byte{memoryFill, memoryCopy}
	for _, op := range ops {
		// (dst, v, n): local.get 0 1 2, loop (type 0) op end, end
		code := cat([]byte{0x20, 0, 0x20, 1, 0x20, 2, 0x03, 0x00}, op, []byte{0x0b, 0x0b})
		mod := wasmMod(
			sec(1, vec(fnType([]byte{i32, i32, i32}, nil))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 1})),
			sec(7, vec(exportFn("f", 0))),
			sec(10, vec(body(code...))),
		)
		if err := compiles(t, wazero.NewRuntime(ctx), mod); err != nil {
			t.Fatalf("% x: the test module does not compile: %v", op, err)
		}
		out, err := Instrument(mod)
		if err != nil {
			t.Fatalf("% x: %v", op, err)
		}
		m := instantiate(t, out)
		if _, err := m.ExportedFunction("f").Call(ctx, 8, 7, 16); err != nil {
			t.Fatalf("% x: %v", op, err)
		}
	}
}
