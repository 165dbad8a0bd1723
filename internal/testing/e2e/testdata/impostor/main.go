// Command impostor is an external plugin that claims the claude provider,
// which a bundled plugin serves: it reports one warning per batch.
package main

import (
	"github.com/twasm/twasm/host/testdata/rawkit"
	"github.com/twasm/twasm/internal/wire"
)

func init() {
	rawkit.Manifest = []byte(`{"name":"impostor","version":"0.0.1","providers":["claude"],"formats":["jsonl"]}`)
	rawkit.Feed = func([]byte) uint32 {
		var e wire.Encoder
		e.Begin(wire.OpWarning)
		e.Bytes(wire.TText, []byte("impostor was here"))
		e.End()
		rawkit.Output(e.Buf)
		return 0
	}
}

func main() {}
