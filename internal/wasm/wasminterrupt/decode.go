package wasminterrupt

import "fmt"

// reader reads the binary format from b; base is b's offset in the
// module, for errors. Every read is bounds-checked and fails with an
// *Error rather than panicking.
type reader struct {
	b    []byte
	pos  int
	base int
}

func (r *reader) fail(kind error, reason string) error {
	return &Error{Offset: r.base + r.pos, Reason: reason, Err: kind}
}

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail(ErrMalformed, "unexpected end")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.fail(ErrMalformed, fmt.Sprintf("%d bytes past the end", n-(len(r.b)-r.pos)))
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// end checks that what was just read filled its container exactly.
func (r *reader) end(what string) error {
	if r.pos != len(r.b) {
		return r.fail(ErrMalformed, fmt.Sprintf("%d bytes left at the end of the %s", len(r.b)-r.pos, what))
	}
	return nil
}

// leb reads a LEB128 of at most max bytes and returns its low 64 bits,
// its last byte and its length.
func (r *reader) leb(max int, what string) (v uint64, last byte, n int, err error) {
	for n < max {
		c, err := r.byte()
		if err != nil {
			return 0, 0, 0, err
		}
		v |= uint64(c&0x7f) << (7 * n)
		n++
		if c < 0x80 {
			return v, c, n, nil
		}
	}
	return 0, 0, 0, r.fail(ErrMalformed, fmt.Sprintf("%s longer than %d bytes", what, max))
}

// u32 reads an unsigned LEB128 of at most 5 bytes whose unused bits are
// zero: what wazero accepts, so both agree on its length and value.
func (r *reader) u32() (uint32, error) {
	v, last, n, err := r.leb(5, "u32")
	if err == nil && n == 5 && last > 0x0f {
		err = r.fail(ErrMalformed, "u32 overflows")
	}
	return uint32(v), err
}

// skipLEB skips a LEB128 of at most max bytes.
func (r *reader) skipLEB(max int) error {
	_, _, _, err := r.leb(max, "LEB128")
	return err
}

// s33 reads a signed 33-bit LEB128 (a block type): at most 5 bytes.
func (r *reader) s33() (int64, error) {
	v, last, n, err := r.leb(5, "block type")
	if err != nil {
		return 0, err
	}
	s := int64(v)
	if last&0x40 != 0 {
		s |= -1 << (7 * n)
	}
	return s, nil
}

func (r *reader) name() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.take(int(n))
}

// valueTypes are the one-byte value types: i32, i64, f32, f64, v128,
// funcref, externref. Typed references (0x63, 0x64 and a heap type) and
// exnref are GC and exception handling: unsupported.
func isValueType(c byte) bool {
	return c == 0x7f || c == 0x7e || c == 0x7d || c == 0x7c || c == 0x7b || c == 0x70 || c == 0x6f
}

func isRefType(c byte) bool { return c == 0x70 || c == 0x6f }

func (r *reader) valueType() error { return r.typeByte(isValueType, "value type") }
func (r *reader) refType() error   { return r.typeByte(isRefType, "reference type") }

// typeByte reads a one-byte type; one that ok refuses is unsupported.
func (r *reader) typeByte(ok func(byte) bool, what string) error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if !ok(c) {
		r.pos--
		return r.fail(ErrUnsupported, fmt.Sprintf("%s %#x", what, c))
	}
	return nil
}

func (r *reader) globalType() error {
	if err := r.valueType(); err != nil {
		return err
	}
	mut, err := r.byte()
	if err != nil {
		return err
	}
	if mut > 1 {
		return r.fail(ErrMalformed, fmt.Sprintf("global mutability %#x", mut))
	}
	return nil
}

// limits reads the limits of a table or memory: a flag (0: min, 1: min
// and max), then u32s. Shared memories (threads) and 64-bit ones are
// unsupported.
func (r *reader) limits() error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag > 1 {
		return r.fail(ErrUnsupported, fmt.Sprintf("limits flag %#x (shared or 64-bit memory)", flag))
	}
	for range 1 + int(flag) {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// locals reads a function body's local declarations.
func (r *reader) locals() error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.u32(); err != nil {
			return err
		}
		if err := r.valueType(); err != nil {
			return err
		}
	}
	return nil
}

// decoder decodes instruction sequences. globals is the number of globals
// the module's own code may name.
type decoder struct {
	globals uint32
}

// code is what expr found in an instruction sequence.
type code struct {
	// loops are the offsets in r.b just after each loop's block type.
	loops []int
	// bulk are the offsets of the bulk memory and table instructions
	// whose cost grows with their last operand, a length (memory.init,
	// memory.copy, memory.fill, table.init, table.copy, table.grow,
	// table.fill).
	bulk []int
	// calls: the sequence calls a function.
	calls bool
}

