package jsonstr

import (
	"strings"
	"testing"
)

// reencodeReference is what the compactor wrote of every string literal
// before its fast paths: the text the contents denote, quoted again by
// AppendQuoted. The fast paths must give exactly its bytes.
func reencodeReference(t *testing.T, raw string, surrogateEscape bool) []byte {
	t.Helper()
	text, err := appendUnquoted(nil, []byte(raw), surrogateEscape)
	if err != nil {
		t.Fatalf("unquote %q: %v", raw, err)
	}
	return AppendQuoted(nil, string(text))
}

// literalPieces are contents of string literals that each take another
// path: plain ASCII, every escape AppendQuoted writes and the ones it
// does not (\/, \b, \f, upper-case hex, a control character it writes
// short, a code point from 0x20), raw control, invalid UTF-8 and
// surrogate bytes, valid multi-byte text, and \udc80..\udcff, which the
// two readings (AppendCompactJSON, AppendCompactInput) take differently.
var literalPieces = []string{
	"a", "plain text", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`,
	`\u0000`, `\u0001`, `\u001f`, `\u001F`, `\u000A`, `\u0009`, `\u000a`, `\u000d`, `\u0010`, `\u001b`,
	`\u0020`, `\u007f`, `\u00e9`, `\u20ac`, `\udc80`, `\udcff`, `\udcc3\udca9`, `\ud83d\ude00`, `\ud800`,
	"\x01", "\x1f", "\x7f", "\x80", "\xff", "\xed\xa0\x80", "é", "€", "😀",
	"abcdefghijklmnopqrstuvwxyz0123456789", // longer than a step of plainPrefix
}

// TestCompactStringsMatchReference compacts every literal made of up to
// three pieces, alone and as an object's key and value, under both
// readings, and checks the compactor writes what the reference does.
func TestCompactStringsMatchReference(t *testing.T) {
	var raws []string
	for _, a := range literalPieces {
		raws = append(raws, a)
		for _, b := range literalPieces {
			raws = append(raws, a+b)
			for _, c := range literalPieces {
				raws = append(raws, a+b+c)
			}
		}
	}
	raws = append(raws, "")
	for _, raw := range raws {
		for _, surrogateEscape := range []bool{true, false} {
			want := reencodeReference(t, raw, surrogateEscape)
			lit := `"` + raw + `"`
			for _, tc := range []struct{ src, want string }{
				{lit, string(want)},
				{`{` + lit + `: ` + lit + `}`, `{` + string(want) + `:` + string(want) + `}`},
				{`[1, ` + lit + ` ]`, `[1,` + string(want) + `]`},
			} {
				got, _, err := appendCompact(nil, []byte(tc.src), surrogateEscape)
				if err != nil {
					t.Fatalf("compact %q (surrogate escape %v): %v", tc.src, surrogateEscape, err)
				}
				if string(got) != tc.want {
					t.Fatalf("compact %q (surrogate escape %v) = %q, want %q", tc.src, surrogateEscape, got, tc.want)
				}
			}
			if canonical([]byte(raw)) && string(want) != lit {
				t.Fatalf("canonical(%q) is true, but it is written as %s", raw, want)
			}
		}
	}
}

// TestCanonical pins which literals are copied as they are: those
// AppendQuoted writes, and no other.
func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{"", true},
		{"plain", true},
		{`a\"b\\c\nd\re\tf`, true},
		{`\u0000\u001f\u001b`, true},
		{"é€😀", true},
		{`\/`, false},
		{`\b`, false},
		{`\u000a`, false},       // written \n
		{`\u001F`, false},       // upper case
		{`\u0020`, false},       // not a control character
		{`\u00e9`, false},       // written as the UTF-8 bytes
		{`\udc80`, false},       // a raw byte or U+DC80, never written so
		{"\x01", false},         // a raw control byte
		{"\xff", false},         // invalid UTF-8
		{"\xed\xa0\x80", false}, // a surrogate's bytes
		{`\u00`, false},         // cut short
		{`\`, false},
	} {
		if got := canonical([]byte(tc.raw)); got != tc.want {
			t.Errorf("canonical(%q) = %v, want %v", tc.raw, got, tc.want)
		}
	}
	if !strings.HasPrefix(string(AppendQuoted(nil, "\x1b")), `"\u001b`) {
		t.Fatal(`AppendQuoted no longer writes ESC as \u001b: canonical must follow it`)
	}
}
