package host

import (
	"runtime"
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mappedMemory backs a plugin's linear memory with one anonymous mapping
// of the memory's maximum size, reserved up front and never moved.
//
// Why: wazero's default linear memory is a Go []byte that is reallocated
// and copied on every memory.grow. A Go guest grows its memory dozens of
// times while it starts and while its heap grows, so each start paid for
// copies (~9 ms of a 80 ms warm start), the old copies were garbage on the
// Go heap (counted against GOMEMLIMIT, resident until collected), and the
// peak during a copy was twice the memory. A reserved mapping grows by
// handing out a longer slice of the same pages: the kernel commits a page
// when the guest first touches it, pages never touched cost nothing, and
// the memory is outside the Go heap. The mapping is MAP_NORESERVE: a
// 128 MiB limit per instance reserves address space, not RAM or swap.
//
// Free must not unmap: wazero frees a module's memory when the module is
// closed, and a module stopped by a deadline is closed from another
// goroutine while its code may still be running and touching the memory
// (it stops at its next termination check); an unmapped page would crash
// the process. Free only returns the pages to the kernel (MADV_DONTNEED:
// a late access reads zeros, and the closed module's results are thrown
// away), and the mapping is unmapped by a cleanup once the memory is
// unreachable, which the running call's own references rule out.
type mappedMemory struct {
	mu    sync.Mutex
	buf   []byte // the whole mapping
	freed bool
}

// newLinearMemoryAllocator returns the allocator instances are created
// with, or nil (wazero's default) where mappings are unavailable.
func newLinearMemoryAllocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		if max == 0 || max > uint64(^uint(0)>>1) {
			return &sliceMemory{}
		}
		b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		if err != nil {
			// Out of address space: fall back to a growing slice rather
			// than failing the instance.
			return &sliceMemory{}
		}
		m := &mappedMemory{buf: b}
		runtime.AddCleanup(m, func(b []byte) { _ = syscall.Munmap(b) }, b)
		return m
	})
}

// Reallocate returns the first size bytes of the mapping, or nil (the
// guest's memory.grow then fails) beyond it.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed || size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

// Free releases the memory's pages; see mappedMemory for why it does not
// unmap. wazero calls it when the module closes.
func (m *mappedMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.freed {
		m.freed = true
		_ = syscall.Madvise(m.buf, syscall.MADV_DONTNEED)
	}
}

// sliceMemory is a linear memory on the Go heap that grows by copying,
// like wazero's default; it is the fallback of the mapped memory.
type sliceMemory struct{ buf []byte }

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		b := make([]byte, size, max(size, 2*uint64(cap(m.buf))))
		copy(b, m.buf)
		m.buf = b
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }
