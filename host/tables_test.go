package host

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/twasm/twasm/internal/wasm/wasmcheck"
)

// growModule is a module whose one table has no maximum (as Go's linker
// writes it) and whose export grow(n) runs table.grow of n elements.
func growModule() []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = section(b, 1, []byte{1, 0x60, 1, 0x7f, 1, 0x7f})
	b = section(b, 3, []byte{1, 0})
	b = section(b, 4, []byte{1, 0x70, 0x00, 1}) // funcref, min 1, no max
	b = section(b, 5, []byte{1, 0, 1})
	b = section(b, 7, append(wname([]byte{1}, "grow"), 0, 0))
	// ref.null func, local.get 0, table.grow 0, end
	body := []byte{0, 0xd0, 0x70, 0x20, 0, 0xfc, 0x0f, 0, 0x0b}
	return section(b, 10, append([]byte{1, byte(len(body))}, body...))
}

// One table.grow cannot take a plugin's tables past
// wasmcheck.MaxTableElements, however the plugin is stopped: the grow
// fails in the guest (-1), as the specification lets it, where wazero
// would grow a table with no maximum to 2^32-2 elements (32 GiB, a fatal
// out-of-memory for the whole process). Smaller grows still succeed.
func TestTableGrowIsBounded(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			rt := newRuntime(t, testOptions())
			wasm := growModule()
			if mode.name == "sandboxed" {
				wasm = optOut(t, wasm)
			}
			wrt, compiled, err := rt.compile(ctx, wasm, Source{Path: "grow.wasm"})
			if err != nil {
				t.Fatal(err)
			}
			defer compiled.Close(ctx)
			m, err := wrt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(ctx)
			for _, c := range []struct {
				n    uint64
				want uint32
			}{
				{wasmcheck.MaxTableElements, 0xffffffff}, // past the bound: -1
				{1 << 31, 0xffffffff},
				{1000, 1},                                 // the old size
				{wasmcheck.MaxTableElements - 1001, 1001}, // up to the bound exactly
				{1, 0xffffffff},
			} {
				res, err := m.ExportedFunction("grow").Call(ctx, c.n)
				if err != nil {
					t.Fatalf("grow(%d): %v", c.n, err)
				}
				if got := uint32(res[0]); got != c.want {
					// Fatal: a regression must not go on to the 2^31
					// grow, 16 GiB.
					t.Fatalf("grow(%d) = %#x, want %#x", c.n, got, c.want)
				}
			}
		})
	}
}
