package jsonstr

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainByte is the byte-at-a-time definition plainPrefix implements.
func plainByte(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }

// TestPlainPrefix checks the word-at-a-time scans (plainPrefix and
// escapeAt) against the byte tests for every byte value at every position
// of strings shorter and longer than a step, alone and next to every
// other value, and from every start.
func TestPlainPrefix(t *testing.T) {
	want := func(s string, i int) int {
		for i < len(s) && plainByte(s[i]) {
			i++
		}
		return i
	}
	wantEscape := func(s string, i int) (int, bool) {
		high := false
		for ; i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\'; i++ {
			high = high || s[i] >= utf8.RuneSelf
		}
		return i, high
	}
	base := "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG" // 43 bytes: a step of four words, a word and a tail
	// Lengths around one word and one step, and every start that matters
	// (the beginning, just after it, mid-way, the end).
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, len(base)} {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(base[:n])
				b[pos] = byte(c)
				for c2 := 0; c2 < 256; c2 += 17 {
					b[(pos+1)%n] = byte(c2)
					for _, from := range []int{0, 1, n / 2, n} {
						if got, w := plainPrefix(string(b), from), want(string(b), from); got != w {
							t.Fatalf("plainPrefix(%q, %d) = %d, want %d", b, from, got, w)
						}
						got, high := escapeAt(string(b), from)
						if w, wHigh := wantEscape(string(b), from); got != w || high != wHigh {
							t.Fatalf("escapeAt(%q, %d) = %d, %v, want %d, %v", b, from, got, high, w, wHigh)
						}
					}
				}
			}
		}
	}
}

// quoteReference is AppendQuoted's contract written byte by byte, with no
// fast path: the fast paths must give exactly its bytes.
func quoteReference(s string) []byte {
	var b bytes.Buffer
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\udc`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		i++
	}
	b.WriteByte('"')
	return b.Bytes()
}

func TestAppendQuotedMatchesReference(t *testing.T) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)
	cases := []string{
		"", "a", "plain ascii words", long,
		`"`, `\`, "\n", "\x00", "\x1f", "\x7f", " ", "~",
		long + `"` + long, long + "\n", "\t" + long, long[:7] + "\\" + long[:9],
		"héllo wörld", "日本語のテキスト", "😀 emoji 😀", long + "é" + long,
		"\xff", "\xed\xa0\x80", "a\xffb\x80c", long[:13] + "\xc3", "\xc3(",
		"mixed\x01é\"\\\xfe" + long,
	}
	for _, s := range cases {
		for _, prefix := range []string{"", "x", "0123456"} {
			dst := []byte(prefix)
			got := AppendQuoted(dst, s)
			want := append([]byte(prefix), quoteReference(s)...)
			if !bytes.Equal(got, want) {
				t.Errorf("AppendQuoted(%q, %q) = %q, want %q", prefix, s, got, want)
			}
		}
	}
}

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "nul\x00", "\x1b[31m", "\xff\xfe", "\xed\xa0\x80", `\udc80`, "😀", "0123456\"89abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendQuoted(nil, s), quoteReference(s); !bytes.Equal(got, want) {
			t.Fatalf("AppendQuoted(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkAppendQuoted(b *testing.B) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)[:200]
	for _, c := range []struct{ name, s string }{
		{"ascii200", long},
		{"runid", "0b6f6a43-8d0f-4c36-9f0e-4c1b3a7f6f2e"},
		{"short", "assistant"},
		{"utf8", strings.Repeat("Grüße, 世界! ", 12)},
		{"escapes", strings.Repeat("line \"one\"\n\tline two\\ ", 8)},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendQuoted(buf[:0], c.s)
			}
		})
	}
}

// TestAppendQuotedGrowsOnce: quoting a long text with escapes (a tool's
// output: code, a line break and two quotes every 64 bytes) into a small
// buffer grows it at once, not 1.25x at a time as its pieces are
// appended: it allocates less than three times the literal (about five
// times before, in some twenty allocations: the test fails then), and
// the literal is the one a buffer with room gets.
func TestAppendQuotedGrowsOnce(t *testing.T) {
	text := strings.Repeat(`	if err != nil { return fmt.Errorf("read \"%s\": %w", p, err) }`+"\n", 4000)
	want := AppendQuoted(make([]byte, 0, 2*len(text)), text)
	const runs = 5
	var got []byte
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		got = AppendQuoted(make([]byte, 0, 64), text)
	}
	runtime.ReadMemStats(&after)
	if !bytes.Equal(got, want) {
		t.Fatalf("quoted into a small buffer: %d bytes, not the %d of a buffer with room", len(got), len(want))
	}
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("quoting %d bytes into a 64-byte buffer allocates %d bytes (the literal: %d)", len(text), per, len(want))
	if per >= uint64(3*len(want)) {
		t.Errorf("quoting %d bytes allocated %d bytes, not under three times the %d-byte literal", len(text), per, len(want))
	}
}
