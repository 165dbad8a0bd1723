package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/wire"
)

// TestLazyLoading checks that a runtime whose manifest cache knows the
// plugins compiles and instantiates none of them until one is looked up,
// and then only that one: a warm `twasm record` pays for one plugin.
func TestLazyLoading(t *testing.T) {
	ctx := context.Background()
	cache := emptyCache(t)
	bundled := map[string][]byte{"echo.wasm": plugin(t, "echo"), "panicky.wasm": plugin(t, "panicky")}
	cfg := Options{CacheDir: cache, PluginPath: []string{}, Bundled: bundledBytes(bundled)}

	cold := newRuntime(t, cfg)
	if got := len(cold.loaded); got != 2 {
		t.Fatalf("cold start loaded %d plugins, want 2 (manifests unknown)", got)
	}
	recs, _ := filepath.Glob(filepath.Join(cache, "manifests", "*.json"))
	if len(recs) != 2 {
		t.Fatalf("manifest cache holds %d records, want 2", len(recs))
	}

	warm := newRuntime(t, cfg)
	if got := len(warm.loaded); got != 0 {
		t.Fatalf("warm start loaded %d plugins, want 0", got)
	}
	p, err := warm.Lookup(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(warm.loaded); got != 1 {
		t.Fatalf("after one lookup %d plugins loaded, want 1", got)
	}
	if p.Info().SHA256 == "" || p.manifest.Name != "echo" {
		t.Fatalf("lazy plugin info %+v", p.Info())
	}
	if _, err := warm.Lookup(ctx, "nope"); err == nil {
		t.Fatal("unknown provider found")
	}
	// List reports every plugin, loading what is left.
	if infos := warm.List(ctx); len(infos) != 2 || len(warm.loaded) != 2 {
		t.Fatalf("List: %d infos, %d loaded", len(infos), len(warm.loaded))
	}

	// A damaged record is ignored: the plugin is loaded again.
	for _, r := range recs {
		if err := os.WriteFile(r, []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	again := newRuntime(t, cfg)
	if got := len(again.loaded); got != 2 {
		t.Fatalf("with damaged records %d plugins loaded, want 2", got)
	}
}

// TestHostModulesLazy: the WASI and twasm host modules are instantiated
// in the trusted runtime when its first plugin instance needs them, not
// by New (a sync with nothing new starts the host for the stores the
// manifests declare and runs no plugin), unless plugins are preloaded,
// whose loads they overlap. Before, New always instantiated them: the
// "warm, nothing run" case failed with "host modules instantiated by
// New: wasi_snapshot_preview1".
func TestHostModulesLazy(t *testing.T) {
	ctx := context.Background()
	cache := emptyCache(t)
	bundled := map[string][]byte{"echo.wasm": plugin(t, "echo")}
	cfg := Options{CacheDir: cache, PluginPath: []string{}, Bundled: bundledBytes(bundled)}
	newRuntime(t, cfg) // the manifests known: a warm start loads nothing
	for _, tc := range []struct {
		name    string
		preload []string
		atNew   bool
	}{
		{"warm, nothing run", nil, false},
		{"preloaded", []string{"echo"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := cfg
			o.Preload = tc.preload
			rt := newRuntime(t, o)
			imported := func() []string {
				var in []string
				for _, name := range []string{"wasi_snapshot_preview1", wire.HostModule} {
					if rt.trusted.Module(name) != nil {
						in = append(in, name)
					}
				}
				return in
			}
			if got := imported(); (len(got) == 2) != tc.atNew || (len(got) != 0) != tc.atNew {
				t.Fatalf("host modules instantiated by New: %s", strings.Join(got, ", "))
			}
			p, err := rt.Lookup(ctx, "echo")
			if err != nil {
				t.Fatal(err)
			}
			m, err := p.instantiate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			m.close(ctx)
			if got := imported(); len(got) != 2 {
				t.Fatalf("after an instance, host modules instantiated: %v, want both", got)
			}
		})
	}
}
