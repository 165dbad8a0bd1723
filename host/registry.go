package host

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"hash/crc32"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/wasm/wasmcheck"
	"github.com/twasm/twasm/internal/wire"
)

// PluginInfo describes a plugin for `twasm plugins list`.
type PluginInfo struct {
	// Manifest is the plugin's manifest (name, version, providers,
	// formats...), its fields promoted; empty when Err is set.
	abi.Manifest
	// ManifestJSON is the manifest as the module wrote it, when it was
	// loaded (what a build records as Bundled.ManifestJSON).
	ManifestJSON string
	// SHA256 is the hex sha256 of the module's bytes.
	SHA256 string
	// Origin is the file's path for an external plugin, "bundled" for one
	// built into the binary.
	Origin string
	// File is the file's path, or its name for a bundled plugin.
	File    string
	Bundled bool
	// Disabled is set once the plugin faulted too many times in a row.
	Disabled bool
	// Problems lists what keeps the plugin from serving some of its
	// providers (conflicts with another plugin).
	Problems []string
	// Err is why the plugin could not be loaded; the manifest fields are
	// then empty.
	Err error
}

// registry maps providers to the plugins found at New. Plugins are
// compiled and instantiated lazily, on first use: New only needs their
// manifests, which come from the build's record for a bundled plugin and
// from the manifest cache after an external plugin's first load, so a run
// that uses one plugin pays for one.
type registry struct {
	entries    []*entry
	failed     []PluginInfo
	byProvider map[string]*entry
	conflicts  map[string][]string
	problems   map[*entry][]string
}

// candidate is a plugin file found at New.
type candidate struct {
	src  Source
	wasm []byte // nil until read, for a bundled plugin with a recorded manifest
	read func() ([]byte, error)
	key  string // cheap content key: crc32c and size, or the recorded sha256
	// recorded is the manifest the build recorded for a bundled plugin.
	recorded *manifestRecord
	size     int
}

// bytes returns the candidate's module, reading it on first use.
func (c *candidate) bytes() ([]byte, error) {
	if c.wasm == nil && c.read != nil {
		b, err := c.read()
		if err != nil {
			return nil, fmt.Errorf("host: read bundled plugin %s: %w", c.src.Path, err)
		}
		c.wasm = b
	}
	return c.wasm, nil
}

// entry is a plugin known by its manifest, loaded on first use.
type entry struct {
	c        *candidate
	manifest manifestRecord
	// mu guards the rest. cur is the load under way or done (nil before
	// the first); one whose loader's context ended before it finished
	// is not the plugin's result and is dropped, so the next caller
	// loads again. p and err are the last load's result.
	mu  sync.Mutex
	cur *loadAttempt
	p   *Plugin
	err error
}

// loadAttempt is one load of an entry's plugin, by one goroutine.
type loadAttempt struct {
	done   chan struct{} // closed when the load has ended
	p      *Plugin
	err    error
	gaveUp bool // the loader's context ended first: not the plugin's result
}

func newEntry(c *candidate, m manifestRecord) *entry {
	return &entry{c: c, manifest: m}
}

// result returns the last load's result.
func (e *entry) result() (*Plugin, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.p, e.err
}

