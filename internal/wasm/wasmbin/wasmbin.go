package wasmbin

import "fmt"

// Error says what the reader could not read and where.
type Error struct {
	Offset int    // byte offset in the module
	Reason string // what was found
	// Unsupported: the bytes may be valid but use something the reader
	// does not decode; otherwise they are malformed.
	Unsupported bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (at byte %d)", e.Reason, e.Offset)
}

// Reader reads the binary format from B, starting at Pos. Base is the
// offset of B[0] in the module, for errors. The zero value reads nothing.
type Reader struct {
	B    []byte
	Pos  int
	Base int
}

// Offset is the module offset of the next byte.
func (r *Reader) Offset() int { return r.Base + r.Pos }

// Left is the number of bytes not read yet.
func (r *Reader) Left() int { return len(r.B) - r.Pos }

// Fail returns a malformed-input *Error at the current position.
func (r *Reader) Fail(reason string) error { return &Error{Offset: r.Offset(), Reason: reason} }

// Unsupported returns an unsupported-input *Error at the current position.
func (r *Reader) Unsupported(reason string) error {
	return &Error{Offset: r.Offset(), Reason: reason, Unsupported: true}
}

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.Pos >= len(r.B) {
		return 0, r.Fail("unexpected end")
	}
	c := r.B[r.Pos]
	r.Pos++
	return c, nil
}

// Take reads n bytes; what names them in the error.
func (r *Reader) Take(n uint64, what string) ([]byte, error) {
	if left := uint64(r.Left()); n > left {
		return nil, r.Fail(fmt.Sprintf("a %s of %d bytes, %d past the end", what, n, n-left))
	}
	b := r.B[r.Pos : r.Pos+int(n)]
	r.Pos += int(n)
	return b, nil
}

// End fails unless everything has been read; what names the container.
func (r *Reader) End(what string) error {
	if r.Pos != len(r.B) {
		return r.Fail(fmt.Sprintf("%d bytes left at the end of the %s", r.Left(), what))
	}
	return nil
}

// LEB reads a LEB128 of at most max bytes and returns its low 64 bits,
// its last byte and its length; what names it in the error.
func (r *Reader) LEB(max int, what string) (v uint64, last byte, n int, err error) {
	for n < max {
		c, err := r.Byte()
		if err != nil {
			return 0, 0, 0, err
		}
		v |= uint64(c&0x7f) << (7 * n)
		n++
		if c < 0x80 {
			return v, c, n, nil
		}
	}
	return 0, 0, 0, r.Fail(fmt.Sprintf("%s longer than %d bytes", what, max))
}

// SkipLEB skips a LEB128 of at most max bytes.
func (r *Reader) SkipLEB(max int) error {
	_, _, _, err := r.LEB(max, "LEB128")
	return err
}

// U32 reads an unsigned LEB128 of at most 5 bytes whose unused bits are
// zero: what wazero accepts, so both agree on its length and value.
func (r *Reader) U32() (uint32, error) {
	v, last, n, err := r.LEB(5, "u32")
	if err == nil && n == 5 && last > 0x0f {
		err = r.Fail("u32 overflows")
	}
	return uint32(v), err
}

// S32 reads a signed LEB128 of at most 5 bytes holding an int32 (an
// i32.const): the bits of its last byte beyond the 32 must repeat its
// sign, as wazero requires.
func (r *Reader) S32() (int32, error) {
	v, last, n, err := r.LEB(5, "i32")
	if err != nil {
		return 0, err
	}
	if n == 5 {
		if hi := last & 0x78; hi != 0 && hi != 0x78 {
			return 0, r.Fail("i32 overflows")
		}
	} else if last&0x40 != 0 {
		v |= ^uint64(0) << (7 * n)
	}
	return int32(v), nil
}

// Name reads a byte vector (a name, a data segment's bytes).
func (r *Reader) Name() ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	return r.Take(uint64(n), "name or byte vector")
}

// Count reads a vector's count and refuses one above limit or above the
// bytes left (each item takes at least one byte); what names the items.
func (r *Reader) Count(limit uint64, what string) (uint32, error) {
	n, err := r.U32()
	if err != nil {
		return 0, err
	}
	if uint64(n) > limit {
		return 0, r.Fail(fmt.Sprintf("%d %s, more than %d", n, what, limit))
	}
	if left := r.Left(); uint64(n) > uint64(left) {
		return 0, r.Fail(fmt.Sprintf("%d %s claimed in the %d bytes left", n, what, left))
	}
	return n, nil
}

// Section reads a section's (or a name subsection's) id and size and
// returns a Reader of its body, whose offsets still count from the
// module's start.
func (r *Reader) Section(what string) (id byte, body Reader, err error) {
	if id, err = r.Byte(); err != nil {
		return 0, Reader{}, err
	}
	size, err := r.U32()
	if err != nil {
		return 0, Reader{}, err
	}
	base := r.Offset()
	b, err := r.Take(uint64(size), what)
	if err != nil {
		return 0, Reader{}, err
	}
	return id, Reader{B: b, Base: base}, nil
}

