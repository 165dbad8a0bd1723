package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// Runtime loads plugins and runs their instances. Make one per process
// (New) and Close it at exit: it owns the compilation cache and two wazero
// runtimes: one for the plugins instrumented with an interrupt flag (every
// bundled one, and the external ones the rewriter accepts), and one with
// context-based timeouts for the modules that cannot be instrumented
// (RATIONALE.md, "How are plugins stopped on time?"), made when the first
// such module is compiled: most processes load none.
//
// A Runtime is safe for concurrent use. The Plugins it returns are too;
// the Instances are not (one goroutine at a time each).
type Runtime struct {
	s       settings
	cache   wazero.CompilationCache
	config  wazero.RuntimeConfig
	trusted wazero.Runtime // bundled plugins; external ones instrumented with an interrupt flag
	// sandboxed runs the external plugins that cannot be instrumented
	// (WithCloseOnContextDone); nil until the first needs it (sandbox).
	sandboxMu sync.Mutex
	sandboxed wazero.Runtime
	// alloc backs instances' linear memories (nil: wazero's default).
	alloc experimental.MemoryAllocator
	// imports instantiates the WASI and host modules in trusted, once,
	// before its first instance (trustedImports).
	imports    sync.Once
	importsErr error
	// preloads are the loads Options.Preload started; Close cancels and
	// waits for them.
	preloads      sync.WaitGroup
	cancelPreload context.CancelFunc

	mu     sync.Mutex
	closed bool
	reg    registry
	loaded []*Plugin // every plugin this Runtime loaded, for Close
	// idleSeq numbers the instances given back to a pool (Plugin.lastPut).
	idleSeq atomic.Int64
}

// Source says where a plugin's bytes come from.
type Source struct {
	// Path names the plugin in messages and in PluginInfo: the file's
	// path, or the file name for a bundled plugin.
	Path string
	// Bundled plugins are part of the twasm binary and trusted not to be
	// hostile (they run under the same limits). Every other plugin is
	// external.
	Bundled bool
}

// New validates opts, opens the compilation cache, and builds the plugin
// registry: the bundled plugins, then the external plugins on the plugin
// path, with the providers each serves. It compiles only what it must: a
// plugin whose manifest the build recorded (bundled) or the manifest cache
// holds (external, same bytes) is compiled when first used (Lookup, Load);
// the others are compiled (from the compilation cache after their first
// run) and instantiated once now, in parallel, to read their manifest; an
// external plugin that failed to load before and has not changed is
// skipped. A plugin that fails to load does not fail New: List reports it with its
// error and its providers stay unknown. New fails for invalid Options,
// with ErrNoBundledPlugins when the Options ask for the binary's own
// bundled plugins (the default) and it has none, or when the runtimes cannot be created.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	s, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	rt := &Runtime{s: s, alloc: newLinearMemoryAllocator()}
	if s.cacheDir != "" {
		rt.cache, err = wazero.NewCompilationCacheWithDir(s.cacheDir)
		if err != nil {
			// A read-only home must not stop recording: compile in
			// memory instead, slower but correct.
			s.logger.Warn("twasm host: compilation cache unavailable; plugins will be compiled on every run",
				"dir", s.cacheDir, "err", err)
		}
	}
	if rt.cache == nil {
		rt.cache = wazero.NewCompilationCache()
	}
	// No debug information unless asked: it is parsed and kept for every
	// module, for stack traces in trap messages only.
	rt.config = wazero.NewRuntimeConfig().
		WithMemoryLimitPages(s.memoryPages).
		WithCompilationCache(rt.cache).
		WithDebugInfoEnabled(s.stackTraces)
	rt.trusted = wazero.NewRuntimeWithConfig(ctx, rt.config)
	rt.loadRegistry(ctx)
	if err := rt.preload(ctx, s.preload); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	// After the preloads started: the host modules are instantiated
	// while they compile. Without a preload they wait for the first
	// instance (instantiate): a command that runs no plugin (a sync
	// with nothing new, which reads the manifests' stores only) does
	// not make them (1.6% of such a sync's CPU).
	if len(s.preload) > 0 {
		if err := rt.trustedImports(ctx); err != nil {
			rt.Close(ctx)
			return nil, err
		}
	}
	return rt, nil
}

