package wasminterrupt

import "github.com/twasm/twasm/internal/wasm/wasmbin"

// The memory.fill and memory.copy of a module (the bulk instructions Go
// and TinyGo emit for clearing and copying memory) become calls of two
// functions appended after the charge function, fill and copy, which take
// the instruction's operands and do its work: a small length (fillInline,
// copyInline bytes at most) with loads and stores of their own, any other
// with the instruction itself, its length charged first with the charge
// function's own code (chargeCode, inlined: one call fewer per
// instruction). A small length is not charged: its work is bounded by the
// helper's own code (at most fillInline/8 stores, or four loads and
// stores), as a function's that calls nothing is, and whatever calls the
// helper in a loop passes the loop's check. wazero's compiler makes each of these instructions
// a call of the Go runtime's memmove, and a memory.fill one call per
// doubling of the bytes filled so far (a 480-byte clear is 9 calls); a
// small length costs far more in those calls than in the bytes it moves.
//
// Their work is the instruction's to the byte: a range outside the memory
// goes to the instruction, which traps as it would have (a length of 0
// included); copy loads every byte it moves before it stores any, so
// overlapping ranges copy as memory.copy copies them (TestBulkHelpers
// compares both on every small length, overlap and bound). Every access
// they make is bounds-checked by the engine like any other: a mistake
// here could corrupt the guest's own memory, never reach past it.

// fillInline and copyInline are the longest lengths fill and copy handle
// with their own stores.
const (
	fillInline = 256
	copyInline = 32
)

// bulkType is the type of fill and copy: (i32 i32 i32) -> ().
var bulkType = []byte{0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00}

// Instructions of the helpers' bodies.
const (
	opBlock   = 0x02
	opLoop    = 0x03
	opIf      = 0x04
	opEnd     = 0x0b
	opBr      = 0x0c
	opBrIf    = 0x0d
	opReturn  = 0x0f
	opCall    = 0x10
	opDrop    = 0x1a
	opGet     = 0x20
	opSet     = 0x21
	opI64Load = 0x29
	opI64L8U  = 0x31 // i64.load8_u
	opI64L32U = 0x35 // i64.load32_u
	opI64St   = 0x37
	opI64St8  = 0x3c
	opI64St16 = 0x3d
	opI64St32 = 0x3e
	opMemSize = 0x3f
	opI32Eqz  = 0x45
	opI32LtU  = 0x49
	opI32GtU  = 0x4b
	opI32GeU  = 0x4f
	opI64GtU  = 0x56
	opI32Add  = 0x6a
	opI32Sub  = 0x6b
	opI32ShrU = 0x76
	opI64Add  = 0x7c
	opI64Mul  = 0x7e
	opI64And  = 0x83
	opI64Shl  = 0x86
	opI64ExtU = 0xad // i64.extend_i32_u
	void      = 0x40
)

// asm appends instructions to a function body.
type asm []byte

func (a *asm) op(b ...byte)            { *a = append(*a, b...) }
func (a *asm) idx(op byte, v uint32)   { *a = appendU32(append(*a, op), v) }
func (a *asm) i32(v int32)             { *a = wasmbin.AppendSLEB(append(*a, 0x41), int64(v)) }
func (a *asm) i64(v int64)             { *a = wasmbin.AppendSLEB(append(*a, 0x42), v) }
func (a *asm) mem(op byte, off uint32) { *a = appendU32(append(*a, op, 0x00), off) } // alignment 1

// outside branches to label depth when [local addr, + local 2) is not
// inside the memory, computed in 64 bits.
func (a *asm) outside(addr uint32, depth uint32) {
	a.idx(opGet, addr)
	a.op(opI64ExtU)
	a.idx(opGet, 2)
	a.op(opI64ExtU, opI64Add, opMemSize, 0x00, opI64ExtU)
	a.i64(16)
	a.op(opI64Shl, opI64GtU)
	a.idx(opBrIf, depth)
}

