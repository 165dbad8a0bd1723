package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
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
