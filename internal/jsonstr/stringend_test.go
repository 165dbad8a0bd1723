package jsonstr

import "testing"

// TestStringEnd checks StringEnd, which jumps from quote to quote,
// against the rule written a byte at a time: a backslash escapes the byte
// after it, and the first quote not escaped closes the literal.
func TestStringEnd(t *testing.T) {
	tests := []struct {
		src  string
		at   int
		want int
	}{
		{`""`, 0, 2},
		{`"abc",1`, 0, 5},
		{`"a\"b"`, 0, 6},
		{`"a\\"x"`, 0, 5},
		{`"a\\\"b"`, 0, 8},
		{`"\\\\"`, 0, 6},
		{`x:"y\"",z`, 2, 7},
		{`"abc`, 0, -1},
		{`"a\"`, 0, -1},
		{`"a\`, 0, -1},
		{`"`, 0, -1},
	}
	for _, tt := range tests {
		if got := StringEnd([]byte(tt.src), tt.at); got != tt.want || got != stringEndSlow([]byte(tt.src), tt.at) {
			t.Errorf("StringEnd(%s, %d) = %d, want %d (byte at a time: %d)", tt.src, tt.at, got, tt.want, stringEndSlow([]byte(tt.src), tt.at))
		}
	}
}

// FuzzStringEnd: StringEnd agrees with the byte-at-a-time rule on any
// bytes after a quote.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`abc"`, `a\"b"`, `\\"`, `\\\"x"`, `\`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		src := []byte(`"` + rest)
		if got, want := StringEnd(src, 0), stringEndSlow(src, 0); got != want {
			t.Fatalf("StringEnd(%q) = %d, want %d", src, got, want)
		}
	})
}

// stringEndSlow is StringEnd's rule written a byte at a time.
func stringEndSlow(src []byte, at int) int {
	for i := at + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
