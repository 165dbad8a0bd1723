package wasminterrupt

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/twasm/twasm/internal/wasm/wasmcheck"
)

// FuzzInstrument: Instrument never panics, never modifies its input,
// fails only with an *Error, and what it returns passes wasmcheck and
// compiles whenever the input did.
func FuzzInstrument(f *testing.F) {
	for _, c := range instrumentCases {
		f.Add(c.in)
	}
	f.Add(env)
	// An element segment of a typed reference claiming 10^9 expressions
	// (wasmcheck's crafted modules): Check must refuse it before either
	// module reaches wazero.
	f.Add([]byte("\x00asm\x01\x00\x00\x00\t\x1d\x01\ac\x00\x93\x93\x93\xe8\x03\x00\x00\x00\t0000000000000000"))
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out, err := Instrument(in)
		if !bytes.Equal(in, orig) {
			t.Fatal("the input was modified")
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || out != nil {
				t.Fatalf("error %T %v with %d bytes", err, err, len(out))
			}
			return
		}
		// A module whose claims do not fit its bytes would make
		// wazero's decoder exhaust memory; the host refuses it first.
		if wasmcheck.Check(in) != nil || compiles(t, r, in) != nil {
			return
		}
		// The host checks the bytes it has, not the output: the
		// rewriter must not turn checked claims into unchecked ones.
		if err := wasmcheck.Check(out); err != nil {
			t.Fatalf("the input passes the check, the output does not: %v", err)
		}
		if err := compiles(t, r, out); err != nil {
			t.Fatalf("the input compiles, the output does not: %v", err)
		}
	})
}
