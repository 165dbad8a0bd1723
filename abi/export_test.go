package abi

import "github.com/twasm/twasm/internal/wire"

// The tape of package wire, under the names the tests use.
type token = wire.Token

var buildTape = wire.BuildTape

// buildTapeKeys builds the tape the host builds for a plugin that
// declared the keys of ks.
func buildTapeKeys(dst []token, line []byte, ks *KeySet) ([]token, bool) {
	return wire.BuildTapeKeys(dst, line, &ks.w)
}

// Walk and ValueAt give the tests of package abi_test (which import
// internal/wire, itself importing abi) the walk over every accessor and a
// value at any token.
var Walk = walk

func ValueAt(d *Doc, i int) Value { return Value{d: d, i: i} }

// checkTape is the tests' oracle for a well-formed tape (the host's batch
// decoder, package wire, refuses any other): every token inside the line,
// every Next forward inside the tape, kinds in range, a string token at
// least its two quotes.
func checkTape(toks []token, lineLen int) bool {
	for i, t := range toks {
		if t.Start > t.End || int(t.End) > lineLen || int(t.Next) <= i || int(t.Next) > len(toks) || t.Kind == wire.KindInvalid || t.Kind > wire.KindNull {
			return false
		}
		if t.Kind == wire.KindString && t.End-t.Start < 2 {
			return false
		}
	}
	return true
}