// manifestRecord is what the manifest cache keeps per plugin file.
type manifestRecord struct {
	SHA256   string       `json:"sha256"`
	Manifest abi.Manifest `json:"manifest"`
	// HostMinor is the ABI minor version of the host that wrote the
	// record: a record an older host wrote may lack manifest fields it
	// did not know (a 1.3 host drops a 1.4 plugin's stores), so it is
	// read again.
	HostMinor int `json:"host_minor,omitempty"`
	// json is the manifest as the module wrote it, when the build
	// recorded it (Bundled.ManifestJSON): handshake then takes Manifest
	// for the same bytes without parsing them.
	json string
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// overrideHint says how to let an external plugin take a provider from a
// bundled one.
const overrideHint = "to use the external plugin instead, pass --plugin-override (Options.ExternalOverridesBundled)"

// contentKey identifies a plugin file cheaply: hardware crc32c runs at
// memory speed, where sha256 of every bundled plugin would cost a large
// part of a warm start. The sha256 is kept in the cached record.
func contentKey(b []byte) string {
	return fmt.Sprintf("%08x-%d", crc32.Checksum(b, castagnoli), len(b))
}

// manifestDir is where manifests are cached, "" without a cache dir.
func (rt *Runtime) manifestDir() string {
	if rt.s.cacheDir == "" {
		return ""
	}
	return filepath.Join(rt.s.cacheDir, "manifests")
}

func (rt *Runtime) cachedManifest(key string) (manifestRecord, bool) {
	dir := rt.manifestDir()
	if dir == "" {
		return manifestRecord{}, false
	}
	b, err := regfile.ReadFile(filepath.Join(dir, key+".json"), regfile.MaxConfig)
	if err != nil {
		return manifestRecord{}, false
	}
	var m manifestRecord
	if json.Unmarshal(b, &m) != nil || len(m.SHA256) != 64 || m.Manifest.Name == "" || len(m.Manifest.Providers) == 0 || m.HostMinor < wire.Minor {
		return manifestRecord{}, false
	}
	return m, true
}

func (rt *Runtime) storeManifest(key string, m manifestRecord) {
	if dir := rt.manifestDir(); dir != "" {
		rt.writeCacheFile(filepath.Join(dir, key+".json"), m)
		// A file that loads now did not fail: forget a failure of an
		// earlier run (another host, another limit).
		os.Remove(rt.failurePath(key))
	}
}

// writeCacheFile writes v as JSON to path in the manifest cache, best
// effort: a cache that cannot be written only costs time.
func (rt *Runtime) writeCacheFile(path string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	// Write then rename, so a concurrent reader never sees half a record.
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// failureRecord is what the manifest cache keeps for a plugin file that
// failed to load, so that later runs skip it instead of paying for the
// failure again (a looping initializer costs its whole time limit).
type failureRecord struct {
	SHA256 string    `json:"sha256"`
	Error  string    `json:"error"`
	Time   time.Time `json:"time"`
	// The limits it failed under: raising either tries it again.
	CallTimeout time.Duration `json:"call_timeout"`
	MemoryPages uint32        `json:"memory_pages"`
}

func (rt *Runtime) failurePath(key string) string {
	if dir := rt.manifestDir(); dir != "" {
		return filepath.Join(dir, key+".failed.json")
	}
	return ""
}

// cachedFailure returns the failure recorded for wasm, found by its
// content key and confirmed by its sha256.
func (rt *Runtime) cachedFailure(key string, wasm []byte) (failureRecord, bool) {
	path := rt.failurePath(key)
	if path == "" {
		return failureRecord{}, false
	}
	b, err := regfile.ReadFile(path, regfile.MaxConfig)
	if err != nil {
		return failureRecord{}, false
	}
	var f failureRecord
	if json.Unmarshal(b, &f) != nil || f.Error == "" ||
		rt.s.callTimeout > f.CallTimeout || rt.s.memoryPages > f.MemoryPages {
		return failureRecord{}, false
	}
	sum := sha256.Sum256(wasm)
	if f.SHA256 != hex.EncodeToString(sum[:]) {
		return failureRecord{}, false
	}
	return f, true
}

func (rt *Runtime) storeFailure(key string, wasm []byte, err error) {
	path := rt.failurePath(key)
	if path == "" {
		return
	}
	sum := sha256.Sum256(wasm)
	rt.writeCacheFile(path, failureRecord{SHA256: hex.EncodeToString(sum[:]), Error: err.Error(), Time: time.Now().UTC(),
		CallTimeout: rt.s.callTimeout, MemoryPages: rt.s.memoryPages})
}

// failedBeforeError is a plugin's error when it was skipped because the
// same file (same sha256) failed to load in an earlier run.
type failedBeforeError struct {
	Path  string
	Cause string
	When  time.Time
}

func (e *failedBeforeError) Error() string {
	return fmt.Sprintf("host: %s skipped: it failed to load on %s (%s); it is tried again once the file changes or a limit is raised: fix or remove it",
		e.Path, e.When.Format(time.RFC3339), e.Cause)
}

// loadEntry compiles and instantiates the entry's plugin once. An
// external plugin that fails is remembered in the cache, unless the
// caller's context ended or the runtime was closed (not the plugin's
// fault). A caller that finds the load under way (a preload, another
// Lookup) waits for it, or for its own context; when the loader's
// context ended first (a cancelled Lookup, a preload stopped by Close),
// the caller loads the plugin itself.
func (rt *Runtime) loadEntry(ctx context.Context, e *entry) (*Plugin, error) {
	for {
		e.mu.Lock()
		a := e.cur
		mine := a == nil
		if mine {
			a = &loadAttempt{done: make(chan struct{})}
			e.cur = a
		}
		e.mu.Unlock()
		if mine {
			return rt.runLoad(ctx, e, a)
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			select {
			case <-a.done:
			default:
				return nil, fmt.Errorf("host: waiting for %s to load: %w", e.c.src.Path, ctx.Err())
			}
		}
		if !a.gaveUp {
			return a.p, a.err
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("host: waiting for %s to load: %w", e.c.src.Path, err)
		}
		// The loader gave up: load it here (runLoad dropped its attempt).
	}
}

// runLoad is the load of attempt a, the entry's current one.
func (rt *Runtime) runLoad(ctx context.Context, e *entry, a *loadAttempt) (*Plugin, error) {
	defer close(a.done)
	p, err := rt.loadOnce(ctx, e)
	e.mu.Lock()
	defer e.mu.Unlock()
	a.p, a.err = p, err
	e.p, e.err = p, err
	if err != nil && ctx.Err() != nil {
		a.gaveUp = true
		e.cur = nil
	}
	return p, err
}

// loadOnce compiles and instantiates the entry's plugin.
func (rt *Runtime) loadOnce(ctx context.Context, e *entry) (*Plugin, error) {
	if rt.isClosed() { // a Lookup after Close, or one whose preload Close stopped
		return nil, fmt.Errorf("host: load %s: runtime closed", e.c.src.Path)
	}
	wasm, err := e.c.bytes()
	if err != nil {
		return nil, err
	}
	if r := e.c.recorded; r != nil {
		// The build hashed these bytes; they are in the binary.
		return rt.load(ctx, wasm, e.c.src, r.SHA256, r)
	}
	p, err := rt.Load(ctx, wasm, e.c.src)
	switch {
	case err == nil:
		e.manifest = manifestRecord{SHA256: p.sha256, Manifest: p.manifest, HostMinor: wire.Minor}
		rt.storeManifest(e.c.key, e.manifest)
	case ctx.Err() == nil && !e.c.src.Bundled && !rt.isClosed():
		rt.storeFailure(e.c.key, wasm, err)
	}
	return p, err
}

// isClosed says whether Close has begun.
func (rt *Runtime) isClosed() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.closed
}

// loadRegistry finds the bundled plugins, then the external ones in
// plugin-path order, and maps their providers, in four phases: find the
// candidates, keep each distinct module once, load those whose manifest
// is not cached yet (in parallel; the others wait for use), and map each
// provider to the one plugin that serves it.
func (rt *Runtime) loadRegistry(ctx context.Context) {
	cands, failed := rt.candidates()
	ents, failed := rt.distinct(cands, failed)
	rt.loadNew(ctx, ents)
	reg := rt.mapProviders(ents, failed)
	rt.mu.Lock()
	rt.reg = reg
	rt.mu.Unlock()
}

// candidates lists the bundled plugins, then the .wasm files of each
// directory of the plugin path in order; what cannot be read is failed.
func (rt *Runtime) candidates() (cands []*candidate, failed []PluginInfo) {
	if rt.s.bundledErr != nil {
		rt.s.logger.Warn("twasm host: the build's record of bundled plugins is unreadable; they are loaded to learn their manifests", "err", rt.s.bundledErr)
	}
	for _, b := range rt.s.bundled {
		c := &candidate{src: Source{Path: b.File, Bundled: true}, read: b.Wasm}
		if b.Manifest != nil && len(b.SHA256) == 64 && b.Size > 0 {
			c.recorded = &manifestRecord{SHA256: b.SHA256, Manifest: *b.Manifest, json: b.ManifestJSON}
			c.size, c.key = b.Size, "sha256:"+b.SHA256
		} else if _, err := c.bytes(); err != nil {
			failed = append(failed, PluginInfo{Origin: "bundled", File: b.File, Bundled: true, Err: err})
			continue
		}
		cands = append(cands, c)
	}
	for _, dir := range rt.s.pluginPath {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the default directories need not exist
		}
		if err != nil {
			failed = append(failed, PluginInfo{Origin: dir, File: dir, Err: fmt.Errorf("host: read plugin directory: %w", err)})
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".wasm") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			b, err := regfile.ReadFile(path, wasmcheck.MaxModuleBytes)
			if err != nil {
				failed = append(failed, PluginInfo{Origin: path, File: path, Err: fmt.Errorf("host: read plugin: %w", err)})
				continue
			}
			cands = append(cands, &candidate{src: Source{Path: path}, wasm: b})
		}
	}
	return cands, failed
}

