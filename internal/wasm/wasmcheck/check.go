package wasmcheck

import (
	"errors"
	"fmt"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// Limits a module must stay within.
const (
	MaxModuleBytes  = 64 << 20
	MaxTypes        = 1_000_000
	MaxFunctions    = 1_000_000
	MaxImports      = 100_000
	MaxExports      = 100_000
	MaxGlobals      = 1_000_000
	MaxDataSegments = 100_000
	MaxElemSegments = 100_000
	MaxTables       = 100_000
	// MaxTableElements bounds the sum of the minimum sizes of the
	// tables a module defines, which wazero allocates at instantiation
	// (8 bytes an element; wazero allows 2^27 a table, 1 GiB).
	MaxTableElements = 10_000_000
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
	r := &reader{wasmbin.Reader{B: wasm, Pos: 8}}
	var m module
	return checkError(r.sections("section", m.section))
}

// sections reads what is left of r as (id, size, body) sections, the
// module's and the name section's subsections alike, and hands each body
// to fn as a reader of its own (offsets still counted from the module's
// start).
func (r *reader) sections(what string, fn func(id byte, s *reader) error) error {
	for r.Left() > 0 {
		id, body, err := r.Section(what)
		if err != nil {
			return err
		}
		s := &reader{body}
		if err := fn(id, s); err != nil {
			return err
		}
		// A known section ends where its last item does, as wazero
		// requires: a check that read an item's length differently
		// from wazero cannot go unnoticed into the next item.
		if what == "section" && id != 0 {
			if err := s.End(fmt.Sprintf("section %d", id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// module is what Check counts across sections.
type module struct {
	tableElements uint64 // the sum of the defined tables' minimum sizes
	types         uint32 // the type section's count (0 before it)
}

// typeIndex reads a type index, which must name one of the types the
// type section declared: wazero looks up a function's type by its index
// before it validates that function (a call to a function whose type
// index is out of range made its validator panic), so an index out of
// range is refused here, for functions, imported functions and tags
// alike. The type section precedes every section that names a type
// (wazero refuses any other order), so its count is known by then.
func (m *module) typeIndex(r *reader, what string) error {
	at := r.Offset()
	idx, err := r.U32()
	if err == nil && idx >= m.types {
		err = &Error{at, fmt.Sprintf("%s of type index %d, out of range (%d types)", what, idx, m.types)}
	}
	return err
}

func (m *module) section(id byte, r *reader) error {
	start := r.Pos
	switch id {
	case 0: // custom
		name, err := r.Name()
		if err != nil {
			return err
		}
		if string(name) == "name" {
			return names(r)
		}
		return nil
	case 1: // type
		n, err := r.Count(MaxTypes, "types")
		if err != nil {
			return err
		}
		m.types = n
		r.Pos = start
		return r.vec(MaxTypes, "types", func() error {
			form, err := r.Byte()
			if err != nil {
				return err
			}
			if form != 0x60 {
				return r.Fail(fmt.Sprintf("type form %#x", form))
			}
			if err := r.vec(MaxParams, "parameters", r.ValueType); err != nil {
				return err
			}
			return r.vec(MaxResults, "results", r.ValueType)
		})
	case 2: // import
		return r.Imports(MaxImports, func(im wasmbin.Import) error {
			if (im.Kind == wasmbin.ImportFunc || im.Kind == wasmbin.ImportTag) && im.Index >= m.types {
				return &Error{im.Offset, fmt.Sprintf("an import of type index %d, out of range (%d types)", im.Index, m.types)}
			}
			return nil
		})
	case 3: // function
		return r.vec(MaxFunctions, "functions", func() error { return m.typeIndex(r, "a function") })
	case 4: // table
		return r.vec(MaxTables, "tables", func() error {
			if err := r.RefType(); err != nil {
				return err
			}
			l, err := r.Limits()
			if err != nil {
				return err
			}
			if l.Min > MaxTableElements-m.tableElements {
				return r.Fail(fmt.Sprintf("tables of more than %d elements in all", MaxTableElements))
			}
			m.tableElements += l.Min
			return nil
		})
	case 5: // memory
		return r.vec(MaxTables, "memories", r.limits)
	case 6: // global
		return r.vec(MaxGlobals, "globals", func() error {
			if _, err := r.GlobalType(); err != nil {
				return err
			}
			return r.constExpr()
		})
	case 7: // export
		return r.vec(MaxExports, "exports", func() error {
			if _, err := r.Name(); err != nil {
				return err
			}
			if _, err := r.Byte(); err != nil {
				return err
			}
			_, err := r.U32()
			return err
		})
	case 8: // start
		_, err := r.U32()
		return err
	case 9: // element
		return r.vec(MaxElemSegments, "element segments", r.elem)
	case 10: // code
		return r.vec(MaxFunctions, "function bodies", func() error {
			size, err := r.U32()
			if err != nil {
				return err
			}
			if size > MaxFunctionBytes {
				return r.Fail(fmt.Sprintf("a function body of %d bytes, more than %d", size, MaxFunctionBytes))
			}
			body, err := r.Take(uint64(size), "function body")
			if err != nil {
				return err
			}
			b := &reader{wasmbin.Reader{B: body, Base: r.Offset() - len(body)}}
			total := uint64(0)
			return b.vec(MaxLocals, "local declarations", func() error {
				n, err := b.U32()
				if err != nil {
					return err
				}
				if total += uint64(n); total > MaxLocals {
					return b.Fail(fmt.Sprintf("more than %d locals", MaxLocals))
				}
				return b.ValueType()
			})
		})
	case 11: // data
		return r.vec(MaxDataSegments, "data segments", func() error {
			form, err := r.U32()
			if err != nil {
				return err
			}
			switch form {
			case 0:
				err = r.constExpr()
			case 1:
			case 2:
				if _, err = r.U32(); err == nil {
					err = r.constExpr()
				}
			default:
				err = r.Fail(fmt.Sprintf("data segment form %d", form))
			}
			if err != nil {
				return err
			}
			_, err = r.Name() // a byte vector, like a name
			return err
		})
	case 12: // data count
		n, err := r.U32()
		if err == nil && n > MaxDataSegments {
			err = r.Fail(fmt.Sprintf("a data count of %d, more than %d", n, MaxDataSegments))
		}
		return err
	case 13: // tag
		return r.vec(MaxTypes, "tags", func() error {
			if _, err := r.Byte(); err != nil {
				return err
			}
			return m.typeIndex(r, "a tag")
		})
	}
	return r.Fail(fmt.Sprintf("unknown section id %d", id))
}

// elem reads an element segment: its form says whether it has a table
// index, an offset expression, an element kind or reference type, and
// function indexes or expressions.
func (r *reader) elem() error {
	form, err := r.U32()
	if err != nil {
		return err
	}
	if form > 7 {
		return r.Fail(fmt.Sprintf("element segment form %d", form))
	}
	if form&2 != 0 && form&1 == 0 { // explicit table index
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	if form&1 == 0 { // active: an offset
		if err := r.constExpr(); err != nil {
			return err
		}
	}
	switch {
	case form&3 == 0: // funcref implied
	case form&4 == 0: // an element kind, one byte (0, funcref)
		if _, err := r.Byte(); err != nil {
			return err
		}
	default:
		// A reference type: funcref or externref. A typed reference
		// (0x63, 0x64) is followed by a heap type whose bytes wazero
		// reads and this check did not: it took the heap type for the
		// count of expressions, and a 39-byte module's real count of
		// 10^9 reached wazero, which reserved 24 GB for it.
		if err := r.RefType(); err != nil {
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
		op, err := r.Byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41, 0x42, 0x23, 0xd2: // i32.const, i64.const, global.get, ref.func
			err = r.SkipLEB(10)
		case 0x43:
			_, err = r.Take(4, "f32")
		case 0x44:
			_, err = r.Take(8, "f64")
		case 0xd0: // ref.null
			err = r.SkipLEB(5)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constants
		case 0xfd: // v128.const
			var sub uint64
			if sub, _, _, err = r.LEB(5, "opcode"); err == nil && sub != 12 {
				err = r.Fail(fmt.Sprintf("opcode 0xfd %d in a constant expression", sub))
			}
			if err == nil {
				_, err = r.Take(16, "v128")
			}
		default:
			err = r.Fail(fmt.Sprintf("opcode %#x in a constant expression", op))
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
				if _, err := s.U32(); err != nil {
					return err
				}
				_, err := s.Name()
				return err
			})
		}
		switch id {
		case 0: // module name
			_, err = s.Name()
		case 1: // function names
			err = nameMap()
		case 2: // local names
			err = s.vec(1<<32-1, "functions", func() error {
				if _, err := s.U32(); err != nil {
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

// reader reads the binary format (every read is bounds-checked) with the
// vectors of this package's limits.
type reader struct{ wasmbin.Reader }

// vec reads a vector of at most limit items, each read by item.
func (r *reader) vec(limit uint64, what string, item func() error) error {
	n, err := r.Count(limit, what)
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
	return r.vec(limit, what, func() error { return r.SkipLEB(5) })
}

// limits reads the limits of a table or memory.
func (r *reader) limits() error {
	_, err := r.Limits()
	return err
}
