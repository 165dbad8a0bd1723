package plugload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/wasm/wasmcheck"
	"github.com/twasm/twasm/internal/wire"
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
	// Timeout and Memory raise (or lower) the plugins' limits
	// (--plugin-timeout, --plugin-memory); zero: the config file's, else
	// the host's defaults.
	Timeout time.Duration
	Memory  ByteSize
	// Override lets external plugins take providers from bundled ones
	// (--plugin-override).
	Override bool
}

// Register adds the flags to cmd.
func (fl *Flags) Register(cmd *cobra.Command, withPlugin bool) {
	cmd.Flags().StringArrayVar(&fl.PluginPath, "plugin-path", nil, "extra directory of external plugins (repeatable; before $TWASM_PLUGIN_PATH)")
	if withPlugin {
		cmd.Flags().StringVar(&fl.Plugin, "plugin", "", "plugin to use: a .wasm file or the name of a loaded plugin")
	}
	cmd.Flags().DurationVar(&fl.Timeout, "plugin-timeout", 0, fmt.Sprintf("time a plugin call may take per MiB of input (default %v, or %q in %s)", wire.DefaultCallTimeout, "plugin_timeout", ConfigFileHelp))
	cmd.Flags().Var(&fl.Memory, "plugin-memory", fmt.Sprintf("memory one plugin instance may use, e.g. 512MiB (default %dMiB, or %q in %s)", wire.DefaultMemoryLimit>>20, "plugin_memory", ConfigFileHelp))
	cmd.Flags().BoolVar(&fl.Override, "plugin-override", false, "let external plugins serve providers a bundled plugin serves (default: the bundled one, with a warning)")
}

// Open starts the plugin host with the bundled plugins and the plugin
// path, and the limits of the flags, else of the config file. The caller
// closes it. The plugins of preload start loading in the background
// (host.Options.Preload): a provider no plugin serves is a usage error
// here, as in Resolve, which then waits for the load.
func Open(ctx context.Context, f *cmdutil.Factory, fl Flags, preload ...string) (*host.Runtime, error) {
	conf, err := LoadConfig(f)
	if err != nil {
		return nil, err
	}
	timeout, memory := cmp.Or(fl.Timeout, conf.Timeout), cmp.Or(fl.Memory, conf.Memory)
	opts := host.Options{
		PluginPath:               append(append([]string(nil), fl.PluginPath...), pluginPath(f)...),
		Logger:                   f.Logger(),
		CallTimeout:              timeout,
		MemoryLimit:              uint64(memory),
		ExternalOverridesBundled: fl.Override || conf.Override,
		StackTraces:              conf.StackTraces || f.Getenv != nil && f.Getenv(EnvStackTraces) != "",
		TimeoutHint:              fmt.Sprintf("raise it with --plugin-timeout or %q in %s", "plugin_timeout", conf.path),
		MemoryHint:               fmt.Sprintf("raise it with --plugin-memory or %q in %s", "plugin_memory", conf.path),
		Preload:                  preload,
	}
	if fl.Timeout < 0 {
		return nil, cmdutil.FlagErrorf("--plugin-timeout must be positive")
	}
	rt, err := host.New(ctx, opts)
	if err != nil {
		if unknown := (*host.UnknownProviderError)(nil); errors.As(err, &unknown) {
			return nil, cmdutil.FlagErrorf("%v", err)
		}
		if errors.Is(err, host.ErrMemoryLimit) {
			// Say where the value came from: the flag, else the file.
			if fl.Memory != 0 {
				return nil, cmdutil.FlagErrorf("--plugin-memory %s: %v", fl.Memory.String(), err)
			}
			return nil, &cmdutil.InputError{Path: conf.path, Err: fmt.Errorf("config file: plugin_memory %q: %w", conf.Memory.String(), err)}
		}
		return nil, fmt.Errorf("start the plugin host: %w", err)
	}
	return rt, nil
}

