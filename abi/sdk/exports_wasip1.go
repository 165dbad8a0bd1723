//go:build wasip1

package sdk

import (
	"unsafe"

	"github.com/twasm/twasm/internal/wire"
)

// input is the guest-owned buffer the host writes call inputs into.
var input []byte

//go:wasmimport twasm_v1 output
func hostOutput(ptr, n uint32)

//go:wasmimport twasm_v1 fail
func hostFail(ptr, n uint32)

func ptrOf(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

func send(b []byte) {
	if len(b) > 0 {
		hostOutput(ptrOf(b), uint32(len(b)))
	}
}

func finish(status wire.Status, msg string) uint32 {
	if status != wire.StatusOK && msg != "" {
		if len(msg) > wire.MaxFailBytes {
			msg = msg[:wire.MaxFailBytes]
		}
		b := []byte(msg)
		hostFail(ptrOf(b), uint32(len(b)))
	}
	collect()
	return uint32(status)
}

//go:wasmexport twasm_abi_v1
func twasmABIv1() {}

//go:wasmexport twasm_abi_version
func twasmABIVersion() uint32 { return wire.Major<<16 | wire.Minor }

//go:wasmexport twasm_buffer
func twasmBuffer(size uint32) uint32 {
	if int(size) > cap(input) {
		// Grow geometrically so that a stream of slowly growing lines
		// does not reallocate on every call.
		n := 2 * cap(input)
		if n < int(size) {
			n = int(size)
		}
		if n < 64<<10 {
			n = 64 << 10
		}
		input = make([]byte, n)
	}
	input = input[:cap(input)]
	return ptrOf(input)
}

//go:wasmexport twasm_manifest
func twasmManifest() uint32 {
	if registered == nil {
		return finish(wire.StatusFatal, "no plugin registered: call sdk.Register in init")
	}
	send(registered.manifest())
	return finish(wire.StatusOK, "")
}

//go:wasmexport twasm_begin
func twasmBegin(n uint32) uint32 {
	if registered == nil {
		return finish(wire.StatusFatal, "no plugin registered: call sdk.Register in init")
	}
	if int(n) > len(input) {
		return finish(wire.StatusFatal, "begin: length beyond the input buffer")
	}
	return finish(registered.Begin(input[:n]))
}

//go:wasmexport twasm_feed
func twasmFeed(n uint32) uint32 {
	if registered == nil {
		return finish(wire.StatusFatal, "no plugin registered: call sdk.Register in init")
	}
	if int(n) > len(input) {
		return finish(wire.StatusFatal, "feed: length beyond the input buffer")
	}
	status, msg := registered.Feed(input[:n])
	send(registered.Output())
	return finish(status, msg)
}

//go:wasmexport twasm_end
func twasmEnd() uint32 {
	if registered == nil {
		return finish(wire.StatusFatal, "no plugin registered: call sdk.Register in init")
	}
	status, msg := registered.End()
	send(registered.Output())
	return finish(status, msg)
}
