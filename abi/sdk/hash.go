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

// HashSet is a set of 64-bit hashes (Hash64's): the records, texts or
// rows a plugin has read, to tell one read again. Its zero value is an
// empty set. Inside a TinyGo module a map[uint64]bool costs a hash of
// the key through a function value, a walk of buckets of eight and a
// compare through another function value on every lookup, and a rehash
// through the map iterator as it grows: the map operations were a tenth
// of the Qwen Code plugin's guest time. A HashSet is one array, probed
// linearly from the top bits of the hash times an odd constant (so that
// hashes alike in their low bits spread), and is no slower natively than
// the map.
type HashSet struct {
	slots []uint64 // 0 is an empty slot; the hash 0 is held by zero
	shift uint     // 64 - log2(len(slots))
	n     int      // hashes in slots
	zero  bool
}

// home is the slot h's probe starts at.
func (s *HashSet) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> s.shift }

// Has reports whether h is in the set.
func (s *HashSet) Has(h uint64) bool {
	if h == 0 {
		return s.zero
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := s.home(h); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// Add puts h in the set and reports whether it was not there before.
func (s *HashSet) Add(h uint64) bool {
	if h == 0 {
		added := !s.zero
		s.zero = true
		return added
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := s.home(h); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return false
		case 0:
			s.slots[i] = h
			s.n++
			return true
		}
	}
}

// Len returns the number of hashes in the set.
func (s *HashSet) Len() int {
	if s.zero {
		return s.n + 1
	}
	return s.n
}

// Clear empties the set, keeping its room.
func (s *HashSet) Clear() {
	clear(s.slots)
	s.n, s.zero = 0, false
}

// grow doubles the slots (at least 64) and puts every hash back.
func (s *HashSet) grow() {
	old := s.slots
	n := max(64, 2*len(old))
	s.slots = make([]uint64, n)
	s.shift = 64
	for ; n > 1; n >>= 1 {
		s.shift--
	}
	mask := uint64(len(s.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := s.home(h)
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h
	}
}