// preload starts loading the plugins of providers in the background,
// after checking that each is served by one plugin (Options.Preload).
// The loads are not bound to ctx, which may end when New returns; Close
// stops them.
func (rt *Runtime) preload(ctx context.Context, providers []string) error {
	var ents []*entry
	for _, prov := range providers {
		e, err := rt.entryFor(prov)
		if err != nil {
			return err
		}
		if !slices.Contains(ents, e) {
			ents = append(ents, e)
		}
	}
	if len(ents) == 0 {
		return nil
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rt.cancelPreload = cancel
	for _, e := range ents {
		rt.preloads.Go(func() { _, _ = rt.loadEntry(bg, e) })
	}
	return nil
}

// trustedImports instantiates the WASI and host modules in the trusted
// runtime on first use: New calls it once the preloads have started, and
// the first instance waits for it.
func (rt *Runtime) trustedImports(ctx context.Context) error {
	rt.imports.Do(func() {
		rt.importsErr = instantiateImports(context.WithoutCancel(ctx), rt.trusted)
	})
	return rt.importsErr
}

// sandbox returns the runtime for modules that cannot be instrumented,
// making it on first use. Its host modules cost about as much as the
// trusted runtime's, which every process pays: a warm start's few
// tenths of a millisecond saved for the common case.
func (rt *Runtime) sandbox(ctx context.Context) (wazero.Runtime, error) {
	rt.sandboxMu.Lock()
	defer rt.sandboxMu.Unlock()
	if rt.sandboxed != nil {
		return rt.sandboxed, nil
	}
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return nil, errors.New("host: runtime closed")
	}
	// Not bound to the caller's context: the runtime outlives the call.
	bg := context.WithoutCancel(ctx)
	r := wazero.NewRuntimeWithConfig(bg, rt.config.WithCloseOnContextDone(true))
	if err := instantiateImports(bg, r); err != nil {
		r.Close(bg)
		return nil, err
	}
	rt.sandboxed = r
	return r, nil
}

// instantiateImports provides the WASI functions and the host module in r.
// WASI is complete here, but a plugin importing anything outside
// wire.AllowedWASI() is refused before it is instantiated, and no module is
// ever given a file system, so the rest is unreachable twice over.
func instantiateImports(ctx context.Context, r wazero.Runtime) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		return fmt.Errorf("host: instantiate WASI: %w", err)
	}
	b := r.NewHostModuleBuilder(wire.HostModule)
	for name, sig := range hostFunctions {
		var fn api.GoModuleFunc
		switch name {
		case wire.ImportOutput:
			fn = hostOutput
		case wire.ImportFail:
			fn = hostFail
		case wire.ImportLog:
			fn = hostLog
		}
		// GoModuleFunc, not the reflective WithFunc: about 15x cheaper
		// per call (wasm.md, section 4).
		b = b.NewFunctionBuilder().WithGoModuleFunction(fn, sig.params, sig.results).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiate %s: %w", wire.HostModule, err)
	}
	return nil
}

// Load compiles and checks one plugin, instantiates it once, checks its
// ABI version and reads its manifest. The plugin is not registered for
// Lookup; the caller closes it (or lets Runtime.Close do it).
//
// A module that does not follow the contract gives an error listing
// every problem, each naming what is wrong and what is expected.
func (rt *Runtime) Load(ctx context.Context, wasm []byte, src Source) (*Plugin, error) {
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("host: load %s: runtime closed", src.Path)
	}
	sum := sha256.Sum256(wasm)
	return rt.load(ctx, wasm, src, hex.EncodeToString(sum[:]), nil)
}

