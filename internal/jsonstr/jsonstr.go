package jsonstr

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/twasm/twasm/internal/wire"
)

// ErrBadJSON is wrapped by the JSON helpers of this package on malformed
// input.
var ErrBadJSON = errors.New("malformed JSON")

const hexDigits = "0123456789abcdef"

// AppendQuoted appends s to dst as a JSON string literal, quotes included.
//
// Valid UTF-8 is copied; '"', '\\' and control characters are escaped
// (NUL becomes \u0000, ESC \u001b); each byte of an invalid UTF-8 sequence
// becomes a lone low-surrogate escape \udc80..\udcff, which
// [AppendUnquoted] turns back into the same byte. HTML characters are not
// escaped. The result never contains a raw line break.
func AppendQuoted(dst []byte, s string) []byte {
	// Most strings are plain ASCII throughout: find where the first byte
	// that needs a look is, and copy everything before it at once.
	i := plainPrefix(s, 0)
	dst = append(dst, '"')
	if i == len(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return appendQuotedRest(dst, s, i)
}

// appendQuotedRest appends the rest of AppendQuoted's literal of s, whose
// bytes before i are plain ASCII, after the opening quote.
func appendQuotedRest(dst []byte, s string, i int) []byte {
	// A dst without room for s is grown at once, by s and an eighth
	// more for escapes, and at least doubled: appended piece by piece, a
	// long text (a tool's output) grew it 1.25x at a time, allocating
	// and copying several times its size (the recorder encodes a batch
	// of events into one buffer). Made, not grown by append, whose
	// growth clears the new capacity: fresh memory is then touched (a
	// page fault a page) only as it is written. A dst with room (a
	// caller's estimate) is left to grow only if the escapes need it.
	if cap(dst)-len(dst) < len(s)+1 {
		b := make([]byte, len(dst), len(dst)+max(len(s)+len(s)/8+1, cap(dst)))
		copy(b, dst)
		dst = b
	}
	start := 0 // s[start:i] is still to be copied as it is
	for {
		// Up to the next byte to escape, text is copied as it is when it
		// is valid UTF-8 (checked at once), else rune by rune.
		j, high := escapeAt(s, i)
		if high && !utf8.ValidString(s[i:j]) {
			dst = append(dst, s[start:i]...)
			dst = appendRunes(dst, s[i:j])
			start = j
		}
		if j == len(s) {
			break
		}
		dst = append(dst, s[start:j]...)
		switch c := s[j]; c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i = j + 1
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendRunes appends s, which holds no byte below 0x20, '"' or '\\',
// with each byte of an invalid UTF-8 sequence as \udc80..\udcff.
func appendRunes(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', 'd', 'c', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// Word masks for plainPrefix.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix returns the offset of the first byte at or after i that
// AppendQuoted does not copy as it is (anything but ASCII from 0x20 other
// than '"' and '\\'), or len(s). It looks at a word of eight bytes at a
// time (see escapes), and at four words per step while they are plain.
func plainPrefix(s string, i int) int {
	for ; i+32 <= len(s); i += 32 {
		w0, w1, w2, w3 := load64(s, i), load64(s, i+8), load64(s, i+16), load64(s, i+24)
		if (w0|w1|w2|w3|escapes(w0)|escapes(w1)|escapes(w2)|escapes(w3))&highs != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if !plainWord(load64(s, i)) {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// escapeAt returns the offset of the first byte at or after i that
// AppendQuoted escapes ('"', '\\', below 0x20), or len(s), and whether a
// byte of s[i:] before it is not ASCII. It looks at eight bytes at a time
// as plainPrefix does, without the test for the high bit.
func escapeAt(s string, i int) (int, bool) {
	var high uint64
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		if escapes(w)&highs != 0 {
			break
		}
		high |= w
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' {
			break
		}
		high |= uint64(c)
	}
	return i, high&highs != 0
}

// load64 returns s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	// One bounds check, so the compiler merges the byte loads into one
	// 64-bit load (as in encoding/binary).
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// plainWord reports whether all eight bytes of w are plain (see
// plainPrefix).
func plainWord(w uint64) bool { return (w|escapes(w))&highs == 0 }

// escapes flags, in the high bit of each byte of w, the bytes AppendQuoted
// escapes (below 0x20, '"', '\\'), if none of the bytes before it is
// flagged: a byte b below 0x80 is below 0x20 when b-0x20 borrows into its
// high bit, and equal to q when b^q is 0, so that b^q-1 borrows likewise.
// A byte from 0x80 has its high bit set in all three, and is never
// flagged (&^w; b^q keeps b's high bit). A borrow only carries out of a
// byte that is flagged, so no byte is flagged before the first that
// should be, and a word has a flag exactly when one of its bytes should.
func escapes(w uint64) uint64 {
	return ((w - 0x20*ones) | ((w ^ '"'*ones) - ones) | ((w ^ '\\'*ones) - ones)) &^ w
}

// AppendUnquoted appends the bytes a JSON string literal denotes to dst.
// quoted may include the surrounding quotes or be only the contents.
//
// It is the inverse of [AppendQuoted]: a lone \udc80..\udcff escape
// becomes the byte 0x80..0xff; other lone surrogates are kept as their
// WTF-8 bytes. It is tolerant of raw control bytes and invalid UTF-8 inside
// the literal (they are copied), and fails only on a malformed escape.
func AppendUnquoted(dst, quoted []byte) ([]byte, error) {
	return appendUnquoted(dst, quoted, true)
}

// appendUnquoted unquotes; with surrogateEscape a lone \udc80..\udcff is
// the raw byte 0x80..0xff (twasm's encoding), else the code point.
func appendUnquoted(dst, quoted []byte, surrogateEscape bool) ([]byte, error) {
	s := quoted
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	start := 0
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			// The next escape, found many bytes at a time: the text
			// up to it is copied as it is.
			k := bytes.IndexByte(s[i:], '\\')
			if k < 0 {
				break
			}
			i += k
		}
		dst = append(dst, s[start:i]...)
		if surrogateEscape && i+1 < len(s) && s[i+1] == 'u' {
			if r, ok := wire.Hex4(s, i+2); ok && r >= 0xdc80 && r <= 0xdcff {
				// twasm's encoding of the raw byte 0x80..0xff (a low
				// surrogate can never begin a pair).
				dst = append(dst, byte(r-0xdc00))
				i += 6
				start = i
				continue
			}
		}
		b, n, next, ok := wire.UnescapeOne(s, i)
		if !ok {
			return dst, escapeError(s, i)
		}
		dst = append(dst, b[:n]...)
		i = next
		start = i
	}
	return append(dst, s[start:]...), nil
}

// escapeError says what is wrong with the escape at s[i], which
// wire.UnescapeOne refused.
func escapeError(s []byte, i int) error {
	switch {
	case i+1 >= len(s):
		return fmt.Errorf("%w: string ends inside an escape", ErrBadJSON)
	case s[i+1] == 'u':
		return fmt.Errorf("%w: bad \\u escape", ErrBadJSON)
	}
	return fmt.Errorf("%w: bad escape \\%c", ErrBadJSON, s[i+1])
}

// AppendUnquotedJSON appends the bytes a JSON string literal written by
// someone else (a provider) denotes to dst: every \uXXXX escape is the
// code point it names, as in any JSON parser. It differs from
// [AppendUnquoted] on lone surrogates only: \udc80..\udcff is the code
// point U+DC80..U+DCFF, kept as its WTF-8 bytes like every other lone
// surrogate, never the raw byte twasm's own encoding means by it. So a
// provider's "\udc80" is written back by [AppendQuoted] as three escapes
// (\udced\udcb2\udc80), distinct from a raw invalid byte 0x80 (\udc80).
func AppendUnquotedJSON(dst, quoted []byte) ([]byte, error) {
	return appendUnquoted(dst, quoted, false)
}

// Unquote returns the string a JSON string literal denotes (see
// [AppendUnquoted]).
func Unquote(quoted []byte) (string, error) {
	b, err := AppendUnquoted(nil, quoted)
	return string(b), err
}

// AppendCompactJSON appends src, which must be one JSON value, to dst in
// canonical compact form: no insignificant white space, and every string
// re-encoded by [AppendQuoted] so that the result is valid UTF-8 whatever
// src contained. Object key order and number spelling are kept.
//
// An object member whose key repeats a later member's is dropped: the last
// one is kept, as JSON parsers do, so that strict parsers (which refuse
// duplicate keys) read the result too.
func AppendCompactJSON(dst, src []byte) ([]byte, error) {
	out, _, err := appendCompact(dst, src, true)
	return out, err
}

// AppendCompactInput is [AppendCompactJSON] for JSON written by someone
// else (a provider's tool input): strings are read by
// [AppendUnquotedJSON], so a \udc80..\udcff escape is a code point, not
// a raw byte. It returns how many members were dropped because a later one
// had the same key, for the caller to say so.
func AppendCompactInput(dst, src []byte) (out []byte, duplicates int, err error) {
	return appendCompact(dst, src, false)
}

func appendCompact(dst, src []byte, surrogateEscape bool) ([]byte, int, error) {
	p := compactor{src: src, surrogateEscape: surrogateEscape}
	p.skipWS()
	out, err := p.value(dst, 0)
	if err != nil {
		return dst, 0, err
	}
	p.skipWS()
	if p.i != len(p.src) {
		return dst, 0, fmt.Errorf("%w: trailing data at offset %d", ErrBadJSON, p.i)
	}
	return out, p.dups, nil
}

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
const MaxDepth = 10000

type compactor struct {
	src             []byte
	i               int
	surrogateEscape bool
	dups            int
	members         []member // of the objects being compacted, innermost last
	scratch         []byte   // a string being re-encoded, unquoted (str)
}

// member is an object member written to dst: its key at [key, colon) and
// the whole member at [key, end).
type member struct{ key, colon, end int }

func (p *compactor) skipWS() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *compactor) errf(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrBadJSON, what, p.i)
}

func (p *compactor) value(dst []byte, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, p.errf("nesting too deep")
	}
	if p.i >= len(p.src) {
		return dst, p.errf("unexpected end")
	}
	switch c := p.src[p.i]; {
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		open := len(dst)
		base := len(p.members)
		dst = append(dst, c)
		p.i++
		p.skipWS()
		if p.i < len(p.src) && p.src[p.i] == closer {
			p.i++
			return append(dst, closer), nil
		}
		for {
			var err error
			if c == '{' {
				if p.i >= len(p.src) || p.src[p.i] != '"' {
					return dst, p.errf("expected object key")
				}
				key := len(dst)
				if dst, err = p.str(dst); err != nil {
					return dst, err
				}
				p.members = append(p.members, member{key: key, colon: len(dst)})
				p.skipWS()
				if p.i >= len(p.src) || p.src[p.i] != ':' {
					return dst, p.errf("expected ':'")
				}
				p.i++
				dst = append(dst, ':')
				p.skipWS()
			}
			if dst, err = p.value(dst, depth+1); err != nil {
				return dst, err
			}
			if c == '{' {
				p.members[len(p.members)-1].end = len(dst)
			}
			p.skipWS()
			if p.i >= len(p.src) {
				return dst, p.errf("unexpected end")
			}
			switch p.src[p.i] {
			case ',':
				p.i++
				dst = append(dst, ',')
				p.skipWS()
			case closer:
				p.i++
				if c == '{' {
					dst = p.dedupe(dst, open, p.members[base:])
					p.members = p.members[:base]
				}
				return append(dst, closer), nil
			default:
				return dst, p.errf("expected ',' or closing bracket")
			}
		}
	case c == '"':
		return p.str(dst)
	case c == 't':
		return p.lit(dst, "true")
	case c == 'f':
		return p.lit(dst, "false")
	case c == 'n':
		return p.lit(dst, "null")
	case c == '-' || c >= '0' && c <= '9':
		return p.num(dst)
	default:
		return dst, p.errf("unexpected character")
	}
}

