package abi_test

import (
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// FuzzDecodeBatch decodes arbitrary batches (the host's input to a plugin,
// package wire) and walks every value of every line through abi's
// accessors: nothing a batch holds may make them read out of bounds.
func FuzzDecodeBatch(f *testing.F) {
	add := func(lines ...string) {
		b := wire.AppendBatchHeader(nil, len(lines))
		for i, l := range lines {
			toks, _ := wire.BuildTape(nil, []byte(l))
			b = wire.AppendBatchLine(b, i+1, []byte(l), toks)
		}
		f.Add(b)
	}
	add(`{"a":[1,2]}`)
	add(`x`, `{"type":"message","content":[{"text":"hi"}]}`, ``)
	add()
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, buf []byte) {
		for _, scratch := range [][]wire.Token{nil, make([]wire.Token, 0, 4)} {
			_ = wire.DecodeBatch(buf, scratch, func(bl wire.BatchLine) error {
				d := &abi.Doc{Line: bl.Line, Toks: bl.Toks}
				abi.Walk(d.Root(), 0)
				for i := range bl.Toks {
					abi.Walk(abi.ValueAt(d, i), 64)
				}
				return nil
			})
		}
	})
}
