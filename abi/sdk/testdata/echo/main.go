// Command echo is a minimal plugin used by the SDK and host tests: every
// JSON line with a "text" field becomes one assistant message; every other
// line is unmapped.
package main

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

type echo struct{}

func (echo) Line(l *sdk.Line, out *sdk.Out) error {
	root := l.JSON()
	text := root.Get("text")
	if !text.Exists() {
		out.Unmapped(sdk.S("non-json"))
		return nil
	}
	key := sdk.S("m")
	out.Open(key, sdk.Message{})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
	out.Close(key, sdk.MessageEnd{})
	return nil
}

func (echo) End(out *sdk.Out) error {
	out.Status(sdk.StatusOK, sdk.Str{}, abi.LevelTerminal)
	return nil
}

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: abi.Manifest{Name: "echo", Version: "0.0.1", Providers: []string{"echo"}, Formats: []string{"jsonl"}},
		New:      func(abi.BeginOptions) sdk.Normalizer { return echo{} },
	})
}

func main() {}
