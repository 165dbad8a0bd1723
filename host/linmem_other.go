//go:build !linux

package host

import "github.com/tetratelabs/wazero/experimental"

// newLinearMemoryAllocator returns nil, wazero's default, off Linux: the
// mapped memory relies on Linux semantics of MADV_DONTNEED.
func newLinearMemoryAllocator() experimental.MemoryAllocator { return nil }