// expr reads instructions up to and including the end that closes the
// enclosing block (a function body or a constant expression) and returns
// what it found.
func (d decoder) expr(r *reader) (c code, err error) {
	for depth := 1; depth > 0; {
		at := r.pos
		op, err := r.byte()
		if err != nil {
			return code{}, err
		}
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			if err := r.blockType(); err != nil {
				return code{}, err
			}
			depth++
			if op == 0x03 {
				c.loops = append(c.loops, r.pos)
			}
		case op == 0x0b: // end
			depth--
		case op <= 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b ||
			0x45 <= op && op <= 0xc4 || op == 0xd1:
			// unreachable, nop, else, return, drop, select, numeric
			// and sign-extension operators, ref.is_null: no immediate.
		case op == 0x0c || op == 0x0d || op == 0x10 || 0x20 <= op && op <= 0x22 ||
			op == 0x25 || op == 0x26 || op == 0x3f || op == 0x40 || op == 0xd2:
			// br, br_if, call, local.*, table.get/set, memory.size/grow
			// (a reserved index), ref.func: one index.
			_, err = r.u32()
			c.calls = c.calls || op == 0x10
		case op == 0x23 || op == 0x24: // global.get, global.set
			var idx uint32
			if idx, err = r.u32(); err == nil && idx >= d.globals {
				err = &Error{r.base + at, fmt.Sprintf("global index %d out of range (%d globals)", idx, d.globals), ErrMalformed}
			}
		case op == 0x0e: // br_table: a vector of labels and a default
			var n uint32
			if n, err = r.u32(); err == nil {
				err = r.skipU32s(uint64(n) + 1)
			}
		case op == 0x11: // call_indirect: type and table
			err = r.skipU32s(2)
			c.calls = true
		case op == 0x1c: // select with one type
			err = r.typedSelect()
		case 0x28 <= op && op <= 0x3e: // loads and stores: memarg
			err = r.memarg()
		case op == 0x41:
			err = r.skipLEB(5)
		case op == 0x42:
			err = r.skipLEB(10)
		case op == 0x43:
			_, err = r.take(4)
		case op == 0x44:
			_, err = r.take(8)
		case op == 0xd0: // ref.null
			err = r.refType()
		case op == 0xfc:
			var sized bool
			if sized, err = r.prefixFC(); sized {
				c.bulk = append(c.bulk, at)
			}
		default:
			// Tail calls (0x12, 0x13) would let a module recurse
			// forever without a loop or a stack overflow; the rest
			// (SIMD, threads, exceptions, GC) the decoder does not know.
			err = &Error{r.base + at, fmt.Sprintf("opcode %#x", op), ErrUnsupported}
		}
		if err != nil {
			return code{}, err
		}
	}
	return c, nil
}

func (r *reader) skipU32s(n uint64) error {
	for ; n > 0; n-- {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// blockType reads a block type: a type index, or in one byte empty
// (0x40) or a value type. wazero reads all three as one signed 33-bit
// LEB128; a negative value in more than one byte is refused rather than
// interpreted.
func (r *reader) blockType() error {
	at := r.pos
	v, err := r.s33()
	if err != nil {
		return err
	}
	if c := r.b[at]; v >= 0 || r.pos == at+1 && (c == 0x40 || isValueType(c)) {
		return nil
	}
	return &Error{r.base + at, fmt.Sprintf("block type %d", v), ErrUnsupported}
}

func (r *reader) typedSelect() error {
	at := r.pos
	n, err := r.u32()
	if err != nil {
		return err
	}
	if n != 1 || r.pos != at+1 {
		return r.fail(ErrMalformed, "typed select with other than one type")
	}
	return r.valueType()
}

// memarg reads an alignment and an offset. An alignment with bit 6 set
// names a memory (multiple memories): unsupported.
func (r *reader) memarg() error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align >= 0x40 {
		return r.fail(ErrUnsupported, fmt.Sprintf("memarg alignment %#x (multiple memories)", align))
	}
	_, err = r.u32()
	return err
}

// fcImmediates is how many index immediates each 0xFC instruction has:
// the saturating truncations (0-7) none, then the bulk memory and table
// instructions.
var fcImmediates = [...]uint64{
	0, 0, 0, 0, 0, 0, 0, 0,
	2, // memory.init data mem
	1, // data.drop data
	2, // memory.copy mem mem
	1, // memory.fill mem
	2, // table.init elem table
	1, // elem.drop elem
	2, // table.copy table table
	1, // table.grow table
	1, // table.size table
	1, // table.fill table
}

// prefixFC reads a 0xFC instruction after its prefix and reports whether
// its cost grows with a length operand.
func (r *reader) prefixFC() (sized bool, err error) {
	at := r.pos
	sub, err := r.u32()
	if err != nil {
		return false, err
	}
	if sub >= uint32(len(fcImmediates)) {
		return false, &Error{r.base + at, fmt.Sprintf("opcode 0xfc %d", sub), ErrUnsupported}
	}
	sized = sub == 8 || sub == 10 || sub == 11 || sub == 12 || sub == 14 || sub == 15 || sub == 17
	return sized, r.skipU32s(fcImmediates[sub])
}
