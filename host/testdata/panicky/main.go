// Command panicky is an SDK plugin that echoes like the echo plugin but
// panics on a line whose text is "panic", which the SDK turns into
// StatusFatal.
package main

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

type norm struct{}

func (norm) Line(l *sdk.Line, out *sdk.Out) error {
	text := l.JSON().Get("text")
	if text.Is("panic") {
		panic("panicky: asked to")
	}
	out.Warn("line " + text.String())
	return nil
}

func (norm) End(out *sdk.Out) error { return nil }

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: abi.Manifest{Name: "panicky", Version: "0.0.1", Providers: []string{"panicky"}, Formats: []string{"jsonl"}},
		New:      func(abi.BeginOptions) sdk.Normalizer { return norm{} },
	})
}

func main() {}
