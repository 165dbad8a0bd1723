package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/wasm/wasmcheck"
	"github.com/twasm/twasm/internal/wasm/wasmdata"
	"github.com/twasm/twasm/internal/wasm/wasminterrupt"
	"github.com/twasm/twasm/transcript"
)

// Plugin is a loaded plugin: its compiled module, its manifest and a pool
// of initialized instances. It is safe for concurrent use.
type Plugin struct {
	rt       *Runtime
	wrt      wazero.Runtime
	compiled wazero.CompiledModule
	modCfg   wazero.ModuleConfig
	src      Source
	sha256   string
	manifest abi.Manifest
	// manifestJSON is the manifest as the module wrote it.
	manifestJSON string
	timeout      time.Duration // the call timeout for an input of up to timeoutUnit bytes
	// interrupt: the module was instrumented by wasminterrupt and runs
	// in a runtime without WithCloseOnContextDone; its calls are
	// stopped through its interrupt flag (module.call).
	interrupt bool

	mu     sync.Mutex
	free   []*module // idle, oldest first
	closed bool
	// lastPut orders the plugins by their last instance given back
	// (Runtime.idleSeq): the runtime's bound on idle instances closes
	// those of the plugin used least recently first (trimIdle).
	lastPut int64

	faults   atomic.Int32 // consecutive faults
	disabled atomic.Bool
	logs     logLimiter
}

func newPlugin(rt *Runtime, wrt wazero.Runtime, compiled wazero.CompiledModule, src Source, sum string) *Plugin {
	// Every plugin has a time limit, bundled ones too: a module in the
	// trusted runtime is instrumented (compile), one in the sandboxed
	// runtime is stopped through its context.
	p := &Plugin{rt: rt, wrt: wrt, compiled: compiled, src: src, sha256: sum,
		timeout: rt.s.callTimeout, interrupt: wrt == rt.trusted}
	p.logs.rate, p.logs.now = rt.s.logRate, time.Now
	// No WithFS, WithEnv or WithArgs: a plugin has no file system, no
	// environment and no arguments. Stdout stays io.Discard; stderr is
	// set per instance. Real clocks: wazero's default fake clock keeps
	// a Go guest's garbage collector from finishing cycles, and memory
	// grows without bound (wasm.md, "a Go GC memory leak"). No start
	// function: instantiate calls _initialize itself, under the same
	// deadline as any call.
	p.modCfg = wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithSysNanotime().
		WithSysWalltime().
		WithSysNanosleep().
		// Go seeds its map hashes from random_get: a fixed seed
		// would let crafted input collide every key.
		WithRandSource(rand.Reader)
	return p
}

// compile compiles a plugin's module for the runtime it will run in and
// returns both. The module is instrumented with an interrupt flag
// (package wasminterrupt) and runs in the trusted runtime, its calls
// stopped through the flag; a bundled module the build already
// instrumented is used as it is. One that cannot be instrumented (a
// feature the rewriter does not know) runs as it is in the sandboxed
// runtime, whose context-based timeouts cost Go guests about 3x
// (RATIONALE.md, "How are plugins stopped on time?").
//
// The bytes are checked first (package wasmcheck): a crafted file must not
// make wazero's decoder reserve memory for counts the file cannot hold,
// nor its tables grow without bound at run time.
func (rt *Runtime) compile(ctx context.Context, wasm []byte, src Source) (wazero.Runtime, wazero.CompiledModule, error) {
	if err := wasmcheck.Check(wasm); err != nil {
		return nil, nil, err
	}
	// A table without a maximum would let one table.grow ask for up to
	// 32 GiB and end the process; with one, the grow fails in the guest.
	wasm, err := wasmcheck.BoundTables(wasm)
	if err != nil {
		return nil, nil, err
	}
	ctx = experimental.WithCompilationWorkers(ctx, rt.s.workers)
	// Go's linker writes tens of thousands of data segments, which wazero
	// decodes and validates one by one on every load, cached or not
	// (package wasmdata). A module Compact leaves alone is used as it is.
	if compact, err := wasmdata.Compact(wasm, wasmdata.Gap); err == nil {
		wasm = compact
	}
	if src.Bundled && wasminterrupt.Instrumented(wasm) {
		// The build instrumented it (internal/tools/bundlerecord); trusted,
		// like every byte of the binary.
		c, err := rt.compileModule(ctx, rt.trusted, wasm, src.Path)
		return rt.trusted, c, err
	}
	code, err := wasminterrupt.Instrument(wasm)
	if err == nil {
		var c wazero.CompiledModule
		if c, err = rt.compileModule(ctx, rt.trusted, code, src.Path); err == nil {
			return rt.trusted, c, nil
		}
	}
	// The module compiled as it is gives wazero's own error, about the
	// bytes the user has, if it is invalid.
	rt.s.logger.Debug("twasm host: plugin runs with context-based timeouts (slower)", "path", src.Path, "reason", err)
	sandboxed, err := rt.sandbox(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, err := rt.compileModule(ctx, sandboxed, wasm, src.Path)
	return sandboxed, c, err
}

// rt.compileModule is compileModule, compiling again once when the
// compilation cache's entry for the module is damaged (cacheDamaged): the
// entries are dropped (dropCompiledCode), so the module is compiled anew
// and its entry written again whole. wazero rejects such an entry (a
// checksum of the code it holds, the lengths it reads) but fails the
// compile with it rather than compiling: a bit flipped on disk made
// every later load of a bundled plugin fail, as "not a valid
// WebAssembly module", and an external one run with context-based
// timeouts (uninstrumented, about 3x slower), until the user deleted the
// cache.
func (rt *Runtime) compileModule(ctx context.Context, r wazero.Runtime, wasm []byte, path string) (wazero.CompiledModule, error) {
	c, err := compileModule(ctx, r, wasm)
	if err == nil || rt.s.cacheDir == "" || !cacheDamaged(err) {
		return c, err
	}
	n, derr := dropCompiledCode(rt.s.cacheDir)
	rt.s.logger.Warn("twasm host: the compilation cache is damaged; its compiled code was dropped and the plugin is compiled again",
		"path", path, "dir", rt.s.cacheDir, "err", err, "dropped", n, "drop_err", derr)
	return compileModule(ctx, r, wasm)
}

// cacheDamaged says whether a compile failed on the compilation cache's
// entry for the module (wazero's errors reading it start with
// "compilationcache:"), not on the module: an entry that is cut short,
// holds other bytes, or whose code does not match its checksum. A
// mapping for the code that cannot be made is not damage.
func cacheDamaged(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "compilationcache:") && !strings.Contains(msg, "mmapping")
}

