package views

import (
	"fmt"
	"strings"
)

// StripEscapes makes text safe to show on a terminal or a page: it
// removes terminal escape sequences whole: CSI (ESC [ ... and the one-byte
// 0x9B), OSC (ESC ] ... ended by BEL or ST, and 0x9D), the string
// sequences DCS, SOS, PM and APC (ESC P, X, ^, _ ... ST), and the two-byte
// ESC sequences (ESC 7, ESC c, ESC ( B ...). Dropping only the ESC byte,
// as a control-character filter does, leaves "[31m" behind. An
// unterminated sequence is removed to the end of the text.
//
// What is left that could still change how the text reads is shown
// instead of obeyed: a control character other than tab, line feed and
// carriage return becomes its Unicode control picture (BEL is "␇",
// backspace "␈", DEL "␡"), a C1 control and a bidirectional formatting
// character (the embeddings, overrides and isolates U+202A-U+202E and
// U+2066-U+2069, the marks U+200E, U+200F and U+061C, with which
// "Trojan Source" text reads otherwise than it is) becomes "[U+XXXX]".
func StripEscapes(s string) string {
	if !needsNeutral(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b && i+1 < len(rs):
			i = skipEscape(rs, i+1)
		case r == 0x1b:
		case r == 0x9b:
			i = skipCSI(rs, i+1)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
			i = skipString(rs, i+1)
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r':
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune(0x2421)
		case r >= 0x80 && r <= 0x9f, isBidi(r):
			fmt.Fprintf(&b, "[U+%04X]", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsNeutral reports whether s holds a byte that may start something
// StripEscapes changes: a C0 control other than tab, line feed and
// carriage return, DEL, or the lead byte of a C1 control (0xC2) or of a
// bidirectional formatting character (0xD8, 0xE2). Most text holds none,
// and is returned as it is without a copy.
func needsNeutral(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f, c == 0xc2, c == 0xd8, c == 0xe2:
			return true
		}
	}
	return false
}

// isBidi reports whether r is a bidirectional formatting character.
func isBidi(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// skipEscape skips the sequence whose byte after ESC is at i and returns
// the index of its last rune.
func skipEscape(rs []rune, i int) int {
	switch rs[i] {
	case '[':
		return skipCSI(rs, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(rs, i+1)
	}
	// ESC, then intermediate bytes (0x20-0x2F), then one final byte.
	for i < len(rs) && rs[i] >= 0x20 && rs[i] <= 0x2f {
		i++
	}
	return min(i, len(rs)-1)
}

// skipCSI skips parameter and intermediate bytes and the final byte
// (0x40-0x7E) of a control sequence starting at i.
func skipCSI(rs []rune, i int) int {
	for ; i < len(rs); i++ {
		if rs[i] >= 0x40 && rs[i] <= 0x7e {
			return i
		}
		if rs[i] < 0x20 || rs[i] > 0x7e {
			// Not a control sequence byte: the sequence is broken here;
			// the rune itself is text again.
			return i - 1
		}
	}
	return len(rs) - 1
}

// skipString skips a control string to its terminator: BEL, ST (ESC \)
// or the one-byte ST 0x9C.
func skipString(rs []rune, i int) int {
	for ; i < len(rs); i++ {
		switch {
		case rs[i] == 0x07 || rs[i] == 0x9c:
			return i
		case rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '\\':
			return i + 1
		}
	}
	return len(rs) - 1
}
