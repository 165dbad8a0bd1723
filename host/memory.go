package host

// MemorySize reports the current size in bytes of the instance's
// WebAssembly linear memory (a multiple of the 64 KiB page), for
// measurements such as `make bench`'s steady-memory figure. It only
// reads: it neither grows the memory nor instantiates a module, so it
// returns 0 when the instance holds no module (before its first call,
// after a fault until the next call, or after Close). Like the other
// methods, it must not be called concurrently with a call on the same
// instance.
func (in *instance) MemorySize() uint32 {
	if in == nil || in.m == nil || in.m.mem == nil {
		return 0
	}
	return in.m.mem.Size()
}