// dropCompiledCode removes the compiled modules from the compilation
// cache under dir (wazero's directory for this architecture and system,
// of each wazero version): wazero's error does not say which entry is
// damaged. Only whole entries are removed (named by their key, 64 hex
// digits), not a file another process is writing (wazero writes an
// entry under a temporary name and renames it), nor the manifest cache.
// Each module is then compiled again on its first use.
func dropCompiledCode(dir string) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(dir, "wazero-*-"+goruntime.GOARCH+"-"+goruntime.GOOS))
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !cacheKey(e.Name()) {
				continue
			}
			if err := os.Remove(filepath.Join(d, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

// cacheKey says whether name is a compilation cache entry's: a sha256 in
// hex.
func cacheKey(name string) bool {
	if len(name) != 64 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

// compileModule is r.CompileModule, with a panic of wazero's on the
// calling goroutine returned as an error: wazero's validator once
// indexed the type section with a type index it had not checked yet
// (wasmcheck now refuses such modules first), and a crafted file must
// fail its load, not end the process. wazero decodes, validates and
// compiles a module before it registers it, so a panic in those steps
// leaves nothing of the module behind; one in a compilation worker, on
// another goroutine, is not caught here.
func compileModule(ctx context.Context, r wazero.Runtime, wasm []byte) (c wazero.CompiledModule, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("wazero failed on the module: %v", p)
		}
	}()
	return r.CompileModule(ctx, wasm)
}

// Info describes the plugin.
func (p *Plugin) Info() PluginInfo {
	m := p.manifest
	info := PluginInfo{
		Manifest: abi.Manifest{Name: m.Name, Version: m.Version, Description: m.Description, SDK: m.SDK,
			Providers: slices.Clone(m.Providers), Formats: slices.Clone(m.Formats), Keys: slices.Clone(m.Keys),
			Stores: cloneStores(m.Stores), SourceFacts: m.SourceFacts},
		ManifestJSON: p.manifestJSON,
		SHA256:       p.sha256, Origin: p.src.Path, File: p.src.Path,
		Bundled: p.src.Bundled, Disabled: p.disabled.Load(),
	}
	if p.src.Bundled {
		info.Origin = "bundled"
	}
	return info
}

// cloneStores copies declared stores, roots included.
func cloneStores(in []abi.Store) []abi.Store {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].Roots = slices.Clone(out[i].Roots)
		out[i].Files = slices.Clone(out[i].Files)
		if c := out[i].SubAgentCall; c != nil {
			cp := *c
			out[i].SubAgentCall = &cp
		}
		if q := out[i].SQLite; q != nil {
			cp := *q
			cp.Tables = slices.Clone(q.Tables)
			if q.Newer != nil {
				nw := *q.Newer
				cp.Newer = &nw
			}
			cp.Schemas = slices.Clone(q.Schemas)
			for j := range cp.Schemas {
				cp.Schemas[j].Tables = slices.Clone(cp.Schemas[j].Tables)
			}
			for j := range cp.Tables {
				cp.Tables[j].JSON = slices.Clone(cp.Tables[j].JSON)
			}
			out[i].SQLite = &cp
		}
	}
	return out
}

