package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
)

// recordedBundle is a bundled plugin with the manifest the build would
// record for it (or another one: a stale record).
func recordedBundle(file string, wasm []byte, m abi.Manifest) Bundled {
	sum := sha256.Sum256(wasm)
	return Bundled{File: file, Wasm: func() ([]byte, error) { return wasm, nil },
		Manifest: &m, SHA256: hex.EncodeToString(sum[:]), Size: len(wasm)}
}

// TestPreload checks Options.Preload: a provider without a plugin fails
// New, before anything is loaded; a served one is loaded in the
// background and Lookup returns that load's plugin, or its error.
func TestPreload(t *testing.T) {
	ctx := context.Background()
	echo := plugin(t, "echo")
	probe := newRuntime(t, testOptions())
	manifest := load(t, probe, "echo", true).manifest
	stale := manifest
	stale.Version += "-stale"

	tests := []struct {
		name      string
		bundled   abi.Manifest
		preload   []string
		newErr    string // New fails saying this
		lookupErr string // Lookup("echo") fails saying this
	}{
		{name: "served", bundled: manifest, preload: []string{"echo", "echo"}},
		{name: "unknown provider", bundled: manifest, preload: []string{"echo", "nope"}, newErr: `no plugin serves provider "nope"`},
		{name: "load fails", bundled: stale, preload: []string{"echo"}, lookupErr: "the build recorded for it"},
		{name: "none", bundled: manifest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := set(testOptions(), func(o *Options) {
				o.Bundled = []Bundled{recordedBundle("echo.wasm", echo, tc.bundled)}
				o.Preload = tc.preload
			})
			rt, err := New(ctx, cfg)
			if tc.newErr != "" {
				var unknown *UnknownProviderError
				if err == nil || !errors.As(err, &unknown) || !strings.Contains(err.Error(), tc.newErr) {
					t.Fatalf("New: %v, want an *UnknownProviderError saying %q", err, tc.newErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close(ctx)
			p, err := rt.Lookup(ctx, "echo")
			if tc.lookupErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.lookupErr) {
					t.Fatalf("Lookup: %v, want an error saying %q", err, tc.lookupErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			again, err := rt.Lookup(ctx, "echo")
			if err != nil || again != p {
				t.Fatalf("second Lookup: %p, %v; want the same plugin %p", again, err, p)
			}
			if got := p.Identity(); got.Name != manifest.Name || got.SHA256 == "" {
				t.Fatalf("identity %+v", got)
			}
			in, err := p.NewInstance(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.(*instance).Close(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPreloadStopped checks that a preload still loading (an initializer
// that never returns) leaves a Lookup with an ended context at once, and
// that Close stops it (goleak, in TestMain, sees no goroutine left).
func TestPreloadStopped(t *testing.T) {
	initloop := plugin(t, "initloop")
	cfg := set(testOptions(), func(o *Options) {
		o.Bundled = []Bundled{recordedBundle("initloop.wasm", initloop, abi.Manifest{Name: "initloop", Version: "1", Providers: []string{"loop"}})}
		o.Preload = []string{"loop"}
	})
	rt, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rt.Lookup(ctx, "loop"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lookup with an ended context: %v, want context.Canceled", err)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Lookup(context.Background(), "loop"); err == nil {
		t.Fatal("Lookup after Close found a plugin")
	}
}

// TestLookupCancelledThenServed: a Lookup whose context has ended fails,
// and leaves the plugin to the next Lookup: the load it gave up is not
// the plugin's failure, with a preload under way or without one.
func TestLookupCancelledThenServed(t *testing.T) {
	echo := plugin(t, "echo")
	probe := newRuntime(t, testOptions())
	manifest := load(t, probe, "echo", true).manifest
	for _, preload := range [][]string{nil, {"echo"}} {
		t.Run(strings.Join(append([]string{"preload"}, preload...), " "), func(t *testing.T) {
			cfg := set(testOptions(), func(o *Options) {
				o.Bundled = []Bundled{recordedBundle("echo.wasm", echo, manifest)}
				o.Preload = preload
			})
			rt, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close(context.Background())
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := rt.Lookup(ended, "echo"); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("Lookup with an ended context: %v", err)
			}
			if _, err := rt.Lookup(context.Background(), "echo"); err != nil {
				t.Fatalf("Lookup after a cancelled one: %v", err)
			}
		})
	}
}

// TestLoadAfterCloseNotRemembered: an external plugin whose load fails
// because the runtime was closed is not remembered as failed: the next
// runtime loads it.
func TestLoadAfterCloseNotRemembered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), plugin(t, "echo"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := set(testOptions(), func(o *Options) {
		o.PluginPath = []string{dir}
		o.CacheDir = emptyCache(t)
	})
	newRuntime(t, cfg) // the first sight loads it and caches its manifest
	rt, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Lookup(ctx, "echo"); err == nil {
		t.Fatal("Lookup after Close found a plugin")
	}
	if _, err := newRuntime(t, cfg).Lookup(ctx, "echo"); err != nil {
		t.Fatalf("the next runtime: %v", err)
	}
}
