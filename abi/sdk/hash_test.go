package sdk

import "testing"

// TestHash64OneChange: inputs of one length that differ in one byte, at
// any position of any length up to 40 (whole words and tails), and
// inputs that differ only in length, all hash differently.
func TestHash64OneChange(t *testing.T) {
	seen := map[uint64]string{}
	add := func(b []byte) {
		t.Helper()
		h := Hash64(b)
		if prev, ok := seen[h]; ok && prev != string(b) {
			t.Fatalf("Hash64(%q) = Hash64(%q) = %#x", b, prev, h)
		}
		seen[h] = string(b)
	}
	for n := 0; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = byte('a' + i%26)
		}
		add(base)
		for i := 0; i < n; i++ {
			for _, c := range []byte{0, '"', 'z' + 1, 0xff} {
				b := append([]byte(nil), base...)
				b[i] = c
				add(b)
			}
		}
	}
	if len(seen) < 41*5 {
		t.Fatalf("%d distinct inputs hashed, want more", len(seen))
	}
}
