package wasmcheck

import (
	"fmt"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
)

// BoundTables returns the module wasm with a maximum size on every table
// it defines, so that table.grow cannot take the tables past
// MaxTableElements in all.
//
// wazero grows a table without a maximum up to 2^32-2 elements, 8 bytes
// each, in one allocation: one table.grow of a large count asks the Go
// runtime for up to 32 GiB, which ends the whole process ("fatal error:
// out of memory"), not the call. With a maximum, table.grow past it
// returns -1, as the WebAssembly specification lets it fail, and the
// module goes on.
//
// Each defined table keeps its minimum and gets as maximum its minimum
// plus an equal share of what the minimums leave of MaxTableElements, or
// its own declared maximum when that is smaller. Go's linker declares its
// one table without a maximum; TinyGo's (wasm-ld's) declares one equal to
// the minimum, and such a module is returned as it is, not copied.
//
// wasm must have passed Check. BoundTables returns an *Error for a table
// whose limits it cannot bound (64-bit or shared limits, which wazero
// does not run).
func BoundTables(wasm []byte) ([]byte, error) {
	r := &reader{wasmbin.Reader{B: wasm, Pos: 8}}
	var (
		head, end int // the table section, from its id to its end
		limits    []wasmbin.Limits
		refs      []byte
	)
	for r.Left() > 0 {
		h := r.Offset()
		id, body, err := r.Section("section")
		if err != nil {
			return nil, checkError(err)
		}
		if id != 4 {
			continue
		}
		if end != 0 {
			return nil, &Error{h, "a second table section"}
		}
		head, end = h, r.Offset()
		s := &reader{body}
		err = s.vec(MaxTables, "tables", func() error {
			ref, err := s.Byte()
			if err != nil {
				return err
			}
			l, err := s.Limits()
			if err != nil {
				return err
			}
			if l.Flag > 1 {
				return s.Fail(fmt.Sprintf("table limits flag %#x (64-bit or shared): cannot be bounded", l.Flag))
			}
			refs, limits = append(refs, ref), append(limits, l)
			return nil
		})
		if err != nil {
			return nil, checkError(err)
		}
	}
	var sumMin uint64
	for _, l := range limits {
		sumMin += l.Min
	}
	if sumMin > MaxTableElements {
		return nil, &Error{head, fmt.Sprintf("tables of more than %d elements in all", MaxTableElements)}
	}
	changed := false
	for i, l := range limits {
		bound := l.Min + (MaxTableElements-sumMin)/uint64(len(limits))
		if l.Flag == 0 || l.Max > bound {
			limits[i] = wasmbin.Limits{Flag: 1, Min: l.Min, Max: bound}
			changed = true
		}
	}
	if !changed {
		return wasm, nil
	}
	body := wasmbin.AppendULEB(nil, uint64(len(limits)))
	for i, l := range limits {
		body = append(body, refs[i], l.Flag)
		body = wasmbin.AppendULEB(wasmbin.AppendULEB(body, l.Min), l.Max)
	}
	out := make([]byte, 0, len(wasm)+len(body)+6-(end-head))
	out = append(out, wasm[:head]...)
	out = append(out, 4)
	out = wasmbin.AppendULEB(out, uint64(len(body)))
	out = append(out, body...)
	return append(out, wasm[end:]...), nil
}

// checkError turns a read error into an *Error (nil stays nil).
func checkError(err error) error {
	if e, ok := err.(*wasmbin.Error); ok {
		return &Error{e.Offset, e.Reason}
	}
	return err
}
