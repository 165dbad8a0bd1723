package wasminterrupt

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// Export is the name under which the interrupt flag, a mutable i32 global,
// is exported. The dot keeps it out of every toolchain's namespace.
const Export = "twasm.interrupt"

var (
	// ErrUnsupported: the module uses something the decoder does not know,
	// or cannot be instrumented safely (a start function, an export named
	// Export). It may well be valid.
	ErrUnsupported = errors.New("cannot instrument the module")
	// ErrMalformed: the bytes are not a well-formed WebAssembly module.
	ErrMalformed = errors.New("malformed WebAssembly module")
)

// Error says why Instrument refused a module and where.
type Error struct {
	Offset int    // byte offset in the input
	Reason string // what was found
	Err    error  // ErrUnsupported or ErrMalformed
}

func (e *Error) Error() string {
	return fmt.Sprintf("wasminterrupt: %v: %s (at byte %d)", e.Err, e.Reason, e.Offset)
}

func (e *Error) Unwrap() error { return e.Err }

// Section ids, and their rank in the order a module must follow (custom
// sections, rank 0, may appear anywhere).
const (
	secCustom = 0
	secType   = 1
	secImport = 2
	secFunc   = 3
	secMemory = 5
	secGlobal = 6
	secExport = 7
	secStart  = 8
	secCode   = 10
	secTag    = 13
)

var sectionRank = map[byte]int{
	1: 1, secImport: 2, 3: 3, 4: 4, 5: 5, secTag: 6, secGlobal: 7, secExport: 8,
	secStart: 9, 9: 10, 12: 11, secCode: 12, 11: 13,
}

type section struct {
	id   byte
	body []byte
	off  int // offset of body in the input
}

// Instrument returns a copy of the module wasm with an interrupt flag
// exported as Export and checked at the head of every loop (see the
// package documentation). It returns an *Error wrapping ErrUnsupported or
// ErrMalformed when it cannot; wasm is never modified.
func Instrument(wasm []byte) ([]byte, error) {
	out, err := instrument(wasm)
	var e *wasmbin.Error
	if errors.As(err, &e) { // a read failed
		kind := ErrMalformed
		if e.Unsupported {
			kind = ErrUnsupported
		}
		return nil, &Error{e.Offset, e.Reason, kind}
	}
	return out, err
}

func instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, &Error{0, "no WebAssembly magic number", ErrMalformed}
	}
	if string(wasm[4:8]) != "\x01\x00\x00\x00" {
		return nil, &Error{4, fmt.Sprintf("binary format version % x, not 01 00 00 00", wasm[4:8]), ErrUnsupported}
	}
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	var m module
	for _, s := range secs {
		r := &reader{wasmbin.Reader{B: s.body, Base: s.off}}
		var err error
		switch s.id {
		case secType:
			err = m.types(r)
		case secImport:
			err = m.imports(r)
		case secFunc:
			err = m.funcs(r)
		case secMemory:
			var n uint32
			n, err = r.U32()
			m.memory = m.memory || n > 0
		case secGlobal:
			err = m.globals(r)
		case secStart:
			err = r.fail(ErrUnsupported, "a start function runs at instantiation, before the host can reach the flag")
		case secExport:
			err = m.exports(r)
		case secCode:
			err = m.code(r)
		}
		if err != nil {
			return nil, err
		}
	}
	if !m.charged {
		// No body needs the added functions (or there is no code
		// section): the type and function sections stay as they are.
		m.typeSec, m.funcSec = nil, nil
	}
	return m.write(wasm, secs), nil
}

// Instrumented reports whether wasm exports a global named Export, as
// Instrument's output does. It walks the section headers and the export
// section only. The host uses it to recognise a bundled module the build
// already instrumented, which it trusts to check the flag (and checks, at
// instantiation, that the flag is a mutable global); an untrusted module's
// word for it means nothing.
func Instrumented(wasm []byte) bool {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return false
	}
	secs, err := splitSections(wasm)
	if err != nil {
		return false
	}
	for _, s := range secs {
		if s.id != secExport {
			continue
		}
		r := &reader{wasmbin.Reader{B: s.body, Base: s.off}}
		n, err := r.U32()
		if err != nil {
			return false
		}
		for range n {
			name, err := r.Name()
			if err != nil {
				return false
			}
			kind, err := r.Byte()
			if err != nil {
				return false
			}
			if _, err := r.U32(); err != nil {
				return false
			}
			if string(name) == Export {
				return kind == 3
			}
		}
	}
	return false
}

