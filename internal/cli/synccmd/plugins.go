package synccmd

import (
	"context"
	"sync"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
)

// Plugins starts the plugin host on first use and resolves each provider
// once. Close it when done.
type Plugins struct {
	F     *cmdutil.Factory
	Flags plugload.Flags
	mu    sync.Mutex
	rt    *host.Runtime
	cache map[string]capture.Plugin
	// using, when set, is called before a plugin is looked up to
	// archive a session (sync's collector.archiving).
	using func()
}

// Func is the archive's plugin lookup.
func (p *Plugins) Func() archive.PluginFunc {
	return func(ctx context.Context, provider string) (capture.Plugin, error) {
		if p.using != nil {
			p.using()
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if c := p.cache[provider]; c != nil {
			return c, nil
		}
		if err := p.open(ctx); err != nil {
			return nil, err
		}
		hp, err := plugload.Resolve(ctx, p.rt, p.Flags, provider)
		if err != nil {
			return nil, err
		}
		var c capture.Plugin = hp
		p.cache[provider] = c
		return c, nil
	}
}

// Serves reports whether a plugin serves provider, starting the host if
// need be but loading no plugin; with --plugin every provider is served by
// the plugin named.
func (p *Plugins) Serves(ctx context.Context, provider string) error {
	if p.Flags.Plugin != "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.open(ctx); err != nil {
		return err
	}
	return p.rt.Serves(provider)
}

// Declared returns the stores every loaded plugin declares (bundled, then
// external in plugin-path order), starting the plugin host: it reads
// manifests, it compiles no plugin whose manifest is known.
func (p *Plugins) Declared(ctx context.Context) ([]archive.Declared, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.open(ctx); err != nil {
		return nil, err
	}
	var out []archive.Declared
	for _, s := range p.rt.Stores() {
		out = append(out, archive.Declared{Store: s.Store, Provider: s.Provider, Plugin: s.Plugin, SourceFacts: s.SourceFacts})
	}
	return out, nil
}

// open starts the plugin host once; p.mu is held.
func (p *Plugins) open(ctx context.Context) error {
	if p.rt != nil {
		return nil
	}
	rt, err := plugload.Open(ctx, p.F, p.Flags)
	if err != nil {
		return err
	}
	p.rt, p.cache = rt, map[string]capture.Plugin{}
	return nil
}

// ReleaseIdle closes the plugins' idle instances (host.Runtime.ReleaseIdle).
func (p *Plugins) ReleaseIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rt != nil {
		p.rt.ReleaseIdle()
	}
}

// Close stops the plugin host.
func (p *Plugins) Close(ctx context.Context) {
	if p.rt != nil {
		_ = p.rt.Close(ctx)
	}
}
