//go:build !tinygo

package wire

import (
	"bytes"
	"strings"
)

// indexBackslash is the index of the first '\\' in b, or -1.
func indexBackslash(b []byte) int { return bytes.IndexByte(b, '\\') }

func indexByte(s string, c byte) int { return strings.IndexByte(s, c) }