// splitSections cuts the module after its header into sections and checks
// their order, which decides where new sections go.
func splitSections(wasm []byte) ([]section, error) {
	r := &reader{wasmbin.Reader{B: wasm, Pos: 8}}
	var secs []section
	last := 0
	for r.Left() > 0 {
		start := r.Offset()
		id, body, err := r.Section("section")
		if err != nil {
			return nil, err
		}
		if id != secCustom {
			rank, ok := sectionRank[id]
			switch {
			case id == secTag:
				return nil, &Error{start, "a tag section (exception handling)", ErrUnsupported}
			case !ok:
				return nil, &Error{start, fmt.Sprintf("unknown section id %d", id), ErrMalformed}
			case rank <= last:
				return nil, &Error{start, fmt.Sprintf("section id %d out of order or repeated", id), ErrMalformed}
			}
			last = rank
		}
		secs = append(secs, section{id: id, body: body.B, off: body.Base})
	}
	return secs, nil
}

// module is what Instrument learns from the sections it reads, and the
// sections it rewrites.
type module struct {
	importedGlobals uint32
	definedGlobals  uint32
	importedFuncs   uint32
	definedFuncs    uint32
	ntypes          uint32
	memory          bool   // the module has a memory, for memory.grow
	globalSec       []byte // rewritten sections, nil until made
	exportSec       []byte
	codeSec         []byte
	// typeSec and funcSec are the type and function sections, rewritten
	// with the charge function's type and entry when a body uses it.
	typeSec, funcSec []byte
	// charged: a body uses the added functions.
	charged bool
	// params is the number of parameters of each type, funcTypes the
	// type of each defined function: where a local added to a body
	// (inlineFill) is numbered.
	params    []uint32
	funcTypes []uint32
}

// flag and fuel are the indexes of the new globals.
func (m *module) flag() uint32 { return m.importedGlobals + m.definedGlobals }
func (m *module) fuel() uint32 { return m.flag() + 1 }

// types reads the type section: function types only (GC types and
// recursion groups are unsupported), so that the charge function's type
// index is the count of types.
func (m *module) types(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	entries := r.Pos
	for range n {
		form, err := r.Byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return r.fail(ErrUnsupported, fmt.Sprintf("type form %#x (GC types)", form))
		}
		for i := range 2 { // parameters and results
			k, err := r.U32()
			if err != nil {
				return err
			}
			if i == 0 {
				m.params = append(m.params, k)
			}
			for range k {
				if err := r.ValueType(); err != nil {
					return err
				}
			}
		}
	}
	if err := r.End("type section"); err != nil {
		return err
	}
	if n >= ^uint32(0)-1 {
		return r.fail(ErrUnsupported, "no room for two more types")
	}
	m.ntypes = n
	m.typeSec = append(appendU32(nil, n+2), r.B[entries:]...)
	m.typeSec = append(append(m.typeSec, chargeType...), bulkType...)
	return nil
}

// funcs reads the function section: the type index of each defined
// function.
func (m *module) funcs(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	entries := r.Pos
	for range n {
		t, err := r.U32()
		if err != nil {
			return err
		}
		m.funcTypes = append(m.funcTypes, t)
	}
	if err := r.End("function section"); err != nil {
		return err
	}
	if uint64(m.importedFuncs)+uint64(n)+3 > 1<<31 {
		return r.fail(ErrUnsupported, "no room for three more functions")
	}
	m.definedFuncs = n
	m.funcSec = append(appendU32(nil, n+3), r.B[entries:]...)
	m.funcSec = appendU32(appendU32(appendU32(m.funcSec, m.ntypes), m.ntypes+1), m.ntypes+1)
	return nil
}

