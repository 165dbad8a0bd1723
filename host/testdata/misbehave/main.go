// Command misbehave is a test plugin that breaks the contract on demand:
// every line of a batch is a command (first word) with an argument (the
// rest), run in order, so a test can make it report records and then
// fault in the same call.
//
//	emit TEXT     report a warning record with TEXT (a well-formed record)
//	warnlog TEXT  log TEXT at warning level through the log import (the
//	              host writes it at once: a test waits for it to know the
//	              plugin is inside the call, at the next command)
//	raw BYTES     send BYTES through the output import as they are
//	loop          spin forever, incrementing a global
//	spin          spin forever in an empty loop: no call, no memory access
//	sleep         sleep for an hour (the guest waits in poll_oneoff)
//	bomb          allocate until the memory limit is hit
//	trap          load from an address beyond linear memory (a wasm trap)
//	nilderef      dereference a nil pointer (a Go panic: the runtime exits)
//	exit          call proc_exit through os.Exit
//	procexit N    call WASI proc_exit(N) directly (N up to 2^32-1)
//	fill          clear a 64 MiB buffer forever: one memory.fill per pass
//	copy          copy a 32 MiB buffer forever: one memory.copy per pass
//	rand          read 64 MiB of random bytes forever (random_get)
//	recurse       recurse forever
//	outloop       call the output import forever with an empty chunk
//
// A stream begun with the format "procexit" calls proc_exit(2^32-1) in
// twasm_begin.
//
//	fatal MSG     fail with MSG and return StatusFatal
//	reject MSG    fail with MSG and return StatusRejected
//	status N      return status N
//	huge          call the output import with a length of 2^32-1
//	oob           call the output import with a pointer beyond memory
//	oobfail       call the fail import with a pointer beyond memory
//	ooblog        call the log import with a pointer beyond memory
//	longfail      fail with a 1 MiB message and return StatusRejected
//	flood N       report N MiB of well-formed records, in 1 MiB chunks
//	badspan       report a record whose span points past the input
//	log N         log N messages
//	badbuffer     make the next twasm_buffer return an address beyond memory
//	stderr TEXT   write TEXT to stderr
package main

import (
	"bytes"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/twasm/twasm/host/testdata/rawkit"
	"github.com/twasm/twasm/internal/wire"
)

var (
	big       []byte
	hold      [][]byte
	badBuffer bool
	sink      int
)

func record(text []byte) []byte {
	var e wire.Encoder
	e.Begin(wire.OpWarning)
	e.Bytes(wire.TText, text)
	e.End()
	return e.Buf
}

func feed(batch []byte) uint32 {
	status := uint32(0)
	err := wire.DecodeBatch(batch, nil, func(l wire.BatchLine) error {
		cmd, arg, _ := bytes.Cut(l.Line, []byte(" "))
		switch string(cmd) {
		case "emit":
			rawkit.Output(record(arg))
		case "raw":
			rawkit.Output(arg)
		case "loop":
			for {
				sink++
			}
		case "spin":
			for {
			}
		case "sleep":
			time.Sleep(time.Hour)
		case "bomb":
			for {
				hold = append(hold, make([]byte, 1<<20))
			}
		case "trap":
			sink += int(*(*byte)(unsafe.Pointer(uintptr(0xFFFFFFF0))))
		case "nilderef":
			var p *int
			sink += *p
		case "exit":
			os.Exit(3)
		case "procexit":
			n, _ := strconv.ParseUint(string(arg), 10, 32)
			procExit(uint32(n))
		case "warnlog":
			rawkit.Log(4, string(arg))
		case "fill":
			big = make([]byte, 64<<20)
			for {
				clear(big)
				sink++
			}
		case "copy":
			big = make([]byte, 64<<20)
			for {
				copy(big[:32<<20], big[32<<20:])
				sink++
			}
		case "rand":
			big = make([]byte, 64<<20)
			for {
				randomGet(unsafe.Pointer(&big[0]), uint32(len(big)))
				sink++
			}
		case "recurse":
			sink += recurse(1)
		case "outloop":
			for {
				rawkit.Output(nil)
			}
		case "fatal":
			rawkit.Fail(string(arg))
			status = uint32(wire.StatusFatal)
		case "reject":
			rawkit.Fail(string(arg))
			status = uint32(wire.StatusRejected)
		case "status":
			n, _ := strconv.Atoi(string(arg))
			status = uint32(n)
		case "huge":
			rawkit.OutputRaw(0, 0xFFFFFFFF)
		case "oob":
			rawkit.OutputRaw(0xFFFF0000, 16)
		case "oobfail":
			rawkit.FailRaw(0xFFFF0000, 16)
		case "ooblog":
			rawkit.Log(0, "x")
			logRaw()
		case "longfail":
			rawkit.Fail(string(bytes.Repeat([]byte("x"), 1<<20)))
			status = uint32(wire.StatusRejected)
		case "flood":
			n, _ := strconv.Atoi(string(arg))
			chunk := record(bytes.Repeat([]byte("y"), 1<<20-16))
			for i := 0; i < n; i++ {
				rawkit.Output(chunk)
			}
		case "badspan":
			var e wire.Encoder
			e.Begin(wire.OpWarning)
			e.Span(wire.TText, len(batch), 10, wire.SpanBytes)
			e.End()
			rawkit.Output(e.Buf)
		case "log":
			n, _ := strconv.Atoi(string(arg))
			for i := 0; i < n; i++ {
				rawkit.Log(0, "message "+strconv.Itoa(i))
			}
		case "badbuffer":
			badBuffer = true
		case "stderr":
			os.Stderr.Write(append(arg, '\n'))
		}
		return nil
	})
	if err != nil {
		rawkit.Fail(err.Error())
		return uint32(wire.StatusFatal)
	}
	return status
}

//go:wasmimport wasi_snapshot_preview1 proc_exit
func procExit(code uint32)

//go:wasmimport wasi_snapshot_preview1 random_get
func randomGet(buf unsafe.Pointer, n uint32) uint32

//go:noinline
func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return recurse(n+1) + int(pad[0])
}

//go:wasmimport twasm_v1 log
func hostLog(level int32, ptr, n uint32)

func logRaw() { hostLog(0, 0xFFFF0000, 16) }

func init() {
	rawkit.Manifest = []byte(`{"name":"misbehave","version":"0.0.1","providers":["misbehave"],"formats":["commands"],"description":"breaks the contract on demand"}`)
	rawkit.Feed = feed
	// A stream whose format is "procexit" exits in begin.
	rawkit.Begin = func(opts []byte) uint32 {
		if bytes.Contains(opts, []byte(`"format":"procexit"`)) {
			procExit(0xFFFFFFFF)
		}
		return 0
	}
	rawkit.BufferAddr = func(uint32) (uint32, bool) {
		if badBuffer {
			return 0xFFFFFF00, true
		}
		return 0, false
	}
}

func main() {}
