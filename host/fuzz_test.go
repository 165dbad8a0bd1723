package host

import (
	"context"
	"errors"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/normalize"
)

// FuzzFeed throws arbitrary bytes at the plugin boundary from both sides:
// as a batch into a real plugin (the SDK must reject what it cannot
// decode), and as plugin output through the host's record check (sent by
// the misbehave plugin's raw command). Neither may crash the host, and the
// instance must keep serving.
func FuzzFeed(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, '{', '}', 0, 0})
	f.Add([]byte{16, 5, 0, 0, 0, 9, 1, 3, 'a', 'b', 'c'})
	f.Add([]byte{255, 255, 255, 255})
	f.Add([]byte{})
	rt := newRuntime(f, set(faultOptions(), quick))
	// External: a hang would be a timeout, reported, not a stuck fuzzer.
	echo := load(f, rt, "echo", false)
	bad := load(f, rt, "misbehave", false)
	ctx := context.Background()
	ei, err := echo.newInstance(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ei.Close(ctx) })
	bi, err := bad.newInstance(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { bi.Close(ctx) })
	ei.Begin(ctx, abi.BeginOptions{Provider: "echo"})
	bi.Begin(ctx, abi.BeginOptions{Provider: "misbehave"})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ei.Feed(ctx, data)
		var fe *normalize.FaultError
		if err != nil && !errors.As(err, &fe) || errors.Is(err, errTimeout) {
			t.Fatalf("echo: %v", err)
		}
		if err := checkRecords(out, len(data)); err != nil {
			t.Fatalf("echo returned records that do not check: %v", err)
		}
		b := batch(1, "raw "+string(data))
		out, err = bi.Feed(ctx, b)
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("misbehave: %v", err)
		}
		if err := checkRecords(out, len(b)); err != nil {
			t.Fatalf("returned records that do not check: %v", err)
		}
		if err == nil && string(out) != string(data) {
			t.Fatalf("accepted output was changed")
		}
	})
}

// FuzzLoad: loading arbitrary bytes as an external plugin returns a
// plugin or an error, and never panics: a crafted module (a type index
// out of range made wazero's validator panic) fails its load.
func FuzzLoad(f *testing.F) {
	f.Add(typeIndexPanic)
	f.Add(wasmModule(nil, goodExports(), true))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	opts := testOptions()
	opts.CacheDir, opts.NoDiskCache = "", true // no cache entry per input
	rt := newRuntime(f, opts)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, wasm []byte) {
		p, err := rt.Load(ctx, wasm, Source{Path: "x.wasm"})
		if (p == nil) == (err == nil) {
			t.Fatalf("Load = %v, %v", p, err)
		}
	})
}
