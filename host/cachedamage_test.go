package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/wasm/wasminterrupt"
)

// TestDamagedCompilationCache: a compiled module in the compilation cache
// whose bytes were damaged (a flipped bit in its code, which wazero's
// checksum finds; a file cut short; a file that is no entry at all) is
// rejected, never run, and does not stop the plugin from loading: the
// cache's compiled code is dropped, the module compiled again, and the
// next runtime finds the new entry whole. Before, every later load of the
// plugin failed with wazero's "compilationcache: checksum mismatch",
// reported as "it is not a valid WebAssembly module", until the user
// found and deleted the cache.
func TestDamagedCompilationCache(t *testing.T) {
	cases := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		// The entry ends with the checksum of the code (4 bytes), a
		// source map flag (1) and the count of catch tables (4): the
		// checksum's first byte flipped stands for any bit of the code.
		{name: "checksum", damage: func(b []byte) []byte { b[len(b)-9] ^= 0xff; return b }},
		{name: "cut short", damage: func(b []byte) []byte { return b[:len(b)/2] }},
		{name: "not an entry", damage: func([]byte) []byte { return []byte("not a compiled module") }},
	}
	tiny := wasmModule(nil, goodExports(), true)
	instrumented, err := wasminterrupt.Instrument(tiny)
	if err != nil {
		t.Fatal(err)
	}
	// A bundled module comes instrumented by the build; an external one
	// is instrumented by the host. Either way the module compiled is the
	// instrumented one, run in the trusted runtime.
	sources := []struct {
		name string
		wasm []byte
		src  Source
	}{
		{name: "bundled", wasm: instrumented, src: Source{Path: "t.wasm", Bundled: true}},
		{name: "external", wasm: tiny, src: Source{Path: "t.wasm"}},
	}
	for _, c := range cases {
		for _, s := range sources {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				h := &captureHandler{}
				opts := set(testOptions(), func(o *Options) { o.CacheDir = dir; o.Logger = slogNew(h) })
				// A tiny module compiles fast; its load gets as far as its
				// (missing) manifest when compiling and instantiating worked.
				loads := func() {
					t.Helper()
					if _, err := newRuntime(t, opts).Load(ctx, s.wasm, s.src); err == nil || !strings.Contains(err.Error(), "manifest") {
						t.Fatalf("load: got %v, want the missing manifest's error", err)
					}
					// Not degraded to the slower runtime for modules that
					// cannot be instrumented.
					if n := h.count("context-based timeouts"); n != 0 {
						t.Fatalf("log: %q: the module was compiled uninstrumented", h.msgs)
					}
				}
				loads()
				entries, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
				if len(entries) != 1 {
					t.Fatalf("compilation cache holds %q, want one entry", entries)
				}
				b, err := os.ReadFile(entries[0])
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(entries[0], c.damage(slices.Clone(b)), 0o600); err != nil {
					t.Fatal(err)
				}
				loads()
				if h.count("compilation cache is damaged") != 1 {
					t.Fatalf("log: %q, want one warning of the damaged cache", h.msgs)
				}
				got, err := os.ReadFile(entries[0])
				if err != nil || string(got) != string(b) {
					t.Fatalf("the entry was not written again whole (%d bytes, want %d): %v", len(got), len(b), err)
				}
				loads()
				if h.count("compilation cache is damaged") != 1 {
					t.Fatalf("log: %q, want no warning once the entry is whole", h.msgs)
				}
			})
		}
	}
}
