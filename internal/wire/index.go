package wire

import "math/bits"

// indexBackslashWords is the index of the first '\\' in b, or -1: eight
// bytes a step while eight are left. TinyGo's bytes.IndexByte tests one
// byte a step, and inside a WebAssembly module every step of a loop also
// pays the bounds and interrupt checks; the standard library's is
// vectorized assembly, which standard Go builds use (index_go.go).
func indexBackslashWords(b []byte) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
		bs   = '\\' * ones
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8 : i+8]
		x := (uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) ^ bs
		// A zero byte of x is a backslash of w; the lowest such byte
		// sets the lowest high bit here (higher ones may be false).
		if z := (x - ones) &^ x & high; z != 0 {
			return i + bits.TrailingZeros64(z)>>3
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '\\' {
			return i
		}
	}
	return -1
}
