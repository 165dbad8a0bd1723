//go:build tinygo

package wire

// indexBackslash is the index of the first '\\' in b, or -1.
func indexBackslash(b []byte) int { return indexBackslashWords(b) }
