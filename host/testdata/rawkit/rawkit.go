// Package rawkit implements the twasm plugin exports by hand, without the
// SDK, so that test plugins can break the contract in ways the SDK never
// would: each test plugin overrides the hooks below from its init.
package rawkit

import (
	"unsafe"

	"github.com/twasm/twasm/internal/wire"
)

// Hooks a test plugin may replace in init.
var (
	Version  uint32 = wire.Major<<16 | wire.Minor
	Manifest        = []byte(`{"name":"raw","version":"0.0.1","providers":["raw"],"formats":["jsonl"]}`)
	// Feed handles the input of twasm_feed and returns a status.
	Feed = func(batch []byte) uint32 { return 0 }
	// Begin handles the options of twasm_begin and returns a status.
	Begin = func(opts []byte) uint32 { return 0 }
	// End handles twasm_end and returns a status.
	End = func() uint32 { return 0 }
	// BufferAddr, when set, replaces the address twasm_buffer returns.
	BufferAddr func(size uint32) (uint32, bool)
)

var input []byte

//go:wasmimport twasm_v1 output
func hostOutput(ptr, n uint32)

//go:wasmimport twasm_v1 fail
func hostFail(ptr, n uint32)

//go:wasmimport twasm_v1 log
func hostLog(level int32, ptr, n uint32)

// Ptr is the address of b in linear memory.
func Ptr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// Output sends b through the output import.
func Output(b []byte) { hostOutput(Ptr(b), uint32(len(b))) }

// OutputRaw calls the output import with any pointer and length.
func OutputRaw(ptr, n uint32) { hostOutput(ptr, n) }

// Fail sends msg through the fail import.
func Fail(msg string) { b := []byte(msg); hostFail(Ptr(b), uint32(len(b))) }

// FailRaw calls the fail import with any pointer and length.
func FailRaw(ptr, n uint32) { hostFail(ptr, n) }

// Log sends msg through the log import.
func Log(level int32, msg string) { b := []byte(msg); hostLog(level, Ptr(b), uint32(len(b))) }

//go:wasmexport twasm_abi_v1
func marker() {}

//go:wasmexport twasm_abi_version
func version() uint32 { return Version }

//go:wasmexport twasm_buffer
func buffer(size uint32) uint32 {
	if BufferAddr != nil {
		if p, ok := BufferAddr(size); ok {
			return p
		}
	}
	if int(size) > len(input) {
		input = make([]byte, size)
	}
	return Ptr(input[:cap(input)])
}

//go:wasmexport twasm_manifest
func manifest() uint32 {
	Output(Manifest)
	return 0
}

//go:wasmexport twasm_begin
func begin(n uint32) uint32 { return Begin(input[:n]) }

//go:wasmexport twasm_feed
func feed(n uint32) uint32 { return Feed(input[:n]) }

//go:wasmexport twasm_end
func end() uint32 { return End() }