// load is Load with the module's sha256 known; with rec set, the module
// must report rec's manifest (the one the build recorded for it).
func (rt *Runtime) load(ctx context.Context, wasm []byte, src Source, sum string, rec *manifestRecord) (*Plugin, error) {
	wrt, compiled, err := rt.compile(ctx, wasm, src)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Stopped, not invalid: say so, and let callers see the
			// cancellation.
			return nil, fmt.Errorf("host: load %s: %w", src.Path, cerr)
		}
		return nil, &abiError{Path: src.Path, Problems: []string{"it is not a valid WebAssembly module: " + err.Error()}}
	}
	if problems := checkModule(compiled); len(problems) > 0 {
		compiled.Close(ctx)
		return nil, &abiError{Path: src.Path, Problems: problems}
	}
	p := newPlugin(rt, wrt, compiled, src, sum)
	m, err := p.instantiate(ctx)
	if err != nil {
		compiled.Close(ctx)
		return nil, fmt.Errorf("host: load %s: %w%s", src.Path, err, stderrSuffix(m))
	}
	manifest, manifestJSON, err := m.handshake(ctx, rec)
	if err != nil {
		m.close(ctx)
		compiled.Close(ctx)
		if _, ok := err.(*abiError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("host: load %s: %w", src.Path, err)
	}
	if rec != nil && !sameManifest(rec.Manifest, manifest) {
		want := rec.Manifest
		m.close(ctx)
		compiled.Close(ctx)
		return nil, fmt.Errorf("host: load %s: the plugin reports manifest %s %s (providers %v), not the %s %s (providers %v) the build recorded for it: rebuild twasm (make)",
			src.Path, manifest.Name, manifest.Version, manifest.Providers, want.Name, want.Version, want.Providers)
	}
	p.manifest, p.manifestJSON = manifest, manifestJSON
	p.put(ctx, m)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		p.close(ctx)
		return nil, fmt.Errorf("host: load %s: runtime closed", src.Path)
	}
	rt.loaded = append(rt.loaded, p)
	return p, nil
}

// trimIdle closes idle instances, those of the plugins given an instance
// back least recently first, until the runtime's plugins hold at most
// the pool size together: a process that goes from one provider's
// sessions to the next (sync, import) no longer keeps every provider's
// instances, each with the linear memory its largest input grew, while
// one that uses one plugin keeps its pool whole. keep, the plugin that
// has just been given one back, is not trimmed.
func (rt *Runtime) trimIdle(ctx context.Context, keep *Plugin) {
	rt.mu.Lock()
	loaded := slices.Clone(rt.loaded)
	rt.mu.Unlock()
	for {
		total := 0
		var oldest *Plugin
		var oldestPut int64
		for _, p := range loaded {
			p.mu.Lock()
			n, put := len(p.free), p.lastPut
			p.mu.Unlock()
			total += n
			if n > 0 && p != keep && (oldest == nil || put < oldestPut) {
				oldest, oldestPut = p, put
			}
		}
		if total <= rt.s.poolSize || oldest == nil {
			return
		}
		if m := oldest.takeIdle(); m != nil {
			m.close(ctx)
		}
	}
}

// ReleaseIdle closes the idle instances of every plugin, returning their
// linear memories' pages to the kernel, for a caller done with the
// plugins for a while (sync, before it builds the search index). The
// plugins stay loaded: the next instance is made afresh.
func (rt *Runtime) ReleaseIdle() {
	rt.mu.Lock()
	loaded := slices.Clone(rt.loaded)
	rt.mu.Unlock()
	for _, p := range loaded {
		p.drain()
	}
}

// Close closes every plugin and instance the Runtime made and releases
// the runtimes and the compilation cache. Instances still in use fail
// their next call. Close is idempotent.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	rt.mu.Unlock()
	// A preload still loading is stopped; one that finishes now sees the
	// runtime closed and closes its plugin.
	if rt.cancelPreload != nil {
		rt.cancelPreload()
	}
	rt.preloads.Wait()
	rt.mu.Lock()
	loaded := rt.loaded
	rt.loaded = nil
	rt.mu.Unlock()
	for _, p := range loaded {
		p.close(ctx)
	}
	var first error
	rt.sandboxMu.Lock()
	sandboxed := rt.sandboxed
	rt.sandboxMu.Unlock()
	for _, r := range []wazero.Runtime{sandboxed, rt.trusted} {
		if r != nil {
			if err := r.Close(ctx); err != nil && first == nil {
				first = fmt.Errorf("host: close runtime: %w", err)
			}
		}
	}
	if err := rt.cache.Close(ctx); err != nil && first == nil {
		first = fmt.Errorf("host: close compilation cache: %w", err)
	}
	return first
}

func sameManifest(a, b abi.Manifest) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Description == b.Description && a.SDK == b.SDK &&
		slices.Equal(a.Providers, b.Providers) && slices.Equal(a.Formats, b.Formats)
}
