//go:build tinygo

package wire

// indexBackslash is the index of the first '\\' in b, or -1.
func indexBackslash(b []byte) int { return indexByteWords(b, '\\') }

func indexByte(s string, c byte) int { return indexByteWords(s, c) }
