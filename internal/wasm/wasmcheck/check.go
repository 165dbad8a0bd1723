// Package wasmcheck checks the structure of an untrusted WebAssembly
// module before a full decoder (wazero's) sees it.
//
// # Model
//
// wazero's decoder reserves memory for what a module claims before it
// reads it: a slice for every element segment an element section counts, a
// buffer of a custom section's declared size, the locals a function
// declares. A 23-byte file whose element section claims 2^32-1 segments
// made it ask for hundreds of GiB, and the Go runtime aborted the process
// ("fatal error: runtime: out of memory"), which no recover can catch.
// [Check] walks the module's sections, and inside them every vector whose
// count or length a decoder would allocate for, and refuses a module whose
// claims do not fit in the bytes that follow them or break the limits
// below, before wazero allocates anything.
//
// # Invariants
//
//   - Check never panics and allocates nothing proportional to a claim,
//     only to the number of sections.
//   - A module Check accepts makes every count a decoder allocates for at
//     most the bytes that hold its items (each item takes at least one
//     byte) and at most the limits below, so what wazero reserves is
//     bounded by a small multiple of the file's size.
//   - Check is a structural pre-filter, not a validator: it accepts
//     modules wazero will refuse, and refuses what it cannot read (an
//     unknown section, element or data form, constant-expression opcode).
//
// The limits are those of the JavaScript engines' WebAssembly embeddings
// (V8, SpiderMonkey), or lower where they are absurdly high for a plugin;
// real modules, Go's and TinyGo's included, are far below them.
package wasmcheck

import (
	"errors"
	"fmt"
)

// Limits a module must stay within.
const (
	MaxModuleBytes   = 64 << 20
	MaxTypes         = 1_000_000
	MaxFunctions     = 1_000_000
	MaxImports       = 100_000
	MaxExports       = 100_000
	MaxGlobals       = 1_000_000
	MaxDataSegments  = 100_000
	MaxElemSegments  = 100_000
	MaxTables        = 100_000
	MaxParams        = 1_000
	MaxResults       = 1_000
	MaxLocals        = 50_000
	MaxFunctionBytes = 7_654_321
)

// ErrRefused is wrapped by every error of Check.
var ErrRefused = errors.New("module refused before decoding")

// Error says why and where Check refused a module.
type Error struct {
	Offset int
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s (at byte %d)", ErrRefused, e.Reason, e.Offset)
}

func (e *Error) Unwrap() error { return ErrRefused }

// Check returns nil when the module's claims fit its bytes and the
// limits, else an *Error.
func Check(wasm []byte) error {
	if len(wasm) > MaxModuleBytes {
		return &Error{0, fmt.Sprintf("%d bytes, more than the %d a module may have", len(wasm), MaxModuleBytes)}
	}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return &Error{0, "no WebAssembly magic number"}
	}
	r := &reader{b: wasm, pos: 8}
	return r.sections("section", section)
}