// addr pushes local base + local 2 - back: the address back bytes before
// the end of the range at base.
func (a *asm) addr(base uint32, back int32) {
	a.idx(opGet, base)
	a.idx(opGet, 2)
	a.op(opI32Add)
	a.i32(back)
	a.op(opI32Sub)
}

// prologue starts the body of fill or copy: its local declarations and a
// block left for the instruction itself (its length, local 2, charged
// there) when the length is above inline or the range at one of the
// address locals is outside the memory.
func prologue(locals []byte, inline int32, addrs ...uint32) asm {
	a := append(asm(nil), locals...)
	a.op(opBlock, void)
	a.idx(opGet, 2)
	a.i32(inline)
	a.op(opI32GtU)
	a.idx(opBrIf, 0)
	for _, l := range addrs {
		a.outside(l, 0)
	}
	return a
}

// fillBody is fill(dst, value, n): memory.fill's operands.
//
//	block
//	  br_if 0 when n > fillInline or [dst, dst+n) is outside the memory
//	  w = the value's low byte in each byte of an i64
//	  if n >= 8
//	    end = dst + n - 8
//	    loop  store w at dst; dst += 8; br_if 0 when dst < end  end
//	    store w at end        ;; the last 8 bytes, overlapping
//	    return
//	  end
//	  block loop  br_if 1 when n == 0; n -= 1; store8 the value at dst+n; br 0  end end
//	  return
//	end
//	charge n
//	memory.fill dst value n
func fillBody(charge []byte) []byte {
	a := prologue([]byte{0x01, 0x02, 0x7e}, fillInline, 0) // locals: w, end (i64; end holds an i32)
	a.idx(opGet, 1)
	a.op(opI64ExtU)
	a.i64(0xff)
	a.op(opI64And)
	a.i64(0x0101010101010101)
	a.op(opI64Mul)
	a.idx(opSet, 3)
	a.idx(opGet, 2)
	a.i32(8)
	a.op(opI32GeU, opIf, void)
	a.addr(0, 8)
	a.op(opI64ExtU)
	a.idx(opSet, 4)
	a.op(opLoop, void)
	a.idx(opGet, 0)
	a.idx(opGet, 3)
	a.mem(opI64St, 0)
	a.idx(opGet, 0)
	a.i32(8)
	a.op(opI32Add)
	a.idx(0x22, 0) // local.tee dst
	a.op(opI64ExtU)
	a.idx(opGet, 4)
	a.op(0x54) // i64.lt_u
	a.idx(opBrIf, 0)
	a.op(opEnd)
	a.idx(opGet, 4)
	a.op(0xa7) // i32.wrap_i64
	a.idx(opGet, 3)
	a.mem(opI64St, 0)
	a.op(opReturn, opEnd)
	a.op(opBlock, void, opLoop, void)
	a.idx(opGet, 2)
	a.op(opI32Eqz)
	a.idx(opBrIf, 1)
	a.idx(opGet, 2)
	a.i32(1)
	a.op(opI32Sub)
	a.idx(opSet, 2)
	a.addr(0, 0)
	a.idx(opGet, 3)
	a.mem(opI64St8, 0)
	a.idx(opBr, 0)
	a.op(opEnd, opEnd, opReturn, opEnd)
	a.op(charge...)
	a.idx(opGet, 0)
	a.idx(opGet, 1)
	a.idx(opGet, 2)
	a.op(0xfc, 0x0b, 0x00) // memory.fill 0
	a.op(opEnd)
	return a
}

