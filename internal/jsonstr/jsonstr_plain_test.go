package jsonstr

import "testing"

// TestPlain8 checks the word-at-a-time test against the byte test for
// every byte value at every position, alone and next to every other.
func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	buf := []byte("abcdefgh")
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			if got := plain8(string(b), 0); got != plain(byte(c)) {
				t.Fatalf("plain8(%q) = %v", b, got)
			}
			for c2 := 0; c2 < 256; c2 += 3 {
				copy(buf, "abcdefgh")
				buf[pos], buf[(pos+1)%8] = byte(c), byte(c2)
				want := plain(byte(c)) && plain(byte(c2))
				if got := plain8(string(buf), 0); got != want {
					t.Fatalf("plain8(%q) = %v", buf, got)
				}
			}
		}
	}
}