// sections reads what is left of r as (id, size, body) sections, the
// module's and the name section's subsections alike, and hands each body
// to fn as a reader of its own (offsets still counted from the module's
// start).
func (r *reader) sections(what string, fn func(id byte, s *reader) error) error {
	for r.pos < len(r.b) {
		id, err := r.byte()
		if err != nil {
			return err
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		body, err := r.take(uint64(size), what)
		if err != nil {
			return err
		}
		if err := fn(id, &reader{b: body, base: r.base + r.pos - len(body)}); err != nil {
			return err
		}
	}
	return nil
}

func section(id byte, r *reader) error {
	switch id {
	case 0: // custom
		name, err := r.name()
		if err != nil {
			return err
		}
		if string(name) == "name" {
			return names(r)
		}
		return nil
	case 1: // type
		return r.vec(MaxTypes, "types", func() error {
			form, err := r.byte()
			if err != nil {
				return err
			}
			if form != 0x60 {
				return r.fail(fmt.Sprintf("type form %#x", form))
			}
			if err := r.vec(MaxParams, "parameters", r.valueType); err != nil {
				return err
			}
			return r.vec(MaxResults, "results", r.valueType)
		})
	case 2: // import
		return r.vec(MaxImports, "imports", func() error {
			for range 2 {
				if _, err := r.name(); err != nil {
					return err
				}
			}
			kind, err := r.byte()
			if err != nil {
				return err
			}
			switch kind {
			case 0: // function
				_, err = r.u32()
			case 1: // table
				if _, err = r.byte(); err == nil {
					err = r.limits()
				}
			case 2: // memory
				err = r.limits()
			case 3: // global
				err = r.globalType()
			case 4: // tag
				if _, err = r.byte(); err == nil {
					_, err = r.u32()
				}
			default:
				err = r.fail(fmt.Sprintf("import kind %#x", kind))
			}
			return err
		})
	case 3: // function
		return r.skipVec(MaxFunctions, "functions")
	case 4: // table
		return r.vec(MaxTables, "tables", func() error {
			if _, err := r.byte(); err != nil {
				return err
			}
			return r.limits()
		})
	case 5: // memory
		return r.vec(MaxTables, "memories", r.limits)
	case 6: // global
		return r.vec(MaxGlobals, "globals", func() error {
			if err := r.globalType(); err != nil {
				return err
			}
			return r.constExpr()
		})
	case 7: // export
		return r.vec(MaxExports, "exports", func() error {
			if _, err := r.name(); err != nil {
				return err
			}
			if _, err := r.byte(); err != nil {
				return err
			}
			_, err := r.u32()
			return err
		})
	case 8: // start
		_, err := r.u32()
		return err
	case 9: // element
		return r.vec(MaxElemSegments, "element segments", r.elem)
	case 10: // code
		return r.vec(MaxFunctions, "function bodies", func() error {
			size, err := r.u32()
			if err != nil {
				return err
			}
			if size > MaxFunctionBytes {
				return r.fail(fmt.Sprintf("a function body of %d bytes, more than %d", size, MaxFunctionBytes))
			}
			body, err := r.take(uint64(size), "function body")
			if err != nil {
				return err
			}
			b := &reader{b: body, base: r.base + r.pos - len(body)}
			total := uint64(0)
			return b.vec(MaxLocals, "local declarations", func() error {
				n, err := b.u32()
				if err != nil {
					return err
				}
				if total += uint64(n); total > MaxLocals {
					return b.fail(fmt.Sprintf("more than %d locals", MaxLocals))
				}
				return b.valueType()
			})
		})
	case 11: // data
		return r.vec(MaxDataSegments, "data segments", func() error {
			form, err := r.u32()
			if err != nil {
				return err
			}
			switch form {
			case 0:
				err = r.constExpr()
			case 1:
			case 2:
				if _, err = r.u32(); err == nil {
					err = r.constExpr()
				}
			default:
				err = r.fail(fmt.Sprintf("data segment form %d", form))
			}
			if err != nil {
				return err
			}
			_, err = r.name() // a byte vector, like a name
			return err
		})
	case 12: // data count
		n, err := r.u32()
		if err == nil && n > MaxDataSegments {
			err = r.fail(fmt.Sprintf("a data count of %d, more than %d", n, MaxDataSegments))
		}
		return err
	case 13: // tag
		return r.vec(MaxTypes, "tags", func() error {
			if _, err := r.byte(); err != nil {
				return err
			}
			_, err := r.u32()
			return err
		})
	}
	return r.fail(fmt.Sprintf("unknown section id %d", id))
}

// elem reads an element segment: its form says whether it has a table
// index, an offset expression, an element kind or reference type, and
// function indexes or expressions.
func (r *reader) elem() error {
	form, err := r.u32()
	if err != nil {
		return err
	}
	if form > 7 {
		return r.fail(fmt.Sprintf("element segment form %d", form))
	}
	if form&2 != 0 && form&1 == 0 { // explicit table index
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	if form&1 == 0 { // active: an offset
		if err := r.constExpr(); err != nil {
			return err
		}
	}
	if form&3 != 0 { // element kind or reference type
		if _, err := r.byte(); err != nil {
			return err
		}
	}
	if form&4 == 0 {
		return r.skipVec(1<<32-1, "function indexes")
	}
	return r.vec(1<<32-1, "element expressions", r.constExpr)
}

// constExpr reads a constant expression up to its end.
func (r *reader) constExpr() error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41, 0x42, 0x23, 0xd2: // i32.const, i64.const, global.get, ref.func
			_, err = r.leb(10)
		case 0x43:
			_, err = r.take(4, "f32")
		case 0x44:
			_, err = r.take(8, "f64")
		case 0xd0: // ref.null
			_, err = r.leb(5)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constants
		case 0xfd: // v128.const
			var sub uint64
			if sub, err = r.leb(5); err == nil && sub != 12 {
				err = r.fail(fmt.Sprintf("opcode 0xfd %d in a constant expression", sub))
			}
			if err == nil {
				_, err = r.take(16, "v128")
			}
		default:
			err = r.fail(fmt.Sprintf("opcode %#x in a constant expression", op))
		}
		if err != nil {
			return err
		}
	}
}

