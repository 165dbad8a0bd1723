//go:build linux

package host

import (
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
)

func TestLinearMemories(t *testing.T) {
	const max = 64 * pageSize
	allocs := map[string]func() experimental.LinearMemory{
		"slice": func() experimental.LinearMemory { return &sliceMemory{} },
	}
	if a := newLinearMemoryAllocator(); a != nil {
		allocs["allocator"] = func() experimental.LinearMemory { return a.Allocate(0, max) }
	}
	for name, alloc := range allocs {
		t.Run(name, func(t *testing.T) {
			m := alloc()
			b := m.Reallocate(2 * pageSize)
			if len(b) != 2*pageSize {
				t.Fatalf("len %d", len(b))
			}
			b[0], b[len(b)-1] = 1, 2
			g := m.Reallocate(10 * pageSize)
			if len(g) != 10*pageSize || g[0] != 1 || g[2*pageSize-1] != 2 || g[2*pageSize] != 0 {
				t.Fatalf("grow lost or dirtied bytes: len %d", len(g))
			}
			if _, mapped := m.(*mappedMemory); mapped {
				if unsafe.SliceData(g) != unsafe.SliceData(b) {
					t.Fatal("the mapped memory moved")
				}
				if cap(g) != len(g) {
					t.Fatalf("cap %d exposes pages past the memory's length", cap(g))
				}
				if m.Reallocate(max+pageSize) != nil {
					t.Fatal("grew past its maximum")
				}
				if len(m.Reallocate(max)) != max {
					t.Fatal("cannot reach its maximum")
				}
			}
			m.Free()
			if _, mapped := m.(*mappedMemory); mapped {
				if m.Reallocate(pageSize) != nil {
					t.Fatal("usable after Free")
				}
				// A module closed by a deadline may still be running: its
				// memory stays mapped (zeros) until it is unreachable.
				if g[0] != 0 {
					t.Fatal("freed pages kept their contents")
				}
				g[1] = 3
			}
		})
	}
}
