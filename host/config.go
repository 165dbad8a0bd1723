package host

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/wire"
)

// Defaults of Options.
const (
	defaultMaxFaults = 5
	defaultLogRate   = 20
	// stderrTail is how much of a plugin's stderr is kept, attached to
	// the error of a fault: its first KiB (a runtime says there what went
	// wrong) and its last bytes up to this total (where), with a marker
	// where bytes were dropped.
	stderrTail = 4 << 10
)

// Options configure a Runtime; New takes them by value and validates them
// once. The zero Options is the default configuration: every field left
// zero takes the default its comment states.
//
// # Notes
//
//   - Defaults: compilation cache in os.UserCacheDir()/twasm/wazero, a
//     128 MiB memory limit per instance, a 5 s timeout per call and MiB
//     of input for every plugin, the plugins built into the binary, and
//     external plugins from DefaultPluginPath.
//   - Guests never get a file system, environment variables, arguments or
//     a network, whatever the Options say: there is no setting for them.
type Options struct {
	// CacheDir is the directory of the compilation cache (compiled
	// machine code, keyed by module hash, wazero version and CPU).
	// "" is os.UserCacheDir()/twasm/wazero.
	CacheDir string
	// NoDiskCache turns the on-disk compilation cache off: every process
	// then compiles every plugin.
	NoDiskCache bool

	// PluginPath is the directories searched for external plugins
	// (*.wasm, not recursive), in order of precedence. nil is
	// DefaultPluginPath(); an empty, non-nil slice loads no external
	// plugin.
	PluginPath []string
	// Bundled is the plugins built into the binary. nil is the binary's
	// own (package internal/bundled; New fails with ErrNoBundledPlugins
	// when it has none); an empty, non-nil slice loads none. The module
	// bytes are never modified.
	Bundled []Bundled
	// ExternalOverridesBundled lets an external plugin take over a
	// provider that a bundled plugin also claims (the bundled plugin
	// keeps its other providers). Without it the bundled plugin keeps the
	// provider and a warning names the external file, so that dropping a
	// file into the plugin directory never silently changes how a
	// provider is normalized, nor stops it from working.
	ExternalOverridesBundled bool

	// MemoryLimit is the most linear memory one plugin instance may use,
	// in bytes, rounded down to 64 KiB pages. A plugin that needs more
	// traps (out of memory) and the call faults. 0 is 128 MiB (wire.DefaultMemoryLimit).
	MemoryLimit uint64
	// CallTimeout is how long one call into a plugin (begin, feed, end,
	// and initialisation, which gets at least 30 s) may run before it is
	// stopped and faulted (timed out), for an input of up to 1 MiB; a
	// call gets as much again per MiB of its input, so honest work on a
	// large line is not taken for a loop. Bundled plugins have it too. 0
	// is 5 s (wire.DefaultCallTimeout).
	CallTimeout time.Duration
	// TimeoutHint and MemoryHint are what the error of a call stopped by
	// the time limit and of one stopped by the memory limit say about
	// raising them, e.g. "raise it with --plugin-timeout". "" says
	// nothing.
	TimeoutHint, MemoryHint string
	// MaxFaults is after how many consecutive faults a plugin is
	// disabled (its calls then fail, saying so). 0 is 5; a negative value never
	// disables.
	MaxFaults int

	// PoolSize is how many idle initialized instances a plugin keeps for
	// reuse, and the Runtime's plugins together (those used least
	// recently give theirs up first). Instances in use are not counted: a
	// pool never blocks. 0 is GOMAXPROCS.
	PoolSize int
	// CompilationWorkers is how many goroutines compile one plugin. 0 is
	// GOMAXPROCS; compilation is only paid on the first run of a plugin,
	// the cache serves the later ones.
	CompilationWorkers int
	// StackTraces keeps the DWARF debug information of modules, so that
	// a plugin's trap carries a stack trace with source lines. It costs
	// compilation time and memory for every plugin, for a message only a
	// plugin's author reads.
	StackTraces bool

	// Preload names the providers the program is about to look up. New
	// fails as Lookup would when one has no plugin, or more than one
	// (*UnknownProviderError, or an error naming the files), and starts
	// loading their plugins in the background, so that compiling and
	// instantiating (most of a warm start) overlap the program's own
	// work; Lookup waits for that load, or returns its error. nil
	// preloads nothing.
	Preload []string

	// Logger receives plugin log messages and the host's own warnings.
	// nil is slog.Default() at New.
	Logger *slog.Logger
	// LogRate is how many messages per second a plugin may send through
	// the log import; the rest are dropped and counted. 0 is 20.
	LogRate int

	// RandSource makes each instance's random source (WASI random_get,
	// from which Go and TinyGo guests seed their map hashes, and so their
	// map order): called once per instance, its reader is read by that
	// instance alone. nil is crypto/rand, which the host uses everywhere
	// but in tests. A fixed source makes an instance's run, map order
	// and so memory growth included, the same on every run, for tests
	// that check a plugin's memory; it also lets input crafted for that
	// seed collide every key of a guest's maps, so never use one on
	// input twasm did not write.
	RandSource func() io.Reader

	// initTimeout replaces initTimeout (tests: a looping initializer
	// stopped in less than its 30 s).
	initTimeout time.Duration
}