// Identity names the plugin in a step's result (transcript.AgentResult's
// plugin): its manifest's name and version and its module's sha256.
func (p *Plugin) Identity() transcript.PluginRef {
	return transcript.PluginRef{Name: p.manifest.Name, Version: p.manifest.Version, SHA256: p.sha256}
}

// NewInstance returns an instance for one stream at a time, from the
// pool when one is idle; closing it returns it to the pool. A plugin
// disabled after too many faults returns an error saying so. It is how package
// capture, which owns the instances it takes, gets one: a program hands
// the Plugin itself to capture.Options.Plugin.
func (p *Plugin) NewInstance(ctx context.Context) (normalize.Instance, error) {
	return p.newInstance(ctx)
}

func (p *Plugin) newInstance(ctx context.Context) (*instance, error) {
	if p.disabled.Load() {
		return nil, p.disabledError()
	}
	m, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return &instance{p: p, m: m}, nil
}

// close closes the idle instances and the compiled module (Runtime.Close
// closes every plugin). Instances in use are closed when they are closed.
// close is idempotent.
func (p *Plugin) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, m := range free {
		m.close(ctx)
	}
	return p.compiled.Close(ctx)
}

func (p *Plugin) get(ctx context.Context) (*module, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("host: plugin %s is closed", p.name())
	}
	if n := len(p.free); n > 0 {
		m := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return m, nil
	}
	p.mu.Unlock()
	m, err := p.instantiate(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: plugin %s: %w", p.name(), err)
	}
	return m, nil
}

// put returns a healthy module to the pool, or closes it when the pool is
// full or closed: the pool bounds idle memory (about 8 MiB an instance),
// not concurrency. The runtime's plugins together keep as many idle
// instances as one plugin may (trimIdle).
func (p *Plugin) put(ctx context.Context, m *module) {
	p.mu.Lock()
	if !p.closed && len(p.free) < p.rt.s.poolSize {
		p.free = append(p.free, m)
		p.lastPut = p.rt.idleSeq.Add(1)
		p.mu.Unlock()
		p.rt.trimIdle(ctx, p)
		return
	}
	p.mu.Unlock()
	m.close(ctx)
}

// takeIdle removes the plugin's oldest idle instance from its pool (nil:
// none).
func (p *Plugin) takeIdle() *module {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return nil
	}
	m := p.free[0]
	p.free = slices.Delete(p.free, 0, 1)
	return m
}

func (p *Plugin) name() string {
	if p.manifest.Name != "" {
		return p.manifest.Name
	}
	return p.src.Path
}

// noteFault counts a fault and reports whether the plugin is now
// disabled.
func (p *Plugin) noteFault(cause error) bool {
	n := p.faults.Add(1)
	limit := p.rt.s.maxFaults
	if limit > 0 && int(n) >= limit && p.disabled.CompareAndSwap(false, true) {
		p.rt.s.logger.Error("twasm host: plugin disabled after consecutive faults",
			"plugin", p.name(), "path", p.src.Path, "faults", n, "last", cause)
		p.drain()
	}
	return p.disabled.Load()
}

func (p *Plugin) noteOK() {
	if p.faults.Load() != 0 {
		p.faults.Store(0)
	}
}

// drain closes the idle instances (of a disabled plugin: none will be
// used again; Runtime.ReleaseIdle).
func (p *Plugin) drain() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, m := range free {
		m.close(context.Background())
	}
}

func (p *Plugin) disabledError() error {
	return fmt.Errorf("host: plugin %s (%s): %w after %d consecutive faults; fix or remove it",
		p.name(), p.src.Path, errPluginDisabled, p.rt.s.maxFaults)
}

// logLimiter lets through at most rate messages per second window and
// counts the rest, so a plugin cannot flood the host's log.
type logLimiter struct {
	rate    int
	now     func() time.Time // time.Now; tests move a clock of their own
	mu      sync.Mutex
	window  time.Time
	n       int
	dropped int
}

// allow reports whether a message may be logged now, and how many were
// dropped in the window that just ended (to be reported once).
func (l *logLimiter) allow() (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.window) >= time.Second {
		dropped = l.dropped
		l.window, l.n, l.dropped = now, 0, 0
	}
	if l.n >= l.rate {
		l.dropped++
		return false, dropped
	}
	l.n++
	return true, dropped
}

// check that an instance is what normalize runs.
var _ normalize.Instance = (*instance)(nil)