// dedupe drops the members of the object opened at dst[open] whose key a
// later member repeats. Keys were written canonically (AppendQuoted), so
// equal strings have equal bytes. It returns dst, rewritten from the first
// dropped member on when one is dropped.
func (p *compactor) dedupe(dst []byte, open int, ms []member) []byte {
	if len(ms) < 2 {
		return dst
	}
	key := func(m member) []byte { return dst[m.key:m.colon] }
	drop := make([]bool, len(ms))
	n := 0
	if len(ms) <= 16 {
		for i := range ms {
			for j := i + 1; j < len(ms); j++ {
				if bytes.Equal(key(ms[i]), key(ms[j])) {
					drop[i] = true
					n++
					break
				}
			}
		}
	} else {
		last := make(map[string]int, len(ms))
		for i, m := range ms {
			last[string(key(m))] = i
		}
		for i, m := range ms {
			if last[string(key(m))] != i {
				drop[i] = true
				n++
			}
		}
	}
	if n == 0 {
		return dst
	}
	p.dups += n
	kept := make([]byte, 0, len(dst)-open)
	for i, m := range ms {
		if drop[i] {
			continue
		}
		if len(kept) > 0 {
			kept = append(kept, ',')
		}
		kept = append(kept, dst[m.key:m.end]...)
	}
	return append(dst[:open+1], kept...)
}