// names reads the name section's subsections, whose maps a decoder
// allocates by their counts.
func names(r *reader) error {
	return r.sections("name subsection", func(id byte, s *reader) error {
		var err error
		nameMap := func() error {
			return s.vec(1<<32-1, "names", func() error {
				if _, err := s.u32(); err != nil {
					return err
				}
				_, err := s.name()
				return err
			})
		}
		switch id {
		case 0: // module name
			_, err = s.name()
		case 1: // function names
			err = nameMap()
		case 2: // local names
			err = s.vec(1<<32-1, "functions", func() error {
				if _, err := s.u32(); err != nil {
					return err
				}
				return nameMap()
			})
		default:
			// Other subsections are skipped whole by decoders.
		}
		return err
	})
}

// reader reads the binary format; every read is bounds-checked.
type reader struct {
	b    []byte
	pos  int
	base int
}

func (r *reader) fail(reason string) error { return &Error{r.base + r.pos, reason} }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail("unexpected end")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) take(n uint64, what string) ([]byte, error) {
	if n > uint64(len(r.b)-r.pos) {
		return nil, r.fail(fmt.Sprintf("a %s of %d bytes, %d past the end", what, n, n-uint64(len(r.b)-r.pos)))
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// leb reads a LEB128 of at most max bytes.
func (r *reader) leb(max int) (uint64, error) {
	var v uint64
	for n := 0; n < max; n++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << (7 * n)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, r.fail(fmt.Sprintf("a LEB128 longer than %d bytes", max))
}

func (r *reader) u32() (uint32, error) {
	v, err := r.leb(5)
	if err == nil && v > 1<<32-1 {
		err = r.fail("a u32 that overflows")
	}
	return uint32(v), err
}

// count reads a vector's count and checks it against limit and against
// the bytes left, at least per bytes an item.
func (r *reader) count(limit uint64, what string, per int) (uint32, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n) > limit {
		return 0, r.fail(fmt.Sprintf("%d %s, more than %d", n, what, limit))
	}
	if left := len(r.b) - r.pos; uint64(n)*uint64(per) > uint64(left) {
		return 0, r.fail(fmt.Sprintf("%d %s claimed in the %d bytes left", n, what, left))
	}
	return n, nil
}

// vec reads a vector of items, each read by item.
func (r *reader) vec(limit uint64, what string, item func() error) error {
	n, err := r.count(limit, what, 1)
	if err != nil {
		return err
	}
	for range n {
		if err := item(); err != nil {
			return err
		}
	}
	return nil
}

// skipVec reads a vector of LEB128 items.
func (r *reader) skipVec(limit uint64, what string) error {
	return r.vec(limit, what, func() error { _, err := r.leb(5); return err })
}

// valueType reads a one-byte value type. Typed references (GC), whose
// heap type follows, are refused: a decoder reads more bytes for them.
func (r *reader) valueType() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	switch c {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return nil
	}
	return r.fail(fmt.Sprintf("value type %#x", c))
}

// globalType reads a value type and a mutability.
func (r *reader) globalType() error {
	if err := r.valueType(); err != nil {
		return err
	}
	_, err := r.byte()
	return err
}

// name reads a byte vector.
func (r *reader) name() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.take(uint64(n), "name or byte vector")
}

// limits reads the limits of a table or memory: a flag, then one or two
// LEB128s (64-bit ones for a 64-bit memory).
func (r *reader) limits() error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag > 7 {
		return r.fail(fmt.Sprintf("limits flag %#x", flag))
	}
	for range 1 + int(flag&1) {
		if _, err := r.leb(10); err != nil {
			return err
		}
	}
	return nil
}
