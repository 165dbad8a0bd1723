package plugload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/transcript"
)

// Flags are the plugin flags shared by commands.
type Flags struct {
	// PluginPath holds extra plugin directories (--plugin-path), searched
	// before $TWASM_PLUGIN_PATH and the user's config directory.
	PluginPath []string
	// Plugin is a plugin to use instead of looking the provider up: a
	// .wasm file, or the name of a loaded plugin (--plugin).
	Plugin string
}

// Register adds the flags to cmd.
func (fl *Flags) Register(cmd *cobra.Command, withPlugin bool) {
	cmd.Flags().StringArrayVar(&fl.PluginPath, "plugin-path", nil, "extra directory of external plugins (repeatable; before $TWASM_PLUGIN_PATH)")
	if withPlugin {
		cmd.Flags().StringVar(&fl.Plugin, "plugin", "", "plugin to use: a .wasm file or the name of a loaded plugin")
	}
}

// Open starts the plugin host with the bundled plugins and the plugin
// path. The caller closes it.
func Open(ctx context.Context, f *cmdutil.Factory, fl Flags) (*host.Runtime, error) {
	cfg := host.NewConfig().
		WithPluginPath(append(append([]string(nil), fl.PluginPath...), host.DefaultPluginPath()...)...).
		WithLogger(f.Logger())
	rt, err := host.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start the plugin host: %w", err)
	}
	return rt, nil
}

// IsFile reports whether a --plugin value names a file.
func IsFile(v string) bool {
	return strings.HasSuffix(v, ".wasm") || strings.ContainsRune(v, '/') || strings.ContainsRune(v, filepath.Separator)
}

// Resolve finds the plugin for provider: the --plugin file or name when
// given, else the plugin that serves provider. Errors are input errors
// that say what to do (an unknown provider lists the available ones).
func Resolve(ctx context.Context, rt *host.Runtime, fl Flags, provider string) (*host.Plugin, error) {
	if fl.Plugin != "" {
		if IsFile(fl.Plugin) {
			b, err := os.ReadFile(fl.Plugin)
			if err != nil {
				return nil, cmdutil.PathInputError(fl.Plugin, err)
			}
			p, err := rt.Load(ctx, b, host.Source{Path: fl.Plugin})
			if err != nil {
				return nil, &cmdutil.InputError{Path: fl.Plugin, Err: err}
			}
			return p, nil
		}
		for _, info := range rt.List(ctx) {
			if info.Name == fl.Plugin && info.Err == nil && len(info.Providers) > 0 {
				return rt.Lookup(ctx, info.Providers[0])
			}
		}
		return nil, cmdutil.FlagErrorf("no plugin named %q is loaded (see twasm plugins list)", fl.Plugin)
	}
	if provider == "" {
		return nil, cmdutil.FlagErrorf("--provider is required (see twasm plugins list for the providers)")
	}
	p, err := rt.Lookup(ctx, provider)
	if err != nil {
		var unknown *host.UnknownProviderError
		if errors.As(err, &unknown) {
			return nil, cmdutil.FlagErrorf("%v", err)
		}
		return nil, err
	}
	return p, nil
}

// Capture adapts a host plugin to capture.Plugin.
func Capture(p *host.Plugin) capture.Plugin { return capturePlugin{p} }

type capturePlugin struct{ p *host.Plugin }

func (c capturePlugin) Identity() transcript.PluginRef {
	info := c.p.Info()
	return transcript.PluginRef{Name: info.Name, Version: info.Version, SHA256: info.SHA256}
}

func (c capturePlugin) NewInstance(ctx context.Context) (normalize.Instance, error) {
	return NewInstance(ctx, c.p)
}

// NewInstance returns an instance of p that closes (back to the pool) with
// a plain Close().
func NewInstance(ctx context.Context, p *host.Plugin) (normalize.Instance, error) {
	in, err := p.NewInstance(ctx)
	if err != nil {
		return nil, err
	}
	return closer{in}, nil
}

type closer struct{ *host.Instance }

func (c closer) Close() error { return c.Instance.Close(context.Background()) }
