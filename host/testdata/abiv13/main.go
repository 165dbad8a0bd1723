// Command abiv13 is a plugin as one built for ABI 1.3 looks to the host:
// it reports version 1.3 and a manifest of the 1.3 shape (no stores, no
// source facts), and normalizes like the echo plugin, every raw line
// becoming one assistant message with the line as its text (written by
// hand with the wire encoder: the SDK would report its own version). A
// 1.4 host must load it and run it as before.
package main

import (
	"github.com/twasm/twasm/host/testdata/rawkit"
	"github.com/twasm/twasm/internal/wire"
)

var enc wire.Encoder

func init() {
	rawkit.Version = 1<<16 | 3
	rawkit.Manifest = []byte(`{"name":"old","version":"0.0.1","providers":["old"],"formats":["jsonl"],"sdk":"twasm-go-sdk/1.0"}`)
	rawkit.Feed = func(batch []byte) uint32 {
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
			rawkit.Fail(r.Err().Error())
			return uint32(wire.StatusRejected)
		}
		rawkit.Output(enc.Buf)
		return 0
	}
}

func main() {}
