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

// Echo is a Feed that writes every raw line as one assistant message
// with the line as its text (the echo plugin's normalization, written
// with the wire encoder, as a plugin built for an older ABI minor would:
// the SDK reports its own version).
func Echo(batch []byte) uint32 {
	enc.Reset()
	r := wire.NewBatchReader(batch, nil)
	for {
		bl, ok := r.Next()
		if !ok {
			break
		}
		enc.Begin(wire.OpLine)
		enc.Int(wire.TLine, int64(bl.No))
		enc.End()
		enc.Begin(wire.OpMsgOpen)
		enc.Str(wire.TKey, "m")
		enc.Str(wire.TRole, "assistant")
		enc.End()
		enc.Begin(wire.OpBlock)
		enc.Str(wire.TKey, "m")
		enc.Int(wire.TSlot, 0)
		enc.Str(wire.TBlockType, "text")
		enc.Bytes(wire.TText, bl.Line)
		enc.End()
		enc.Begin(wire.OpMsgClose)
		enc.Str(wire.TKey, "m")
		enc.End()
	}
	if r.Err() != nil {
		Fail(r.Err().Error())
		return uint32(wire.StatusRejected)
	}
	Output(enc.Buf)
	return 0
}

var enc wire.Encoder