// distinct makes an entry of each distinct module: the same bytes found
// twice (a directory on the path twice, a bundled plugin also installed)
// are one plugin, the first wins; a module that failed before with the
// same bytes is failed again without being compiled.
func (rt *Runtime) distinct(cands []*candidate, failed []PluginInfo) ([]*entry, []PluginInfo) {
	seen := map[string]*candidate{}
	bySize := map[int][]*candidate{} // recorded bundled plugins, not read yet
	var ents []*entry
	for _, c := range cands {
		if c.recorded != nil {
			bySize[c.size] = append(bySize[c.size], c)
			ents = append(ents, newEntry(c, *c.recorded))
			continue
		}
		c.key = contentKey(c.wasm)
		if first := sameAs(seen[c.key], bySize[len(c.wasm)], c.wasm); first != nil {
			rt.s.logger.Debug("twasm host: skipping a duplicate plugin file", "path", c.src.Path, "same_as", first.src.Path)
			continue
		}
		seen[c.key] = c
		if f, ok := rt.cachedFailure(c.key, c.wasm); ok {
			err := &failedBeforeError{Path: c.src.Path, Cause: f.Error, When: f.Time}
			rt.s.logger.Warn("twasm host: plugin skipped", "err", err)
			failed = append(failed, PluginInfo{Origin: c.src.Path, File: c.src.Path, SHA256: f.SHA256, Err: err})
			continue
		}
		m, _ := rt.cachedManifest(c.key)
		ents = append(ents, newEntry(c, m))
	}
	return ents, failed
}

