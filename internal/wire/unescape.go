package wire

import "unicode/utf8"

// Unescape decodes JSON string contents (without the quotes) as any JSON parser does: every
// \uXXXX escape is the code point it names, a lone surrogate kept as its
// WTF-8 bytes. internal/jsonstr decodes escapes with UnescapeOne too, so
// the host and the plugins read a JSON escape one way. A provider's lone \udc80-\udcff is a
// code point here, never the raw byte that twasm's transcript encoding
// means by the same escape, so the two stay apart in the transcript.
func Unescape(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		// The bytes up to the next escape in one append, not one by one.
		j := indexBackslash(s[i:])
		if j < 0 {
			return append(dst, s[i:]...), true
		}
		dst = append(dst, s[i:i+j]...)
		b, n, next, ok := UnescapeOne(s, i+j)
		if !ok {
			return dst, false
		}
		dst = append(dst, b[:n]...)
		i = next
	}
	return dst, true
}

// UnescapeOne decodes the escape at s[i] (a backslash): its n bytes of
// output in b and the offset after it. The output comes back by value so
// that a caller comparing it (UnescapedEquals) allocates nothing.
func UnescapeOne(s []byte, i int) (b [4]byte, n, next int, ok bool) {
	if i+1 >= len(s) {
		return b, 0, i, false
	}
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		b[0] = e
	case 'b':
		b[0] = '\b'
	case 'f':
		b[0] = '\f'
	case 'n':
		b[0] = '\n'
	case 'r':
		b[0] = '\r'
	case 't':
		b[0] = '\t'
	case 'u':
		r, ok := Hex4(s, i+2)
		if !ok {
			return b, 0, i, false
		}
		i += 6
		if r >= 0xd800 && r < 0xdc00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
			if r2, ok := Hex4(s, i+2); ok && r2 >= 0xdc00 && r2 < 0xe000 {
				n = utf8.EncodeRune(b[:], 0x10000+(r-0xd800)<<10+(r2-0xdc00))
				return b, n, i + 6, true
			}
		}
		if r >= 0xd800 && r < 0xe000 {
			// A lone surrogate: its WTF-8 bytes.
			b[0], b[1], b[2] = byte(0xe0|r>>12), byte(0x80|(r>>6)&0x3f), byte(0x80|r&0x3f)
			return b, 3, i, true
		}
		// Not `return b, utf8.EncodeRune(b[:], r), ...`: the order in
		// which b and the call are evaluated is unspecified (TinyGo
		// reads b first).
		n = utf8.EncodeRune(b[:], r)
		return b, n, i, true
	default:
		return b, 0, i, false
	}
	return b, 1, i + 2, true
}

// UnescapedEquals reports whether the JSON string contents s, unescaped
// as Unescape does, equal key, without building the unescaped text.
func UnescapedEquals(s []byte, key string) bool {
	k := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			if k >= len(key) || key[k] != c {
				return false
			}
			k++
			i++
			continue
		}
		b, n, next, ok := UnescapeOne(s, i)
		if !ok || len(key)-k < n {
			return false
		}
		for j := 0; j < n; j++ {
			if key[k+j] != b[j] {
				return false
			}
		}
		k += n
		i = next
	}
	return k == len(key)
}

// Hex4 reads the four hex digits of a \u escape at s[at:].
func Hex4(s []byte, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