func (p *compactor) lit(dst []byte, word string) ([]byte, error) {
	if len(p.src)-p.i < len(word) || string(p.src[p.i:p.i+len(word)]) != word {
		return dst, p.errf("bad literal")
	}
	p.i += len(word)
	return append(dst, word...), nil
}

func (p *compactor) num(dst []byte) ([]byte, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || n > 1 && p.src[intStart] == '0' {
		// JSON forbids leading zeros ("01"); copying them would make
		// the output invalid.
		return dst, p.errf("bad number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return dst, p.errf("bad number")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return dst, p.errf("bad number")
		}
	}
	return append(dst, p.src[start:p.i]...), nil
}

// str re-encodes the string literal at p.i.
func (p *compactor) str(dst []byte) ([]byte, error) {
	// Fast path: plain ASCII up to the closing quote, found a word at a
	// time: nothing to re-encode.
	start := p.i
	if j := plainPrefix(unsafe.String(unsafe.SliceData(p.src), len(p.src)), start+1); j < len(p.src) && p.src[j] == '"' {
		p.i = j + 1
		return append(dst, p.src[start:p.i]...), nil
	}
	end := StringEnd(p.src, start)
	if end < 0 {
		return dst, p.errf("unterminated string")
	}
	raw := p.src[start+1 : end-1]
	p.i = end
	// A literal written as AppendQuoted writes what it denotes (a
	// transcript's own JSON, most of a provider's) is copied as it is:
	// unquoting it and quoting the text again gives the same bytes.
	if canonical(raw) {
		return append(dst, p.src[start:end]...), nil
	}
	// Unquoted into one scratch buffer the compactor reuses for every
	// string, and read from there as a string for the call only: a
	// value's strings cost no allocation each, where they were unquoted
	// into a buffer grown from nothing and copied again into a string.
	if cap(p.scratch) < len(raw) {
		p.scratch = make([]byte, 0, len(raw)) // never longer unquoted
	}
	s, err := appendUnquoted(p.scratch[:0], raw, p.surrogateEscape)
	p.scratch = s
	if err != nil {
		return dst, err
	}
	var text string
	if len(s) > 0 {
		text = unsafe.String(unsafe.SliceData(s), len(s))
	}
	return AppendQuoted(dst, text), nil
}

