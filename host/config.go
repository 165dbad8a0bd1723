package host

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/bundled"
)

// Defaults of a Config.
const (
	DefaultMemoryLimit = 128 << 20
	DefaultCallTimeout = 5 * time.Second
	DefaultMaxFaults   = 5
	DefaultLogRate     = 20
	// StderrTail is how much of a plugin's stderr is kept, attached to
	// the error of a fault: its first KiB (a runtime says there what went
	// wrong) and its last bytes up to this total (where), with a marker
	// where bytes were dropped.
	StderrTail = 4 << 10
)

// Config configures a Runtime. It is immutable: every With method returns
// a modified copy and leaves the receiver unchanged, so a Config can be
// shared and specialised freely. Like append, ignoring the result of a
// With method is a bug.
//
// Setters never fail; New validates the whole Config once. The zero
// Config is the default configuration (NewConfig returns it).
//
// # Notes
//
//   - Defaults: compilation cache in os.UserCacheDir()/twasm/wazero, a
//     128 MiB memory limit per instance, a 5 s timeout per call and MiB
//     of input for every plugin, the plugins built into the binary, and
//     external plugins from DefaultPluginPath.
//   - Guests never get a file system, environment variables, arguments or
//     a network, whatever the Config says: there is no setting for them.
type Config struct {
	cacheDir        string
	cacheDirSet     bool
	memoryLimit     uint64
	callTimeout     time.Duration
	maxFaults       int
	poolSize        int
	logRate         int
	logger          *slog.Logger
	pluginPath      []string
	pluginPathSet   bool
	bundled         []Bundled
	bundledSet      bool
	overrideBundled bool
	workers         int
	limitHint       string
	memoryHint      string
	stackTraces     bool
	// initTimeout replaces InitTimeout (tests: a looping initializer
	// stopped in less than its 30 s).
	initTimeout time.Duration
}

// NewConfig returns the default configuration.
func NewConfig() Config { return Config{} }

// WithCacheDir sets the directory of the compilation cache (compiled
// machine code, keyed by module hash, wazero version and CPU). "" turns
// the on-disk cache off: every process then compiles every plugin.
func (c Config) WithCacheDir(dir string) Config {
	c.cacheDir, c.cacheDirSet = dir, true
	return c
}

// WithMemoryLimit sets the most linear memory one plugin instance may
// use, in bytes, rounded down to 64 KiB pages. A plugin that needs more
// traps (out of memory) and the call faults. 0 restores the default.
func (c Config) WithMemoryLimit(bytes uint64) Config {
	c.memoryLimit = bytes
	return c
}

// WithCallTimeout sets how long one call into a plugin (begin, feed, end,
// and initialisation, which gets at least InitTimeout) may run before it
// is stopped and faulted (ErrTimeout), for an input of up to 1 MiB; a call
// gets as much again per MiB of its input, so honest work on a large line
// is not taken for a loop. Bundled plugins have it too. 0 restores the
// default.
func (c Config) WithCallTimeout(d time.Duration) Config {
	c.callTimeout = d
	return c
}

// WithLimitHints sets what the error of a call stopped by the time limit
// (timeout) and of one stopped by the memory limit (memory) say about
// raising them, e.g. "raise it with --plugin-timeout". "" says nothing.
func (c Config) WithLimitHints(timeout, memory string) Config {
	c.limitHint, c.memoryHint = timeout, memory
	return c
}

// WithStackTraces keeps the DWARF debug information of modules, so that
// a plugin's trap carries a stack trace with source lines. It is off by
// default: it costs compilation time and memory for every plugin, for a
// message only a plugin's author reads.
func (c Config) WithStackTraces(on bool) Config {
	c.stackTraces = on
	return c
}

// WithMaxFaults sets after how many consecutive faults a plugin is
// disabled. 0 restores the default; a negative value never disables.
func (c Config) WithMaxFaults(n int) Config {
	c.maxFaults = n
	return c
}

// WithPoolSize sets how many idle initialized instances a plugin keeps
// for reuse. Instances in use are not counted: a pool never blocks. 0
// restores the default (GOMAXPROCS).
func (c Config) WithPoolSize(n int) Config {
	c.poolSize = n
	return c
}

// WithLogRate sets how many messages per second a plugin may send through
// the log import; the rest are dropped and counted. 0 restores the
// default.
func (c Config) WithLogRate(perSecond int) Config {
	c.logRate = perSecond
	return c
}

// WithLogger sets where plugin log messages and the host's own warnings
// go. nil restores the default (slog.Default() at New).
func (c Config) WithLogger(l *slog.Logger) Config {
	c.logger = l
	return c
}

// WithPluginPath sets the directories searched for external plugins
// (*.wasm, not recursive), in order of precedence. With no argument no
// external plugin is loaded. The default is DefaultPluginPath().
func (c Config) WithPluginPath(dirs ...string) Config {
	c.pluginPath, c.pluginPathSet = slices.Clone(dirs), true
	return c
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
}