// copyBody is copy(dst, src, n): memory.copy's operands. Every length up
// to copyInline is moved as two or four overlapping loads, all made
// before the first store (0-3 bytes: the first, middle and last byte).
//
//	block
//	  br_if 0 when n > copyInline or either range is outside the memory
//	  n > 16:  load 8 at src, src+8, src+n-16, src+n-8; store them at dst...
//	  n >= 8:  load 8 at src, src+n-8; store
//	  n >= 4:  load 4 at src, src+n-4; store
//	  n >= 1:  load 1 at src, src+n/2, src+n-1; store
//	  return
//	end
//	charge n
//	memory.copy dst src n
func copyBody(charge []byte) []byte {
	a := prologue([]byte{0x01, 0x04, 0x7e}, copyInline, 0, 1) // locals 3-6: i64
	// move loads words (8 bytes, or as load and store say) at the given
	// places of the source and stores them at the same places of the
	// destination, then returns.
	type at struct {
		back int32 // from the end when > 0
		off  uint32
		half bool // at n>>1
	}
	place := func(base uint32, p at) {
		switch {
		case p.half:
			a.idx(opGet, base)
			a.idx(opGet, 2)
			a.i32(1)
			a.op(opI32ShrU, opI32Add)
		case p.back > 0:
			a.addr(base, p.back)
		default:
			a.idx(opGet, base)
		}
	}
	move := func(load, store byte, ats ...at) {
		for i, p := range ats {
			place(1, p)
			a.mem(load, p.off)
			a.idx(opSet, uint32(3+i))
		}
		for i, p := range ats {
			place(0, p)
			a.idx(opGet, uint32(3+i))
			a.mem(store, p.off)
		}
		a.op(opReturn)
	}
	when := func(op byte, n int32) {
		a.idx(opGet, 2)
		a.i32(n)
		a.op(op, opIf, void)
	}
	when(opI32GtU, 16)
	move(opI64Load, opI64St, at{off: 0}, at{off: 8}, at{back: 16}, at{back: 8})
	a.op(opEnd)
	when(opI32GeU, 8)
	move(opI64Load, opI64St, at{}, at{back: 8})
	a.op(opEnd)
	when(opI32GeU, 4)
	move(opI64L32U, opI64St32, at{}, at{back: 4})
	a.op(opEnd)
	a.idx(opGet, 2)
	a.op(opI32Eqz, opIf, void, opReturn, opEnd)
	// 1-3 bytes: the first, the middle and the last.
	move(opI64L8U, opI64St8, at{}, at{half: true}, at{back: 1})
	a.op(opEnd)
	a.op(charge...)
	a.idx(opGet, 0)
	a.idx(opGet, 1)
	a.idx(opGet, 2)
	a.op(0xfc, 0x0a, 0x00, 0x00) // memory.copy 0 0
	a.op(opEnd)
	return a
}

// inlineFill is the code that replaces "i32.const value  i32.const n
// memory.fill" (1 <= n <= fillInline), the address below them on the
// stack: it sets local tmp to the address and stores the value's byte n
// times, 8 bytes a store, with the store that ends at the last byte
// first. That store traps exactly when memory.fill would, before any
// byte is written: every other store lies below it and above the
// address. No charge: the stores are the function's own code, which
// runs at most once between two checks.
//
//	local.set tmp
//	n >= 8: i64.store w at tmp+n-8, then at tmp+8k for each 8k < n-8 (down to 0)
//	n < 8:  the same with i64.store32 (n >= 4), i64.store16 (n >= 2) or i64.store8
func inlineFill(tmp uint32, value byte, n uint32) []byte {
	var a asm
	a.idx(opSet, tmp)
	w := int64(uint64(value) * 0x0101010101010101)
	store := func(op byte, off uint32) {
		a.idx(opGet, tmp)
		a.i64(w)
		a.mem(op, off)
	}
	width, op := uint32(8), byte(opI64St)
	switch {
	case n < 2:
		width, op = 1, opI64St8
	case n < 4:
		width, op = 2, opI64St16
	case n < 8:
		width, op = 4, opI64St32
	}
	store(op, n-width)
	for k := (n - 1) / width; k > 0; k-- {
		store(op, (k-1)*width)
	}
	return a
}

// Canonical encodings of the two instructions the helpers replace: any
// other encoding (an index in more bytes than one) keeps its charge.
var (
	memoryFill = []byte{0xfc, 0x0b, 0x00}
	memoryCopy = []byte{0xfc, 0x0a, 0x00, 0x00}
)
