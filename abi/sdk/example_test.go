//go:build !wasip1

// The example runs the plugin natively, through the host side (capture,
// golden), which a wasm build of the SDK does not link.

package sdk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
)

// shout is a whole normalizer: each {"say": ...} line becomes an
// assistant message, any other line is counted unmapped, and the end of
// the stream is the provider's terminal event.
type shout struct{}

func (shout) Line(l *sdk.Line, out *sdk.Out) error {
	say := l.JSON().Get("say")
	if !say.Exists() {
		out.Unmapped(sdk.S("other"))
		return nil
	}
	key := sdk.S("m")
	out.Open(key, sdk.Message{})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(say)})
	out.Close(key, sdk.MessageEnd{})
	return nil
}

func (shout) End(out *sdk.Out) error {
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	return nil
}

// A plugin author writes a Normalizer and registers it from the wasm
// entry point's init: sdk.Register(shoutPlugin). Natively, the same
// plugin runs in process (capture.NativePlugin); golden.Normalize shows
// what the host makes of its records, as its golden files hold it.
func Example() {
	shoutPlugin := sdk.Plugin{
		Manifest: abi.Manifest{Name: "shout", Version: "0.1.0", Providers: []string{"shout"}, Formats: []string{"jsonl"}},
		New:      func(abi.BeginOptions) sdk.Normalizer { return shout{} },
	}
	raw := []byte(`{"say":"hello"}` + "\n" + `{"other":1}` + "\n")
	out, err := golden.Normalize(context.Background(), capture.NativePlugin(shoutPlugin), raw, golden.Options{Provider: "shout"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(out))
	// Output:
	// {"event":{"seq":1,"run_id":"golden","type":"message.assistant","path":"","iteration":0,"timestamp":"1970-01-01T00:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"hello"}],"raw_line":1}}}
	// {"result":{"provider":"shout","status":"ok","unmapped":{"other":1},"lines":2}}
}
