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

// TestHashSet: the set holds what a map[uint64]bool holds, through its
// growth, for hashes that share their low bits (one probe chain), the
// hash 0, and after Clear.
func TestHashSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash func(i int) uint64
	}{
		{"Hash64", func(i int) uint64 { return Hash64([]byte{byte(i), byte(i >> 8), byte(i >> 16)}) }},
		{"same low bits", func(i int) uint64 { return uint64(i+1) << 32 }},
		{"small", func(i int) uint64 { return uint64(i) }},
		{"all ones", func(i int) uint64 { return ^uint64(i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s HashSet
			want := map[uint64]bool{}
			for round := range 2 {
				for i := range 3000 {
					h := tc.hash(i)
					if i%3 == 0 {
						if got := s.Has(h); got != want[h] {
							t.Fatalf("round %d: Has(%#x) = %v before Add, want %v", round, h, got, want[h])
						}
					}
					if added := s.Add(h); added == want[h] {
						t.Fatalf("round %d: Add(%#x) = %v, want %v", round, h, added, !want[h])
					}
					want[h] = true
					if s.Len() != len(want) {
						t.Fatalf("round %d: Len = %d, want %d", round, s.Len(), len(want))
					}
				}
				for i := range 6000 {
					h := tc.hash(i)
					if got := s.Has(h); got != want[h] {
						t.Fatalf("round %d: Has(%#x) = %v, want %v", round, h, got, want[h])
					}
				}
				s.Clear()
				clear(want)
				if s.Len() != 0 || s.Has(tc.hash(0)) {
					t.Fatalf("round %d: not empty after Clear", round)
				}
			}
		})
	}
}
