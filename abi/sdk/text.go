package sdk

import (
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// Small helpers that normalizers need on raw lines and string values,
// without the strings and bytes packages' allocations or reflection.

// maxTypeName bounds a native type name taken from the input.
const maxTypeName = 64

// TrimSpace returns b without leading and trailing JSON white space
// (spaces, tabs, CRs and LFs). A line's Raw has no LF, so on a line it
// trims the blanks and the CR of a CRLF ending.
func TrimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// HasPrefix reports whether b begins with p.
func HasPrefix(b []byte, p string) bool { return len(b) >= len(p) && view(b[:len(p)]) == p }

// TypeName returns string v as a native type name for [Out.Unmapped]:
// "?" when v is not a string, and at most 64 bytes, so that a hostile
// line cannot make the host's table of unmapped types huge.
func TypeName(v abi.Value) string {
	if v.Kind() != abi.KindString {
		return "?"
	}
	s := v.String()
	if len(s) > maxTypeName {
		s = s[:maxTypeName]
	}
	return s
}

// Name returns the contents of string v to switch on or to look up a map
// with, as [abi.Value.Is] compares them: in place when the literal has no
// escapes, unescaped (a copy, rare) otherwise; "", which equals no name,
// when v is not a string or its escapes are malformed. One switch on it
// replaces a chain of Is calls.
//
// The string aliases the line, like [Line].Raw: it is valid only during
// the Line call, and changes with the next input. Compare it, switch on
// it, look a map up with it (m[sdk.Name(v)]), but never keep it: not in a
// field, not as a key stored in a map (m[k] = x replaces the stored key
// with k), not in a record; keep v.String() or strings.Clone of it
// instead. (It exists because TinyGo copies the bytes of every
// string(b), even in a comparison or a map lookup, where Go does not:
// inside a plugin, every such copy is an allocation.)
func Name(v abi.Value) string {
	if v.Kind() != abi.KindString {
		return ""
	}
	raw := v.Raw()
	raw = raw[1 : len(raw)-1]
	if !v.Escaped() {
		return view(raw)
	}
	b, ok := wire.Unescape(nil, raw)
	if !ok {
		return ""
	}
	return view(b)
}

// View is v.String() without the copy when v is a string with no
// escapes: then, like [Name], it aliases the line, is valid only during
// the Line call, and must never be kept (copy it with strings.Clone, or
// call v.String(), to keep it). For a map lookup by an id, a compare, or
// a value written into a record at once.
func View(v abi.Value) string {
	if v.Kind() == abi.KindString && !v.Escaped() {
		raw := v.Raw()
		return view(raw[1 : len(raw)-1])
	}
	return v.String()
}

// view returns b as a string without copying it (see [Name]).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// StringOf is [Text] of a string value, and unset for anything else
// (where Text gives the JSON text of a number or an object).
func StringOf(v abi.Value) Str {
	if v.Kind() != abi.KindString {
		return Str{}
	}
	return Text(v)
}

// AppendText appends the unescaped contents of string v to dst (nothing
// when v is not a string). A malformed escape appends the literal rather
// than half of it.
func AppendText(dst []byte, v abi.Value) []byte {
	if v.Kind() != abi.KindString {
		return dst
	}
	raw := v.Raw()
	raw = raw[1 : len(raw)-1]
	if !v.Escaped() {
		return append(dst, raw...)
	}
	n := len(dst)
	if out, ok := wire.Unescape(dst, raw); ok {
		return out
	}
	return append(dst[:n], raw...)
}
