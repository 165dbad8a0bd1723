package abi

// Walk and ValueAt give the tests of package abi_test (which import
// internal/wire, itself importing abi) the walk over every accessor and a
// value at any token.
var Walk = walk

func ValueAt(d *Doc, i int) Value { return Value{d: d, i: i} }

// checkTape is the tests' oracle for a well-formed tape (the host's batch
// decoder, package wire, refuses any other): every token inside the line,
// every Next forward inside the tape, kinds in range, a string token at
// least its two quotes.
func checkTape(toks []Token, lineLen int) bool {
	for i, t := range toks {
		if t.Start > t.End || int(t.End) > lineLen || int(t.Next) <= i || int(t.Next) > len(toks) || t.Kind == KindInvalid || t.Kind > KindNull {
			return false
		}
		if t.Kind == KindString && t.End-t.Start < 2 {
			return false
		}
	}
	return true
}
