package capture

import (
	"context"

	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// HostPlugin is a plugin of the host (WebAssembly, sandboxed) as a
// [Plugin]: each capture takes an instance from the plugin's pool and
// gives it back when the capture finishes.
func HostPlugin(p *host.Plugin) Plugin { return hostPlugin{p} }

type hostPlugin struct{ p *host.Plugin }

func (h hostPlugin) Identity() transcript.PluginRef {
	info := h.p.Info()
	return transcript.PluginRef{Name: info.Name, Version: info.Version, SHA256: info.SHA256}
}

func (h hostPlugin) NewInstance(ctx context.Context) (normalize.Instance, error) {
	return h.p.NewInstance(ctx)
}