// pluginPath is the default plugin path in the command's environment
// (the process's when the factory has none).
func pluginPath(f *cmdutil.Factory) []string {
	if f.Getenv == nil {
		return host.DefaultPluginPath()
	}
	return host.PluginPath(f.Getenv)
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
			b, err := regfile.ReadFile(fl.Plugin, wasmcheck.MaxModuleBytes)
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

// SignalGrace is how long plugins may go on normalizing after a signal
// asked twasm to stop (CaptureUntil): time for an agent's last lines,
// short enough that twasm ends within a second whatever a plugin does.
const SignalGrace = 500 * time.Millisecond

// CaptureUntil is Capture whose plugin calls are also stopped SignalGrace
// after signaled ends, while the rest of the recording goes on under the
// callers' contexts (which a signal leaves alone, so that the run is
// closed): a plugin busy when the user presses Ctrl-C does not hold twasm
// up until its own time limit. The lines it had are counted as lost and
// said; the raw capture keeps them.
func CaptureUntil(p *host.Plugin, signaled context.Context) capture.Plugin {
	c := CaptureLoading(func(context.Context) (*host.Plugin, error) { return p, nil }, "", signaled).(stopPlugin)
	c.loaded.Store(p)
	return c
}

// CaptureLoading is CaptureUntil of a plugin that may still be loading
// (host.Options.Preload): load returns it, waiting for it, when the
// capture first needs it (its first instance, once the raw capture is
// open), so that the load overlaps the capture's start. A plugin that
// does not load fails the capture's Start with load's error; name stands
// for its identity until it has loaded.
func CaptureLoading(load func(context.Context) (*host.Plugin, error), name string, signaled context.Context) capture.Plugin {
	stop, cancel := context.WithCancelCause(context.Background())
	context.AfterFunc(signaled, func() {
		time.AfterFunc(SignalGrace, func() {
			cancel(fmt.Errorf("plugin calls stopped %v after the signal: %w", SignalGrace, context.Canceled))
		})
	})
	return stopPlugin{load: load, name: name, stop: stop, loaded: new(atomic.Pointer[host.Plugin])}
}

// stopPlugin is a host plugin, loaded when first needed, whose instances'
// calls also stop when stop ends.
type stopPlugin struct {
	load func(context.Context) (*host.Plugin, error)
	name string
	stop context.Context
	// loaded is the plugin once load returned it: Identity never waits
	// for a load (a capture asks for it after a failed Start too).
	loaded *atomic.Pointer[host.Plugin]
}

func (c stopPlugin) Identity() transcript.PluginRef {
	if p := c.loaded.Load(); p != nil {
		return p.Identity()
	}
	return transcript.PluginRef{Name: c.name}
}

func (c stopPlugin) NewInstance(ctx context.Context) (normalize.Instance, error) {
	p, err := c.load(ctx)
	if err != nil {
		return nil, err
	}
	c.loaded.Store(p)
	in, err := p.NewInstance(ctx)
	if err != nil {
		return nil, err
	}
	return stopper{in.(hostInstance), c.stop}, nil
}

// hostInstance is what a host plugin's instances are: keyed (the stream
// marks the plugin's declared keys in its tapes) and closed with a
// context (back to the pool).
type hostInstance interface {
	normalize.KeyedInstance
	Close(ctx context.Context) error
}

// stopper runs every call of an instance under its own context and stop.
type stopper struct {
	hostInstance
	stop context.Context
}

// with returns ctx, cancelled as well when s.stop ends.
func (s stopper) with(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(s.stop, func() { cancel(context.Cause(s.stop)) })
	return ctx, func() { unhook(); cancel(nil) }
}

func (s stopper) Begin(ctx context.Context, opts abi.BeginOptions) error {
	ctx, done := s.with(ctx)
	defer done()
	return s.hostInstance.Begin(ctx, opts)
}

func (s stopper) Feed(ctx context.Context, batch []byte) ([]byte, error) {
	ctx, done := s.with(ctx)
	defer done()
	return s.hostInstance.Feed(ctx, batch)
}

func (s stopper) End(ctx context.Context) ([]byte, error) {
	ctx, done := s.with(ctx)
	defer done()
	return s.hostInstance.End(ctx)
}