func (m *module) imports(r *reader) error {
	err := r.Imports(1<<32-1, func(im wasmbin.Import) error {
		switch im.Kind {
		case wasmbin.ImportFunc:
			m.importedFuncs++
		case wasmbin.ImportTable, wasmbin.ImportMemory:
			if im.Limits.Flag > 1 {
				return &Error{im.Offset, fmt.Sprintf("limits flag %#x (shared or 64-bit memory)", im.Limits.Flag), ErrUnsupported}
			}
			m.memory = m.memory || im.Kind == wasmbin.ImportMemory
		case wasmbin.ImportGlobal:
			if im.Global.Mut > 1 {
				return &Error{im.Offset, fmt.Sprintf("global mutability %#x", im.Global.Mut), ErrMalformed}
			}
			m.importedGlobals++
		case wasmbin.ImportTag:
			return &Error{im.Offset, "a tag import (exception handling)", ErrUnsupported}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.End("import section")
}

// Fuel is how many checks run between two yields to the host, where the
// flag is read.
const Fuel = 1 << 16

// newGlobals are the entries of the flag and the fuel counter in the
// global section: mutable i32s, initialised by "i32.const 0 end" and
// "i32.const Fuel end".
var newGlobals = []byte{0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41, 0x80, 0x80, 0x04, 0x0b}

func (m *module) globals(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	entries := r.Pos
	// The initialisers may read globals, but never the flag: the limit
	// is the count of globals before it.
	d := decoder{globals: m.importedGlobals + n}
	for range n {
		if err := r.globalType(); err != nil {
			return err
		}
		if _, err := d.expr(r); err != nil {
			return err
		}
	}
	if err := r.End("global section"); err != nil {
		return err
	}
	if m.importedGlobals+n > 1<<31 {
		return r.fail(ErrUnsupported, "no room for two more globals")
	}
	m.definedGlobals = n
	m.globalSec = append(appendU32(nil, n+2), r.B[entries:]...)
	m.globalSec = append(m.globalSec, newGlobals...)
	return nil
}

func (m *module) exports(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	entries := r.Pos
	for range n {
		name, err := r.Name()
		if err != nil {
			return err
		}
		if string(name) == Export {
			return r.fail(ErrUnsupported, "the module already exports "+Export)
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		if kind > 3 {
			return r.fail(ErrUnsupported, fmt.Sprintf("export kind %#x", kind))
		}
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	if err := r.End("export section"); err != nil {
		return err
	}
	if n == ^uint32(0) {
		return r.fail(ErrUnsupported, "no room for another export")
	}
	m.exportSec = append(appendU32(nil, n+1), r.B[entries:]...)
	m.exportSec = m.appendExport(m.exportSec)
	return nil
}

func (m *module) appendExport(b []byte) []byte {
	b = appendU32(b, uint32(len(Export)))
	b = append(b, Export...)
	return appendU32(append(b, 3), m.flag())
}

// check returns the code inserted after a loop's block type and at the
// entry of a function that calls:
//
//	global.get $fuel  i32.const 1  i32.sub  global.set $fuel
//	global.get $fuel  i32.eqz
//	if
//	  i32.const Fuel  global.set $fuel
//	  i32.const 0  memory.grow 0  drop    ;; a yield to the host
//	  global.get $flag
//	  if  unreachable  end
//	end
func (m *module) check() []byte {
	fuel := func(b []byte, op byte) []byte { return appendU32(append(b, op), m.fuel()) }
	b := fuel(nil, 0x23)
	b = fuel(append(b, 0x41, 0x01, 0x6b), 0x24)
	b = fuel(b, 0x23)
	b = append(b, 0x45, 0x04, 0x40, 0x41, 0x80, 0x80, 0x04)
	b = fuel(b, 0x24)
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a, 0x23)
	b = appendU32(b, m.flag())
	return append(b, 0x04, 0x40, 0x00, 0x0b, 0x0b)
}

// ChargeShift sets what a bulk memory or table instruction costs: one check
// per 1<<ChargeShift units of its length (bytes or table entries), plus
// one. A memory.fill of 64 MiB costs 262,145 checks, more than Fuel: the
// guest yields, and reads the flag, after each one.
const ChargeShift = 8

// chargeType is the type of the charge function: (i32) -> i32.
var chargeType = []byte{0x60, 0x01, 0x7f, 0x01, 0x7f}

// chargeBody returns the charge function, called with the length operand
// of every bulk instruction just before it (it returns the length, so the
// operand stack is unchanged):
//
//	global.get $fuel  local.get 0  i32.const ChargeShift  i32.shr_u  i32.sub
//	i32.const 1  i32.sub  global.set $fuel
//	global.get $fuel  i32.const 1  i32.lt_s
//	if
//	  i32.const Fuel  global.set $fuel
//	  i32.const 0  memory.grow 0  drop
//	  global.get $flag
//	  if  unreachable  end
//	end
//	local.get 0
func (m *module) chargeBody() []byte {
	b := append([]byte{0x00}, m.chargeCode(0)...) // no locals
	return append(b, 0x20, 0x00, 0x0b)
}

// chargeCode is the charge function's work on the length in local l: the
// charge function's body, and inlined in fill and copy (bulk.go).
func (m *module) chargeCode(l uint32) []byte {
	fuel := func(b []byte, op byte) []byte { return appendU32(append(b, op), m.fuel()) }
	b := fuel(nil, 0x23)
	b = appendU32(append(b, 0x20), l)
	b = append(b, 0x41, ChargeShift, 0x76, 0x6b, 0x41, 0x01, 0x6b)
	b = fuel(b, 0x24)
	b = fuel(b, 0x23)
	b = append(b, 0x41, 0x01, 0x48, 0x04, 0x40, 0x41, 0x80, 0x80, 0x04)
	b = fuel(b, 0x24)
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a, 0x23)
	b = appendU32(b, m.flag())
	return append(b, 0x04, 0x40, 0x00, 0x0b, 0x0b)
}

// maxLocals bounds the parameters and locals of a function that gets a
// local more (inlineFill): a larger one keeps its fill calls.
const maxLocals = 1 << 16

// insert is code to insert at an offset of a function body.
type insert struct {
	at   int
	code []byte
	// skip is how many bytes of the body from at the code replaces.
	skip int
}

func (m *module) code(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	check := m.check()
	// The charge function is the one added after every other, then fill
	// and copy (bulk.go).
	chargeFn := m.importedFuncs + m.definedFuncs
	charge := appendU32([]byte{0x10}, chargeFn)
	fill, cpy := appendU32([]byte{0x10}, chargeFn+1), appendU32([]byte{0x10}, chargeFn+2)
	charged := false
	out := appendU32(make([]byte, 0, len(r.B)+len(r.B)/8), n)
	d := decoder{globals: m.flag()}
	var ins []insert
	for i := range n {
		size, err := r.U32()
		if err != nil {
			return err
		}
		off := r.Offset()
		body, err := r.Take(uint64(size), "function body")
		if err != nil {
			return err
		}
		br := &reader{wasmbin.Reader{B: body, Base: off}}
		groups, groupsAt, nlocals, err := br.locals()
		if err != nil {
			return err
		}
		entry := br.Pos
		c, err := d.expr(br)
		if err != nil {
			return err
		}
		if err := br.End("function body"); err != nil {
			return err
		}
		// A function that calls no other runs at most its own size
		// between loop heads; one that calls could recurse. A bulk
		// instruction is charged by its length.
		ins = ins[:0]
		// A memory.fill of a constant value and length (a struct
		// cleared) becomes stores into a local added to the body.
		tmp, canInline, inlined := uint32(0), false, false
		if i < uint32(len(m.funcTypes)) && m.funcTypes[i] < uint32(len(m.params)) {
			if t := uint64(m.params[m.funcTypes[i]]) + nlocals; t < maxLocals && groups < maxLocals {
				tmp, canInline = uint32(t), true
				ins = append(ins, insert{0, nil, 0}) // the declarations, below
			}
		}
		if c.calls {
			ins = append(ins, insert{entry, check, 0})
		}
		li, bi := 0, 0
		for li < len(c.loops) || bi < len(c.bulk) {
			// A loop's check comes first where a bulk instruction (or
			// the constants inlineFill replaces with it) begins the
			// loop's body.
			if bi == len(c.bulk) || li < len(c.loops) && c.loops[li] <= c.bulk[bi].from {
				ins = append(ins, insert{c.loops[li], check, 0})
				li++
			} else {
				b := c.bulk[bi]
				switch op := body[b.at:b.end]; {
				case canInline && b.fill && b.filled >= 1 && b.filled <= fillInline:
					ins = append(ins, insert{b.from, inlineFill(tmp, b.value, b.filled), b.end - b.from})
					inlined = true
					bi++
					continue
				case bytes.Equal(op, memoryFill):
					ins = append(ins, insert{b.at, fill, len(op)})
				case bytes.Equal(op, memoryCopy):
					ins = append(ins, insert{b.at, cpy, len(op)})
				default:
					ins = append(ins, insert{b.at, charge, 0})
				}
				charged = true
				bi++
			}
		}
		if canInline {
			if inlined {
				// One more group of one i32: the local tmp.
				decl := appendU32(nil, groups+1)
				decl = append(append(decl, body[groupsAt:entry]...), 0x01, 0x7f)
				ins[0] = insert{0, decl, entry}
			} else {
				ins = ins[1:]
			}
		}
		if len(ins) > 0 && !m.memory {
			return &Error{off, "no memory, which the check needs to yield to the host", ErrUnsupported}
		}
		grown := len(body)
		for _, in := range ins {
			grown += len(in.code) - in.skip
		}
		out = appendU32(out, uint32(grown))
		prev := 0
		for _, in := range ins {
			out = append(append(out, body[prev:in.at]...), in.code...)
			prev = in.at + in.skip
		}
		out = append(out, body[prev:]...)
	}
	if err := r.End("code section"); err != nil {
		return err
	}
	if charged {
		if m.typeSec == nil || m.funcSec == nil {
			return r.fail(ErrMalformed, "code without a type or function section")
		}
		// The function count in front of the bodies grows by three.
		cnt := appendU32(nil, n)
		out = append(appendU32(nil, n+3), out[len(cnt):]...)
		for _, body := range [][]byte{m.chargeBody(), fillBody(m.chargeCode(2)), copyBody(m.chargeCode(2))} {
			out = append(appendU32(out, uint32(len(body))), body...)
		}
	}
	m.charged = charged
	m.codeSec = out
	return nil
}

// write assembles the output: the input's sections in order, the
// rewritten ones replaced, the global and export sections added before the
// first section that must follow them when the module had none.
func (m *module) write(wasm []byte, secs []section) []byte {
	out := make([]byte, 0, len(wasm)+len(m.codeSec)-sectionLen(secs, secCode)+64)
	out = append(out, wasm[:8]...)
	if m.globalSec == nil {
		m.globalSec = append([]byte{2}, newGlobals...)
	}
	if m.exportSec == nil {
		m.exportSec = m.appendExport([]byte{1})
	}
	pending := []struct {
		id   byte
		body []byte
	}{{secGlobal, m.globalSec}, {secExport, m.exportSec}}
	for _, s := range secs {
		replaced := false
		for len(pending) > 0 && s.id != secCustom && sectionRank[s.id] >= sectionRank[pending[0].id] {
			out = appendSection(out, pending[0].id, pending[0].body)
			replaced = replaced || s.id == pending[0].id
			pending = pending[1:]
		}
		switch {
		case replaced:
		case s.id == secCode:
			out = appendSection(out, s.id, m.codeSec)
		case s.id == secType && m.typeSec != nil:
			out = appendSection(out, s.id, m.typeSec)
		case s.id == secFunc && m.funcSec != nil:
			out = appendSection(out, s.id, m.funcSec)
		default:
			out = appendSection(out, s.id, s.body)
		}
	}
	for _, p := range pending {
		out = appendSection(out, p.id, p.body)
	}
	return out
}

func sectionLen(secs []section, id byte) int {
	for _, s := range secs {
		if s.id == id {
			return len(s.body)
		}
	}
	return 0
}

func appendSection(b []byte, id byte, body []byte) []byte {
	return append(appendU32(append(b, id), uint32(len(body))), body...)
}

func appendU32(b []byte, v uint32) []byte { return wasmbin.AppendULEB(b, uint64(v)) }
