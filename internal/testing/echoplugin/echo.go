package echoplugin

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the echo plugin.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{Name: "echo", Version: "0.0.1", Providers: []string{"echo"}, Formats: []string{"jsonl"}},
	New:      func(abi.BeginOptions) sdk.Normalizer { return echo{} },
}

type echo struct{}

func (echo) Line(l *sdk.Line, out *sdk.Out) error {
	text := l.JSON().Get("text")
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
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	return nil
}
