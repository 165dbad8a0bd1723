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
	// Unescaping never lengthens: one allocation.
	b, ok := wire.Unescape(make([]byte, 0, len(raw)), raw)
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

// StatedExitCode returns the exit code a tool's output text states on a
// line of its own that begins with label ("Exit Code: 1" in Gemini's
// shell output, "Exit code: 1" and "Process exited with code 1" in
// Codex's): the number after the label on the last such line of t (the
// runner writes its own line after whatever the command printed), unset
// when no line states one. A line that begins with the label but holds
// no number ("Exit Code: (none)") states none.
func StatedExitCode(t []byte, label string) Int {
	var code Int
	for i := 0; i+len(label) <= len(t); i++ {
		if (i == 0 || t[i-1] == '\n') && HasPrefix(t[i:], label) {
			if v, ok := wire.ParseInt(numPrefix(t[i+len(label):])); ok {
				code = N(v)
			}
		}
	}
	return code
}

// numPrefix is the optional sign and the digits b starts with.
func numPrefix(b []byte) []byte {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	for i < len(b) && i < 19 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return b[:i]
}

// SplitOutputHeader splits a tool's textual output at its "Output:" line,
// the form Codex's shell tools write (and OpenAI's Responses API carries
// in request logs): the header holds the runner's metadata lines ("Exit
// code: 1", "Wall time: ...", "Process exited with code 1"), the body
// what the command printed. An output without that line is all body, but
// its first four lines are still the header (a bare "Exit code: N").
func SplitOutputHeader(t []byte) (head, body []byte) {
	for i := 0; i+7 <= len(t); i++ {
		if (i == 0 || t[i-1] == '\n') && HasPrefix(t[i:], "Output:") && (i+7 == len(t) || t[i+7] == '\n' || t[i+7] == '\r') {
			j := i + 7
			if j < len(t) && t[j] == '\r' {
				j++
			}
			if j < len(t) && t[j] == '\n' {
				j++
			}
			return t[:i], t[j:]
		}
	}
	n := 0
	for i := 0; i < len(t) && n < 4; i++ {
		if t[i] == '\n' {
			n++
			if n == 4 {
				return t[:i], t
			}
		}
	}
	return t, t
}

// HeaderExitCode is the exit code an output header (SplitOutputHeader)
// states: "Exit code: N", else "Process exited with code N"; unset when
// it states none. Only the header is read, so a command that prints
// "Exit code: 3" itself is not misread.
func HeaderExitCode(head []byte) Int {
	code := StatedExitCode(head, "Exit code: ")
	if _, ok := code.Value(); !ok {
		code = StatedExitCode(head, "Process exited with code ")
	}
	return code
}

// Clip bounds s to about max bytes for a warning, cut at a character
// boundary, "..." marking the cut.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "..."
}

// FinalText gathers the texts of an answer's text blocks into the step's
// final answer, joined with newlines. One text is reported as its span
// of the line (no copy); a second one copies them. It holds values of
// the current line: use one within a Line call.
type FinalText struct {
	first abi.Value
	all   []byte
	n     int
}

// Add adds string value v (nothing for another kind or "").
func (f *FinalText) Add(v abi.Value) {
	if v.Kind() != abi.KindString || v.Is("") {
		return
	}
	switch f.n {
	case 0:
		f.first = v
	case 1:
		f.all = AppendText(f.all, f.first)
		fallthrough
	default:
		f.all = AppendText(append(f.all, '\n'), v)
	}
	f.n++
}

// Report reports the text added as the final answer, overriding an
// earlier one (the latest answer wins); nothing when none was added.
func (f *FinalText) Report(out *Out) {
	switch {
	case f.n == 1:
		out.Final(Text(f.first), true)
	case f.n > 1:
		out.Final(S(string(f.all)), true)
	}
}