// WithBundled sets the plugins built into the binary, by file name, with
// no recorded manifests. The default is the binary's own (package
// internal/bundled; New fails with ErrNoBundledPlugins when it has none);
// nil loads none. The byte slices are not copied (and
// are never modified).
func (c Config) WithBundled(files map[string][]byte) Config {
	names := slices.Sorted(maps.Keys(files))
	ps := make([]Bundled, 0, len(names))
	for _, name := range names {
		b := files[name]
		ps = append(ps, Bundled{File: name, Wasm: func() ([]byte, error) { return b, nil }})
	}
	return c.WithBundledPlugins(ps...)
}

// WithBundledPlugins sets the plugins built into the binary; none loads
// none. The default is the binary's own (package internal/bundled); New
// fails with ErrNoBundledPlugins when the binary has none.
func (c Config) WithBundledPlugins(ps ...Bundled) Config {
	c.bundled, c.bundledSet = slices.Clone(ps), true
	if c.bundled == nil {
		c.bundled = []Bundled{}
	}
	return c
}

// binaryPlugins are the plugins embedded in this binary, with the
// manifests its build recorded.
func binaryPlugins() ([]Bundled, error) {
	ps, err := bundled.Plugins()
	out := make([]Bundled, 0, len(ps))
	for _, p := range ps {
		b := Bundled{File: p.File, Wasm: p.Wasm}
		if r := p.Recorded; r != nil {
			m := r.Manifest
			b.Manifest, b.SHA256, b.Size = &m, r.SHA256, r.Size
		}
		out = append(out, b)
	}
	return out, err // in file name order, as bundled.Plugins returns them
}

// WithExternalOverridesBundled lets an external plugin take over a
// provider that a bundled plugin also claims (the bundled plugin keeps its
// other providers). Without it the bundled plugin keeps the provider and a
// warning names the external file, so that dropping a file into the plugin
// directory never silently changes how a provider is normalized, nor stops
// it from working.
func (c Config) WithExternalOverridesBundled(on bool) Config {
	c.overrideBundled = on
	return c
}

// WithCompilationWorkers sets how many goroutines compile one plugin.
// 0 restores the default (GOMAXPROCS); compilation is only paid on the
// first run of a plugin, the cache serves the later ones.
func (c Config) WithCompilationWorkers(n int) Config {
	c.workers = n
	return c
}

// DefaultPluginPath returns the default plugin path: the directories of
// the TWASM_PLUGIN_PATH environment variable (separated by
// os.PathListSeparator), then os.UserConfigDir()/twasm/plugins. A command
// line flag goes in front: cfg.WithPluginPath(append(flagDirs,
// host.DefaultPluginPath()...)...).
func DefaultPluginPath() []string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("TWASM_PLUGIN_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if dir, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(dir, "twasm", "plugins"))
	}
	return dirs
}

// DefaultCacheDir returns os.UserCacheDir()/twasm/wazero, or "" when
// there is no user cache directory.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "twasm", "wazero")
}

// settings is a validated Config with the defaults filled in.
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
}

// pageSize is the WebAssembly page size.
const pageSize = 64 << 10

// maxPages is the most a 32-bit WebAssembly memory can have.
const maxPages = 65536

func (c Config) resolve() (settings, error) {
	s := settings{
		cacheDir:        c.cacheDir,
		callTimeout:     c.callTimeout,
		maxFaults:       c.maxFaults,
		poolSize:        c.poolSize,
		logRate:         c.logRate,
		logger:          c.logger,
		pluginPath:      c.pluginPath,
		bundled:         c.bundled,
		overrideBundled: c.overrideBundled,
		workers:         c.workers,
		limitHint:       c.limitHint,
		memoryHint:      c.memoryHint,
		stackTraces:     c.stackTraces,
		initTimeout:     cmp.Or(c.initTimeout, InitTimeout),
	}
	if !c.cacheDirSet {
		s.cacheDir = DefaultCacheDir()
	}
	limit := c.memoryLimit
	if limit == 0 {
		limit = DefaultMemoryLimit
	}
	// A Go guest needs about 3.3 MiB after initialization (wasm.md).
	if limit < 8<<20 {
		return s, fmt.Errorf("host: memory limit %d bytes is below the 8 MiB a plugin needs to start", limit)
	}
	if pages := limit / pageSize; pages > maxPages {
		return s, fmt.Errorf("host: memory limit %d bytes exceeds the 4 GiB of a 32-bit wasm memory", limit)
	} else {
		s.memoryPages = uint32(pages)
	}
	if s.callTimeout == 0 {
		s.callTimeout = DefaultCallTimeout
	}
	if s.callTimeout < 0 {
		return s, fmt.Errorf("host: negative call timeout %v", s.callTimeout)
	}
	if s.maxFaults == 0 {
		s.maxFaults = DefaultMaxFaults
	}
	if s.poolSize == 0 {
		s.poolSize = runtime.GOMAXPROCS(0)
	}
	if s.poolSize < 0 {
		return s, fmt.Errorf("host: negative pool size %d", s.poolSize)
	}
	if s.logRate == 0 {
		s.logRate = DefaultLogRate
	}
	if s.logRate < 0 {
		return s, fmt.Errorf("host: negative log rate %d", s.logRate)
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if !c.pluginPathSet {
		s.pluginPath = DefaultPluginPath()
	}
	if !c.bundledSet {
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
