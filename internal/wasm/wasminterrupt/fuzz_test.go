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
// fails only with an *Error, and what it returns compiles whenever the
// input did.
func FuzzInstrument(f *testing.F) {
	for _, c := range instrumentCases {
		f.Add(c.in)
	}
	f.Add(env)
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
		if err := compiles(t, r, out); err != nil {
			t.Fatalf("the input compiles, the output does not: %v", err)
		}
	})
}
