package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// PluginInfo describes a plugin for `twasm plugins list`.
type PluginInfo struct {
	Name, Version, Description, SDK string
	Providers, Formats              []string
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

// registry maps providers to the plugins loaded at New.
type registry struct {
	plugins    []*Plugin
	failed     []PluginInfo
	byProvider map[string]*Plugin
	conflicts  map[string][]string
	problems   map[*Plugin][]string
}

// candidate is a plugin file found at New.
type candidate struct {
	src  Source
	wasm []byte
	sum  string
	p    *Plugin
	err  error
}

// loadRegistry loads the bundled plugins, then the external ones in
// plugin-path order, and maps their providers.
func (rt *Runtime) loadRegistry(ctx context.Context) {
	var cands []*candidate
	names := make([]string, 0, len(rt.s.bundled))
	for name := range rt.s.bundled {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cands = append(cands, &candidate{src: Source{Path: name, Bundled: true}, wasm: rt.s.bundled[name]})
	}
	var failed []PluginInfo
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
			b, err := os.ReadFile(path)
			if err != nil {
				failed = append(failed, PluginInfo{Origin: path, File: path, Err: fmt.Errorf("host: read plugin: %w", err)})
				continue
			}
			cands = append(cands, &candidate{src: Source{Path: path}, wasm: b})
		}
	}

	// The same bytes found twice (a directory on the path twice, a
	// bundled plugin also installed) are one plugin: the first wins.
	seen := map[string]*candidate{}
	uniq := cands[:0]
	for _, c := range cands {
		sum := sha256.Sum256(c.wasm)
		c.sum = hex.EncodeToString(sum[:])
		if first, ok := seen[c.sum]; ok {
			rt.s.logger.Debug("twasm host: skipping a duplicate plugin file", "path", c.src.Path, "same_as", first.src.Path)
			continue
		}
		seen[c.sum] = c
		uniq = append(uniq, c)
	}
	cands = uniq

	// Load in parallel: compilation dominates a cold start.
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, rt.s.workers))
	for _, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c.p, c.err = rt.Load(ctx, c.wasm, c.src)
		}()
	}
	wg.Wait()

	reg := registry{byProvider: map[string]*Plugin{}, conflicts: map[string][]string{}, problems: map[*Plugin][]string{}}
	owners := map[string][]*Plugin{}
	var order []string
	for _, c := range cands {
		if c.err != nil {
			rt.s.logger.Warn("twasm host: plugin not loaded", "path", c.src.Path, "err", c.err)
			info := PluginInfo{SHA256: c.sum, Origin: c.src.Path, File: c.src.Path, Bundled: c.src.Bundled, Err: c.err}
			if c.src.Bundled {
				info.Origin = "bundled"
			}
			failed = append(failed, info)
			continue
		}
		reg.plugins = append(reg.plugins, c.p)
		for _, prov := range c.p.manifest.Providers {
			if owners[prov] == nil {
				order = append(order, prov)
			}
			owners[prov] = append(owners[prov], c.p)
		}
	}
	for _, prov := range order {
		ps := owners[prov]
		if rt.s.overrideBundled {
			external := slices.DeleteFunc(slices.Clone(ps), func(p *Plugin) bool { return p.src.Bundled })
			if len(external) > 0 && len(external) < len(ps) {
				for _, p := range ps {
					if p.src.Bundled {
						reg.problems[p] = append(reg.problems[p], fmt.Sprintf("provider %q is overridden by %s", prov, external[0].src.Path))
					}
				}
				rt.s.logger.Info("twasm host: external plugin overrides a bundled one", "provider", prov, "path", external[0].src.Path)
				ps = external
			}
		}
		if len(ps) == 1 {
			reg.byProvider[prov] = ps[0]
			continue
		}
		paths := make([]string, len(ps))
		for i, p := range ps {
			paths[i] = p.src.Path
			if p.src.Bundled {
				paths[i] = "bundled " + p.src.Path
			}
		}
		reg.conflicts[prov] = paths
		for _, p := range ps {
			reg.problems[p] = append(reg.problems[p], fmt.Sprintf("provider %q is also claimed by another plugin (%s)", prov, strings.Join(paths, " and ")))
		}
		rt.s.logger.Warn("twasm host: provider claimed by more than one plugin; refused", "provider", prov, "paths", paths)
	}
	reg.failed = failed
	rt.mu.Lock()
	rt.reg = reg
	rt.mu.Unlock()
}

// Lookup returns the plugin serving provider. It returns an
// *UnknownProviderError listing the available providers when no plugin
// serves it, and a *ConflictError naming the files when more than one
// claims it.
func (rt *Runtime) Lookup(provider string) (*Plugin, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if p, ok := rt.reg.byProvider[provider]; ok {
		return p, nil
	}
	if paths, ok := rt.reg.conflicts[provider]; ok {
		return nil, &ConflictError{Provider: provider, Paths: slices.Clone(paths)}
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
func (rt *Runtime) List(ctx context.Context) []PluginInfo {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]PluginInfo, 0, len(rt.reg.plugins)+len(rt.reg.failed))
	for _, p := range rt.reg.plugins {
		info := p.Info()
		info.Problems = slices.Clone(rt.reg.problems[p])
		out = append(out, info)
	}
	return append(out, rt.reg.failed...)
}
