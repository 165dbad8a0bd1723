package wire

import "math/bits"

// IndexByte is the index of the first c in s, or -1: strings.IndexByte
// in a standard Go build (vectorized assembly, index_go.go), eight bytes
// a step in a TinyGo build (index_tinygo.go), whose strings.IndexByte
// tests one byte a step, and inside a WebAssembly module every step of a
// loop also pays the bounds and interrupt checks. For a plugin's scans of
// whole lines for a byte that is mostly absent.
func IndexByte(s string, c byte) int { return indexByte(s, c) }

// indexByteWords is the index of the first c in b, or -1: eight bytes a
// step while eight are left.
func indexByteWords[T string | []byte](b T, c byte) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	cs := uint64(c) * ones
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8]
		x := (uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) ^ cs
		// A zero byte of x is a c of w; the lowest such byte sets the
		// lowest high bit here (higher ones may be false).
		if z := (x - ones) &^ x & high; z != 0 {
			return i + bits.TrailingZeros64(z)>>3
		}
	}
	for ; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}
