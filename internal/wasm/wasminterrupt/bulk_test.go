package wasminterrupt

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
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
