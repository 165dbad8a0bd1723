package capture

import (
	"context"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// NativePlugin runs a plugin in-process (no sandbox): for Go programs that
// compile a normalizer in, and for tests.
func NativePlugin(p sdk.Plugin) Plugin { return native{p} }

type native struct{ p sdk.Plugin }

func (n native) Identity() transcript.PluginRef {
	return transcript.PluginRef{Name: n.p.Manifest.Name, Version: n.p.Manifest.Version, SHA256: "native"}
}

func (n native) NewInstance(context.Context) (normalize.Instance, error) {
	return normalize.NativeInstance(n.p), nil
}