// loadNew loads the plugins seen for the first time (no cached
// manifest), in parallel: compilation dominates a cold start.
func (rt *Runtime) loadNew(ctx context.Context, ents []*entry) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, rt.s.workers))
	for _, e := range ents {
		if e.manifest.SHA256 != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, _ = rt.loadEntry(ctx, e)
		}()
	}
	wg.Wait()
}

// mapProviders maps each provider to the plugin that serves it: a
// bundled plugin keeps a provider an external one claims unless the user
// chose the external one; two plugins of the same standing claiming a
// provider is a conflict, refused. Plugins that did not load are failed.
func (rt *Runtime) mapProviders(ents []*entry, failed []PluginInfo) registry {
	reg := registry{byProvider: map[string]*entry{}, conflicts: map[string][]string{}, problems: map[*entry][]string{}}
	owners := map[string][]*entry{}
	var order []string
	for _, e := range ents {
		if _, err := e.result(); err != nil {
			rt.s.logger.Warn("twasm host: plugin not loaded", "path", e.c.src.Path, "err", err)
			failed = append(failed, e.failedInfo())
			continue
		}
		reg.entries = append(reg.entries, e)
		for _, prov := range e.manifest.Manifest.Providers {
			if owners[prov] == nil {
				order = append(order, prov)
			}
			owners[prov] = append(owners[prov], e)
		}
	}
	for _, prov := range order {
		es := owners[prov]
		external := slices.DeleteFunc(slices.Clone(es), func(e *entry) bool { return e.c.src.Bundled })
		if len(external) > 0 && len(external) < len(es) {
			// A bundled plugin and an external one claim the provider:
			// the bundled one keeps it unless the user chose the
			// external one; either way the loser is told.
			if rt.s.overrideBundled {
				for _, e := range es {
					if e.c.src.Bundled {
						reg.problems[e] = append(reg.problems[e], fmt.Sprintf("provider %q is overridden by %s", prov, external[0].c.src.Path))
					}
				}
				rt.s.logger.Info("twasm host: external plugin overrides a bundled one", "provider", prov, "path", external[0].c.src.Path)
				es = external
			} else {
				for _, e := range external {
					reg.problems[e] = append(reg.problems[e], fmt.Sprintf("provider %q stays with the bundled plugin (%s)", prov, overrideHint))
					rt.s.logger.Warn("twasm host: an external plugin claims a provider a bundled plugin serves; the bundled plugin keeps it",
						"provider", prov, "path", e.c.src.Path, "to_use_it", overrideHint)
				}
				es = slices.DeleteFunc(es, func(e *entry) bool { return !e.c.src.Bundled })
			}
		}
		if len(es) == 1 {
			reg.byProvider[prov] = es[0]
			continue
		}
		paths := make([]string, len(es))
		for i, e := range es {
			paths[i] = e.c.src.Path
			if e.c.src.Bundled {
				paths[i] = "bundled " + e.c.src.Path
			}
		}
		reg.conflicts[prov] = paths
		for _, e := range es {
			reg.problems[e] = append(reg.problems[e], fmt.Sprintf("provider %q is also claimed by another plugin (%s)", prov, strings.Join(paths, " and ")))
		}
		rt.s.logger.Warn("twasm host: provider claimed by more than one plugin; refused", "provider", prov, "paths", paths)
	}
	reg.failed = failed
	return reg
}

