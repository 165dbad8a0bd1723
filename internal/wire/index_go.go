//go:build !tinygo

package wire

import "bytes"

// indexBackslash is the index of the first '\\' in b, or -1.
func indexBackslash(b []byte) int { return bytes.IndexByte(b, '\\') }