// IsValueType reports whether c is a one-byte value type: i32, i64, f32,
// f64, v128, funcref, externref. Typed references (0x63, 0x64 and a heap
// type) and exnref are GC and exception handling.
func IsValueType(c byte) bool {
	return c == 0x7f || c == 0x7e || c == 0x7d || c == 0x7c || c == 0x7b || c == 0x70 || c == 0x6f
}

// IsRefType reports whether c is funcref or externref.
func IsRefType(c byte) bool { return c == 0x70 || c == 0x6f }

// ValueType reads a one-byte value type; anything else is unsupported,
// reported at its byte (a typed reference's heap type follows it, so the
// reader cannot tell where it ends).
func (r *Reader) ValueType() error { return r.typeByte(IsValueType, "value type") }

// RefType reads a one-byte reference type, as ValueType does.
func (r *Reader) RefType() error { return r.typeByte(IsRefType, "reference type") }

func (r *Reader) typeByte(ok func(byte) bool, what string) error {
	c, err := r.Byte()
	if err != nil {
		return err
	}
	if !ok(c) {
		r.Pos--
		return r.Unsupported(fmt.Sprintf("%s %#x", what, c))
	}
	return nil
}

// GlobalType is a global's value type and mutability byte (0 const, 1
// var; the reader does not check it).
type GlobalType struct{ Type, Mut byte }

// GlobalType reads a value type and a mutability byte.
func (r *Reader) GlobalType() (GlobalType, error) {
	if err := r.ValueType(); err != nil {
		return GlobalType{}, err
	}
	t := r.B[r.Pos-1]
	mut, err := r.Byte()
	return GlobalType{t, mut}, err
}

// Limits are a table's or memory's: Flag bit 0 says Max is present, bit 1
// that the memory is shared (threads), bit 2 that it is 64-bit.
type Limits struct {
	Flag     byte
	Min, Max uint64
}

// Limits reads a limits flag and its one or two integers: u32s, or
// LEB128s of at most 10 bytes for a 64-bit memory. A flag above 7 is
// malformed.
func (r *Reader) Limits() (Limits, error) {
	var l Limits
	var err error
	if l.Flag, err = r.Byte(); err != nil {
		return l, err
	}
	if l.Flag > 7 {
		r.Pos--
		return l, r.Fail(fmt.Sprintf("limits flag %#x", l.Flag))
	}
	for i := range 1 + int(l.Flag&1) {
		var v uint64
		if l.Flag&4 != 0 {
			v, _, _, err = r.LEB(10, "u64")
		} else {
			var u uint32
			u, err = r.U32()
			v = uint64(u)
		}
		if err != nil {
			return l, err
		}
		if i == 0 {
			l.Min = v
		} else {
			l.Max = v
		}
	}
	return l, nil
}

// Import kinds.
const (
	ImportFunc   = 0
	ImportTable  = 1
	ImportMemory = 2
	ImportGlobal = 3
	ImportTag    = 4
)

// Import is one entry of the import section. Which of the descriptor
// fields is set depends on Kind: Index for a function (its type) and a
// tag (its type; Attr its attribute), RefType and Limits for a table,
// Limits for a memory, Global for a global.
type Import struct {
	Module, Name []byte
	Kind         byte
	Index        uint32
	Attr         byte
	RefType      byte
	Limits       Limits
	Global       GlobalType
	Offset       int // module offset of the entry
}

// Imports reads an import section's body up to the last import it counts
// (at most limit), handing each to fn, and stops at the first error,
// fn's included. It does not check that the body ends there ([Reader.End]).
func (r *Reader) Imports(limit uint64, fn func(Import) error) error {
	n, err := r.Count(limit, "imports")
	if err != nil {
		return err
	}
	for range n {
		im := Import{Offset: r.Offset()}
		if im.Module, err = r.Name(); err != nil {
			return err
		}
		if im.Name, err = r.Name(); err != nil {
			return err
		}
		if im.Kind, err = r.Byte(); err != nil {
			return err
		}
		switch im.Kind {
		case ImportFunc:
			im.Index, err = r.U32()
		case ImportTable:
			if err = r.RefType(); err == nil {
				im.RefType = r.B[r.Pos-1]
				im.Limits, err = r.Limits()
			}
		case ImportMemory:
			im.Limits, err = r.Limits()
		case ImportGlobal:
			im.Global, err = r.GlobalType()
		case ImportTag:
			if im.Attr, err = r.Byte(); err == nil {
				im.Index, err = r.U32()
			}
		default:
			r.Pos--
			err = r.Fail(fmt.Sprintf("import kind %#x", im.Kind))
		}
		if err == nil {
			err = fn(im)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// AppendULEB appends v as an unsigned LEB128 in its shortest form.
func AppendULEB(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendSLEB appends v as a signed LEB128 in its shortest form.
func AppendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