// sameAs returns the plugin found before with exactly the bytes b: the
// one with the same content key, or a recorded bundled plugin of the same
// size (read only then).
func sameAs(sameKey *candidate, sameSize []*candidate, b []byte) *candidate {
	if sameKey != nil && bytes.Equal(sameKey.wasm, b) {
		return sameKey
	}
	for _, c := range sameSize {
		if w, err := c.bytes(); err == nil && bytes.Equal(w, b) {
			return c
		}
	}
	return nil
}

func (e *entry) failedInfo() PluginInfo {
	_, err := e.result()
	info := PluginInfo{SHA256: e.manifest.SHA256, Origin: e.c.src.Path, File: e.c.src.Path, Bundled: e.c.src.Bundled, Err: err}
	if e.c.src.Bundled {
		info.Origin = "bundled"
	}
	return info
}

// Lookup returns the plugin serving provider, compiling and instantiating
// it on first use. It returns an *UnknownProviderError listing the
// available providers when no plugin serves it, and a *conflictError
// naming the files when more than one claims it. A Lookup whose ctx ends
// first returns ctx's error and leaves the plugin to the next Lookup: the
// load it gave up is not remembered as the plugin's failure.
func (rt *Runtime) Lookup(ctx context.Context, provider string) (*Plugin, error) {
	e, err := rt.entryFor(provider)
	if err != nil {
		return nil, err
	}
	p, err := rt.loadEntry(ctx, e)
	if err != nil {
		return nil, fmt.Errorf("host: plugin for %q (%s): %w", provider, e.c.src.Path, err)
	}
	return p, nil
}

// Serves reports whether a plugin serves provider, without loading it:
// nil, or the *UnknownProviderError (or conflict) Lookup would return.
func (rt *Runtime) Serves(provider string) error {
	_, err := rt.entryFor(provider)
	return err
}

// entryFor returns the entry serving provider, or Lookup's error when
// none or more than one does.
func (rt *Runtime) entryFor(provider string) (*entry, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if e, ok := rt.reg.byProvider[provider]; ok {
		return e, nil
	}
	if paths, ok := rt.reg.conflicts[provider]; ok {
		return nil, &conflictError{Provider: provider, Paths: slices.Clone(paths)}
	}
	avail := make([]string, 0, len(rt.reg.byProvider))
	for prov := range rt.reg.byProvider {
		avail = append(avail, prov)
	}
	sort.Strings(avail)
	return nil, &UnknownProviderError{Provider: provider, Available: avail}
}

// List describes every plugin found at New, bundled first then in
// plugin-path order, including those that failed to load (with Err set).
// It loads every plugin, to report the ones that no longer load.
func (rt *Runtime) List(ctx context.Context) []PluginInfo {
	rt.mu.Lock()
	reg := rt.reg
	rt.mu.Unlock()
	out := make([]PluginInfo, 0, len(reg.entries)+len(reg.failed))
	for _, e := range reg.entries {
		p, err := rt.loadEntry(ctx, e)
		if err != nil {
			info := e.failedInfo()
			info.Err = err // this call's: the load may not have ended for it
			out = append(out, info)
			continue
		}
		info := p.Info()
		info.Problems = slices.Clone(reg.problems[e])
		out = append(out, info)
	}
	return append(out, reg.failed...)
}

// DeclaredStore is a native session store a plugin declares in its
// manifest (ABI 1.4), with the provider it is read as and the plugin
// that serves it.
type DeclaredStore struct {
	abi.Store
	// Provider is the store's provider: its own, else the plugin's first.
	Provider string
	// Plugin is the plugin's name; Origin "bundled" or its file's path.
	Plugin string
	Origin string
	// SourceFacts is the plugin's Manifest.SourceFacts.
	SourceFacts bool
}

// Stores returns the stores every plugin found at New declares, bundled
// first then in plugin-path order, each with the provider it is read as.
// It loads no plugin: manifests come from the build's record for a
// bundled plugin and from the manifest cache (or the load at New) for an
// external one. A store whose provider the plugin does not serve (another
// plugin won it) is left out: its sessions would be read by another
// plugin than the one that declared them.
func (rt *Runtime) Stores() []DeclaredStore {
	rt.mu.Lock()
	reg := rt.reg
	rt.mu.Unlock()
	var out []DeclaredStore
	for _, e := range reg.entries {
		m := e.manifest.Manifest
		origin := e.c.src.Path
		if e.c.src.Bundled {
			origin = "bundled"
		}
		for _, st := range cloneStores(m.Stores) {
			prov := cmp.Or(st.Provider, m.Providers[0])
			if reg.byProvider[prov] != e {
				continue
			}
			out = append(out, DeclaredStore{Store: st, Provider: prov, Plugin: m.Name, Origin: origin, SourceFacts: m.SourceFacts})
		}
	}
	return out
}