// Bundled is a plugin built into the binary.
type Bundled struct {
	// File names the module, e.g. "claude.wasm".
	File string
	// Wasm returns the module's bytes, which the host never modifies. It
	// is called when the plugin is loaded, or at New when Manifest is nil.
	Wasm func() ([]byte, error)
	// Manifest, SHA256 (hex) and Size are what the build recorded for
	// Wasm's bytes, or Manifest is nil. With them New maps the plugin's
	// providers without reading or compiling the module, so an empty
	// compilation cache costs one compilation, of the plugin in use; and
	// loading fails if the module reports another manifest.
	Manifest *abi.Manifest
	SHA256   string
	Size     int
	// ManifestJSON, when set, is the manifest as the module wrote it when
	// the build loaded it (PluginInfo.ManifestJSON), Manifest what it
	// parsed to: a load that reads these bytes again takes Manifest as
	// it is rather than parsing them.
	ManifestJSON string
}

// binaryPlugins are the plugins embedded in this binary, with the
// manifests its build recorded.
func binaryPlugins() ([]Bundled, error) {
	ps, err := bundled.Plugins()
	out := make([]Bundled, 0, len(ps))
	for _, p := range ps {
		b := Bundled{File: p.File, Wasm: p.Shared} // read in place, never modified
		if r := p.Recorded; r != nil {
			m := r.Manifest
			b.Manifest, b.SHA256, b.Size, b.ManifestJSON = &m, r.SHA256, r.Size, r.Reported
		}
		out = append(out, b)
	}
	return out, err // in file name order, as bundled.Plugins returns them
}

// DefaultPluginPath returns the default plugin path: the directories of
// the TWASM_PLUGIN_PATH environment variable (separated by
// os.PathListSeparator), then os.UserConfigDir()/twasm/plugins. A command
// line flag goes in front: Options{PluginPath: append(flagDirs,
// host.DefaultPluginPath()...)}.
func DefaultPluginPath() []string { return PluginPath(os.Getenv) }

// PluginPath is [DefaultPluginPath] read from the environment getenv
// gives (a command's, which a test replaces) instead of the process's:
// TWASM_PLUGIN_PATH's directories, then the user's configuration
// directory as os.UserConfigDir finds it, from that environment
// ($XDG_CONFIG_HOME, else $HOME/.config on Unix; $HOME/Library/Application
// Support on macOS; %AppData% on Windows), then twasm/plugins. So a test
// that gives a command a home of its own sees no plugin of the user's
// running it.
func PluginPath(getenv func(string) string) []string {
	var dirs []string
	for _, d := range filepath.SplitList(getenv("TWASM_PLUGIN_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if dir := userConfigDir(runtime.GOOS, getenv); dir != "" {
		dirs = append(dirs, filepath.Join(dir, "twasm", "plugins"))
	}
	return dirs
}

// userConfigDir is os.UserConfigDir for goos, from getenv; "" when it has
// none.
func userConfigDir(goos string, getenv func(string) string) string {
	switch goos {
	case "windows":
		return getenv("AppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Application Support")
		}
		return ""
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib")
		}
		return ""
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config")
	}
	return ""
}

