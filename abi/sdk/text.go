package sdk

import "github.com/twasm/twasm/abi"

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
func HasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

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

// Name returns the contents of string v to switch on, as [abi.Value.Is]
// compares them: in place when the literal has no escapes, unescaped (a
// copy, rare) otherwise; nil, which equals no name, when v is not a
// string or its escapes are malformed. One switch on it replaces a chain
// of Is calls.
func Name(v abi.Value) []byte {
	if v.Kind() != abi.KindString {
		return nil
	}
	raw := v.Raw()
	raw = raw[1 : len(raw)-1]
	if !v.Escaped() {
		return raw
	}
	b, ok := abi.Unescape(nil, raw)
	if !ok {
		return nil
	}
	return b
}

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
	if out, ok := abi.Unescape(dst, raw); ok {
		return out
	}
	return append(dst[:n], raw...)
}
