package views

import "strings"

// StripEscapes removes terminal escape sequences whole: CSI (ESC [ ... and
// the one-byte 0x9B), OSC (ESC ] ... ended by BEL or ST, and 0x9D), the
// string sequences DCS, SOS, PM and APC (ESC P, X, ^, _ ... ST), and the
// two-byte ESC sequences (ESC 7, ESC c, ESC ( B ...). Dropping only the
// ESC byte, as a control-character filter does, leaves "[31m" behind.
// An unterminated sequence is removed to the end of the text.
func StripEscapes(s string) string {
	if !strings.ContainsAny(s, "\x1b\u009b\u009d\u0090\u0098\u009e\u009f") {
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
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
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