// defaultCacheDir returns os.UserCacheDir()/twasm/wazero, or "" when
// there is no user cache directory.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "twasm", "wazero")
}

// settings is validated Options with the defaults filled in.
type settings struct {
	cacheDir        string
	memoryPages     uint32
	callTimeout     time.Duration
	maxFaults       int
	poolSize        int
	logRate         int
	logger          *slog.Logger
	pluginPath      []string
	bundled         []Bundled
	bundledErr      error
	overrideBundled bool
	workers         int
	limitHint       string
	memoryHint      string
	stackTraces     bool
	initTimeout     time.Duration
	preload         []string
	randSource      func() io.Reader
}

// pageSize is the WebAssembly page size.
const pageSize = 64 << 10

// maxPages is the most a 32-bit WebAssembly memory can have.
const maxPages = 65536

func (o Options) resolve() (settings, error) {
	s := settings{
		cacheDir:        o.CacheDir,
		callTimeout:     o.CallTimeout,
		maxFaults:       o.MaxFaults,
		poolSize:        o.PoolSize,
		logRate:         o.LogRate,
		logger:          o.Logger,
		pluginPath:      slices.Clone(o.PluginPath),
		bundled:         slices.Clone(o.Bundled),
		overrideBundled: o.ExternalOverridesBundled,
		workers:         o.CompilationWorkers,
		limitHint:       o.TimeoutHint,
		memoryHint:      o.MemoryHint,
		stackTraces:     o.StackTraces,
		initTimeout:     cmp.Or(o.initTimeout, initTimeout),
		preload:         slices.Clone(o.Preload),
		randSource:      o.RandSource,
	}
	switch {
	case o.NoDiskCache:
		s.cacheDir = ""
	case s.cacheDir == "":
		s.cacheDir = defaultCacheDir()
	}
	limit := o.MemoryLimit
	if limit == 0 {
		limit = wire.DefaultMemoryLimit
	}
	// A Go guest needs about 3.3 MiB after initialization (wasm.md).
	if limit < 8<<20 {
		return s, fmt.Errorf("host: %w: %d bytes is below the 8 MiB a plugin needs to start", ErrMemoryLimit, limit)
	}
	if pages := limit / pageSize; pages > maxPages {
		return s, fmt.Errorf("host: %w: %d bytes exceeds the 4 GiB of a 32-bit wasm memory", ErrMemoryLimit, limit)
	} else {
		s.memoryPages = uint32(pages)
	}
	if s.callTimeout == 0 {
		s.callTimeout = wire.DefaultCallTimeout
	}
	if s.callTimeout < 0 {
		return s, fmt.Errorf("host: negative call timeout %v", s.callTimeout)
	}
	if s.maxFaults == 0 {
		s.maxFaults = defaultMaxFaults
	}
	if s.poolSize == 0 {
		s.poolSize = runtime.GOMAXPROCS(0)
	}
	if s.poolSize < 0 {
		return s, fmt.Errorf("host: negative pool size %d", s.poolSize)
	}
	if s.logRate == 0 {
		s.logRate = defaultLogRate
	}
	if s.logRate < 0 {
		return s, fmt.Errorf("host: negative log rate %d", s.logRate)
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if o.PluginPath == nil {
		s.pluginPath = DefaultPluginPath()
	}
	if o.Bundled == nil {
		s.bundled, s.bundledErr = binaryPlugins()
		if len(s.bundled) == 0 {
			return s, ErrNoBundledPlugins
		}
	}
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	if s.workers < 0 {
		return s, fmt.Errorf("host: negative compilation workers %d", s.workers)
	}
	return s, nil
}
