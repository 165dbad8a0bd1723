package sdk

// Hash64 hashes b, eight bytes a step, for a plugin that tells which
// elements of a rewritten document changed since it last read them
// (Cline's and Roo Code's task arrays, Amp's thread messages) without
// keeping their bytes. Each step XORs a word into the state and mixes it
// by a multiplication and a shift, a bijection of the state, so that two
// inputs of one length that differ in a single word never collide. It is
// not a cryptographic hash: a crafted input can collide. FNV-1a's byte
// steps cost eight times the steps: inside a TinyGo module, where every
// loop iteration also pays its bounds and interrupt checks, that was a
// tenth of the Cline plugin's time, and two fifths of Amp's natively.
func Hash64(b []byte) uint64 {
	const m = 0x9e3779b97f4a7c15 // odd: multiplying by it is a bijection
	h := uint64(len(b))*m ^ 0xcbf29ce484222325
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8 : i+8]
		h = (h ^ (uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56)) * m
		h ^= h >> 31
	}
	var t uint64
	for j := 0; i < len(b); i, j = i+1, j+8 {
		t |= uint64(b[i]) << j
	}
	h = (h ^ t) * m
	return h ^ h>>29
}
