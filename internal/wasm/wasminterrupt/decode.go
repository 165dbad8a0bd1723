package wasminterrupt

import (
	"bytes"
	"fmt"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// reader reads the binary format (wasmbin: every read is bounds-checked
// and fails with a *wasmbin.Error, which Instrument turns into an *Error)
// and fails with an *Error of this package where the rewriter refuses
// what it read.
type reader struct{ wasmbin.Reader }

func (r *reader) fail(kind error, reason string) error {
	return &Error{Offset: r.Offset(), Reason: reason, Err: kind}
}

// s33 reads a signed 33-bit LEB128 (a block type): at most 5 bytes.
func (r *reader) s33() (int64, error) {
	v, last, n, err := r.LEB(5, "block type")
	if err != nil {
		return 0, err
	}
	s := int64(v)
	if last&0x40 != 0 {
		s |= -1 << (7 * n)
	}
	return s, nil
}

// globalType reads a global's type; a mutability other than 0 or 1 is
// malformed.
func (r *reader) globalType() error {
	g, err := r.GlobalType()
	if err == nil && g.Mut > 1 {
		err = r.fail(ErrMalformed, fmt.Sprintf("global mutability %#x", g.Mut))
	}
	return err
}

// locals reads a function body's local declarations: it returns their
// number of groups, where the groups begin (after that number) and how
// many locals they declare.
func (r *reader) locals() (groups uint32, at int, count uint64, err error) {
	if groups, err = r.U32(); err != nil {
		return 0, 0, 0, err
	}
	at = r.Pos
	for range groups {
		n, err := r.U32()
		if err != nil {
			return 0, 0, 0, err
		}
		count += uint64(n)
		if err := r.ValueType(); err != nil {
			return 0, 0, 0, err
		}
	}
	return groups, at, count, nil
}

// decoder decodes instruction sequences. globals is the number of globals
// the module's own code may name.
type decoder struct {
	globals uint32
}

// code is what expr found in an instruction sequence.
type code struct {
	// loops are the offsets in r.B just after each loop's block type.
	loops []int
	// bulk are the bulk memory and table instructions whose cost grows
	// with their last operand, a length (memory.init, memory.copy,
	// memory.fill, table.init, table.copy, table.grow, table.fill).
	bulk []span
	// calls: the sequence calls a function.
	calls bool
}

// span is where an instruction lies in r.B: [at, end). For a
// memory.fill (canonical encoding) right after two canonical i32.consts,
// its value and length (fill, filled), from is where the first i32.const
// begins (at otherwise).
type span struct {
	at, end, from int
	fill          bool
	value         byte
	filled        uint32
}

// i32Const is an instruction as a memory.fill's operands are matched:
// whether it is an i32.const written canonically (the shortest LEB128,
// which wazero reads as the same value), and that value.
type i32Const struct {
	at  int
	ok  bool
	val int32
}

// constI32 decodes b, the immediate of an i32.const, and reports whether
// it is the canonical encoding of an int32.
func constI32(b []byte) (int32, bool) {
	var v int64
	var shift uint
	for i, c := range b {
		v |= int64(c&0x7f) << shift
		shift += 7
		if c < 0x80 {
			if c&0x40 != 0 && shift < 64 {
				v |= -1 << shift
			}
			ok := i == len(b)-1 && v == int64(int32(v)) && bytes.Equal(wasmbin.AppendSLEB(nil, v), b)
			return int32(v), ok
		}
	}
	return 0, false
}

// expr reads instructions up to and including the end that closes the
// enclosing block (a function body or a constant expression) and returns
// what it found.
func (d decoder) expr(r *reader) (c code, err error) {
	// The two instructions before this one, as i32.consts.
	var prev, prev2 i32Const
	for depth := 1; depth > 0; {
		at := r.Pos
		op, err := r.Byte()
		if err != nil {
			return code{}, err
		}
		cur := i32Const{at: at}
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			if err := r.blockType(); err != nil {
				return code{}, err
			}
			depth++
			if op == 0x03 {
				c.loops = append(c.loops, r.Pos)
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
			_, err = r.U32()
			c.calls = c.calls || op == 0x10
		case op == 0x23 || op == 0x24: // global.get, global.set
			var idx uint32
			if idx, err = r.U32(); err == nil && idx >= d.globals {
				err = &Error{r.Base + at, fmt.Sprintf("global index %d out of range (%d globals)", idx, d.globals), ErrMalformed}
			}
		case op == 0x0e: // br_table: a vector of labels and a default
			var n uint32
			if n, err = r.U32(); err == nil {
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
			if err = r.SkipLEB(5); err == nil {
				cur.val, cur.ok = constI32(r.B[at+1 : r.Pos])
			}
		case op == 0x42:
			err = r.SkipLEB(10)
		case op == 0x43:
			_, err = r.Take(4, "f32")
		case op == 0x44:
			_, err = r.Take(8, "f64")
		case op == 0xd0: // ref.null
			err = r.RefType()
		case op == 0xfc:
			var sized bool
			if sized, err = r.prefixFC(); sized {
				b := span{at: at, end: r.Pos, from: at}
				if prev.ok && prev2.ok && bytes.Equal(r.B[at:r.Pos], memoryFill) {
					b.from, b.fill, b.value, b.filled = prev2.at, true, byte(prev2.val), uint32(prev.val)
				}
				c.bulk = append(c.bulk, b)
			}
		default:
			// Tail calls (0x12, 0x13) would let a module recurse
			// forever without a loop or a stack overflow; the rest
			// (SIMD, threads, exceptions, GC) the decoder does not know.
			err = &Error{r.Base + at, fmt.Sprintf("opcode %#x", op), ErrUnsupported}
		}
		if err != nil {
			return code{}, err
		}
		prev2, prev = prev, cur
	}
	return c, nil
}

func (r *reader) skipU32s(n uint64) error {
	for ; n > 0; n-- {
		if _, err := r.U32(); err != nil {
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
	at := r.Pos
	v, err := r.s33()
	if err != nil {
		return err
	}
	if c := r.B[at]; v >= 0 || r.Pos == at+1 && (c == 0x40 || wasmbin.IsValueType(c)) {
		return nil
	}
	return &Error{r.Base + at, fmt.Sprintf("block type %d", v), ErrUnsupported}
}

func (r *reader) typedSelect() error {
	at := r.Pos
	n, err := r.U32()
	if err != nil {
		return err
	}
	if n != 1 || r.Pos != at+1 {
		return r.fail(ErrMalformed, "typed select with other than one type")
	}
	return r.ValueType()
}

// memarg reads an alignment and an offset. An alignment with bit 6 set
// names a memory (multiple memories): unsupported.
func (r *reader) memarg() error {
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align >= 0x40 {
		return r.fail(ErrUnsupported, fmt.Sprintf("memarg alignment %#x (multiple memories)", align))
	}
	_, err = r.U32()
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
	at := r.Pos
	sub, err := r.U32()
	if err != nil {
		return false, err
	}
	if sub >= uint32(len(fcImmediates)) {
		return false, &Error{r.Base + at, fmt.Sprintf("opcode 0xfc %d", sub), ErrUnsupported}
	}
	sized = sub == 8 || sub == 10 || sub == 11 || sub == 12 || sub == 14 || sub == 15 || sub == 17
	return sized, r.skipU32s(fcImmediates[sub])
}