// canonical reports whether raw, the contents of a string literal (which
// [StringEnd] delimited), is exactly what [AppendQuoted] writes of the text
// it denotes, under either reading of \udc80..\udcff: valid UTF-8 with
// no raw control byte, and no escape but those AppendQuoted writes (\",
// \\, \n, \r, \t, and \u00XX in lower case for the other control
// characters). A false is not an error: the caller re-encodes.
func canonical(raw []byte) bool {
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	for i := 0; ; {
		j, high := escapeAt(s, i)
		if high && !utf8.ValidString(s[i:j]) {
			return false
		}
		if j == len(s) {
			return true
		}
		if s[j] != '\\' || j+1 == len(s) {
			return false // a raw control byte (a quote cannot be here)
		}
		switch s[j+1] {
		case '"', '\\', 'n', 'r', 't':
			i = j + 2
		case 'u':
			if j+6 > len(s) || s[j+2] != '0' || s[j+3] != '0' || !(s[j+4] == '0' || s[j+4] == '1') {
				return false
			}
			c := s[j+5]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') || s[j+4] == '0' && (c == '9' || c == 'a' || c == 'd') {
				return false // not hex in lower case, or \t, \n, \r spelled out
			}
			i = j + 6
		default:
			return false
		}
	}
}

// StringEnd returns the offset just past the closing quote of the JSON
// string literal that starts at src[at] (which must be '"'), or -1 when it
// is not terminated. It jumps from quote to quote (bytes.IndexByte): the
// closing one is the first not escaped, that is, not after an odd number
// of backslashes within the literal.
func StringEnd(src []byte, at int) int {
	from := at + 1
	for j := from; j < len(src); j++ {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for n < j-from && src[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
	return -1
}
