package wire_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/wire"
)

// TestUnescapeMatchesTranscript checks that Unescape decodes exactly as
// the host decodes a provider's strings (jsonstr.AppendUnquotedJSON),
// including its treatment of surrogates, so spans resolved in a plugin and
// in the host agree.
func TestUnescapeMatchesTranscript(t *testing.T) {
	cases := []string{
		``, `plain`, `a\"b`, `\\`, `\/\b\f\n\r\t`, `\u0041\u00e9\u20ac`, `\ud83d\ude00`, `\uD83D\uDE00`,
		`\ud83d`, `\ud83dx`, `\ud83d\u0041`, `\ude00`, `\udc80`, `\udcff`, `\udc7f`, `\udd00`, `\udfff`,
		`\ud83d\ud83d\ude00`, `\ud800\udc00`, `\udbff\udfff`, `x\u0000y`, "raw\xffbyte", `\`, `\x`, `\u12`, `\u12zz`,
		`\ud83d\u12`, `abc\`, `\ud83d\`, `\ud83d\ude0`,
	}
	for _, c := range cases {
		got, ok := wire.Unescape(nil, []byte(c))
		want, err := jsonstr.AppendUnquotedJSON(nil, []byte(`"`+c+`"`))
		assert.Equal(t, err == nil, ok, "%q", c)
		if ok {
			assert.Equal(t, want, got, "%q", c)
		}
		// The compare that abi.Value.Is and Get make on escaped strings agrees.
		assert.Equal(t, ok, wire.UnescapedEquals([]byte(c), string(got)), "%q", c)
		if ok && len(got) > 0 {
			assert.False(t, wire.UnescapedEquals([]byte(c), string(got[:len(got)-1])), "%q shorter", c)
			assert.False(t, wire.UnescapedEquals([]byte(c), string(got)+"x"), "%q longer", c)
		}
	}
	// A provider's \udc80-\udcff are lone surrogates like any other (their
	// WTF-8 bytes), not the raw bytes twasm's transcript encoding means by
	// them: written back, they stay distinct from a raw invalid byte.
	got, ok := wire.Unescape(nil, []byte(`a\udcff\udc80`))
	require.True(t, ok)
	assert.Equal(t, []byte{'a', 0xed, 0xb3, 0xbf, 0xed, 0xb2, 0x80}, got)
	assert.Equal(t, `"a\udced\udcb3\udcbf\udced\udcb2\udc80"`, string(jsonstr.AppendQuoted(nil, string(got))))
	assert.Equal(t, `"a\udcff\udc80"`, string(jsonstr.AppendQuoted(nil, "a\xff\x80")))
	// A valid pair is one rune.
	got, _ = wire.Unescape(nil, []byte(`\ud83d\ude00`))
	assert.Equal(t, "😀", string(got))
	assert.True(t, utf8.Valid(got))
	// dst is appended to.
	got, _ = wire.Unescape([]byte("x"), []byte(`y`))
	assert.Equal(t, "xy", string(got))
}

func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a\"b`, `\ud83d\ude00`, `\udcff`, `\ud83d`, `\u12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got, ok := wire.Unescape(nil, s)
		q := append(append([]byte{'"'}, s...), '"')
		want, err := jsonstr.AppendUnquotedJSON(nil, q)
		if ok != (err == nil) {
			t.Fatalf("%q: ok %v, transcript err %v", s, ok, err)
		}
		if ok && string(got) != string(want) {
			t.Fatalf("%q: %q != %q", s, got, want)
		}
		if ok != wire.UnescapedEquals(s, string(got)) {
			t.Fatalf("%q: UnescapedEquals disagrees with Unescape (%q)", s, got)
		}
		if ok && len(got) > 0 && wire.UnescapedEquals(s, string(got[:len(got)-1])) {
			t.Fatalf("%q: UnescapedEquals matches a prefix", s)
		}
	})
}

// TestIndexByteWords checks the TinyGo build's word-at-a-time search
// against bytes.IndexByte: every length to 40, the byte sought (or none)
// at every position, with bytes around it that differ from it in one bit
// or wrap around ('[', ']', 0xdc, 0x00, 0xff), for bytes at both ends of
// the range and the ones plugins seek.
func TestIndexByteWords(t *testing.T) {
	for _, c := range []byte{'\\', '(', '?', 0x00, 0x01, 0x7f, 0x80, 0xff} {
		for n := 0; n <= 40; n++ {
			for _, fill := range []byte{'a', '[', ']', 0xdc, 0x00, 0xff, 0x5d, c ^ 1, c ^ 0x80, c + 1, c - 1} {
				if fill == c {
					continue
				}
				b := bytes.Repeat([]byte{fill}, n)
				for at := -1; at < n; at++ {
					for _, second := range []int{-1, at + 1, at + 8} {
						d := append([]byte(nil), b...)
						if at >= 0 {
							d[at] = c
						}
						if second >= 0 && second < n {
							d[second] = c
						}
						want := bytes.IndexByte(d, c)
						if got := wire.IndexByteWords(string(d), c); got != want {
							t.Fatalf("indexByteWords(%q, %q) = %d, want %d", d, c, got, want)
						}
						if got := wire.IndexByte(string(d), c); got != want {
							t.Fatalf("IndexByte(%q, %q) = %d, want %d", d, c, got, want)
						}
						if c == '\\' {
							if got := wire.IndexBackslashWords(d); got != want {
								t.Fatalf("indexBackslashWords(%q) = %d, want %d", d, got, want)
							}
						}
					}
				}
			}
		}
	}
}
