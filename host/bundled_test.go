package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twasm/twasm/abi"
)

// recorded returns echo as a bundled plugin with the manifest the build
// would record, and a counter of reads of its bytes.
func recorded(t *testing.T, b []byte, m abi.Manifest) (Bundled, *atomic.Int32) {
	t.Helper()
	sum := sha256.Sum256(b)
	var reads atomic.Int32
	return Bundled{
		File:     "echo.wasm",
		Wasm:     func() ([]byte, error) { reads.Add(1); return b, nil },
		Manifest: &m,
		SHA256:   hex.EncodeToString(sum[:]),
		Size:     len(b),
	}, &reads
}

func echoManifest(t *testing.T, echo []byte) abi.Manifest {
	t.Helper()
	return echoInfo(t, echo).Manifest
}

// echoInfo is echo loaded as a bundled plugin without a record, as the
// build loads it.
func echoInfo(t *testing.T, echo []byte) PluginInfo {
	t.Helper()
	rt := newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = bundledBytes(map[string][]byte{"echo.wasm": echo}) }))
	list := rt.List(context.Background())
	if len(list) != 1 || list[0].Err != nil {
		t.Fatalf("list: %+v", list)
	}
	return list[0]
}

func TestBundledWithRecordedManifest(t *testing.T) {
	ctx := context.Background()
	echo := plugin(t, "echo")
	want := echoManifest(t, echo)

	t.Run("providers are mapped without reading the module", func(t *testing.T) {
		b, reads := recorded(t, echo, want)
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.CacheDir = emptyCache(t); o.Bundled = []Bundled{b} }))
		if n := reads.Load(); n != 0 {
			t.Fatalf("New read the module %d times", n)
		}
		_, err := rt.Lookup(ctx, "claude")
		var ue *UnknownProviderError
		if !errors.As(err, &ue) || len(ue.Available) != 1 || ue.Available[0] != "echo" {
			t.Fatalf("unknown provider: %v", err)
		}
		if n := reads.Load(); n != 0 {
			t.Fatalf("an unknown provider read the module %d times", n)
		}
		p, err := rt.Lookup(ctx, "echo")
		if err != nil {
			t.Fatal(err)
		}
		if info := p.Info(); info.SHA256 != b.SHA256 || !info.Bundled || info.Name != "echo" {
			t.Fatalf("info: %+v", info)
		}
		if _, err := rt.Lookup(ctx, "echo"); err != nil || reads.Load() != 1 {
			t.Fatalf("second lookup: %v, %d reads", err, reads.Load())
		}
		if rt.sandboxed != nil {
			t.Fatal("the runtime for modules that cannot be instrumented was made, and none was loaded")
		}
	})

	t.Run("a module whose manifest differs fails to load", func(t *testing.T) {
		other := want
		other.Version = "9.9.9"
		b, _ := recorded(t, echo, other)
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b} }))
		_, err := rt.Lookup(ctx, "echo")
		if err == nil || !strings.Contains(err.Error(), "the build recorded") || !strings.Contains(err.Error(), "rebuild twasm") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("the manifest bytes the build recorded are not parsed again", func(t *testing.T) {
		raw := echoInfo(t, echo).ManifestJSON
		if raw == "" || !strings.Contains(raw, `"echo"`) {
			t.Fatalf("the loaded plugin's manifest JSON: %q", raw)
		}
		// The record is taken for the same bytes: a record that says
		// otherwise (never written by a build) shows it.
		other := want
		other.Description = "as recorded"
		b, _ := recorded(t, echo, other)
		b.ManifestJSON = raw
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b} }))
		p, err := rt.Lookup(ctx, "echo")
		if err != nil || p.Info().Description != "as recorded" || p.Info().ManifestJSON != raw {
			t.Fatalf("same bytes: %v, %+v", err, p)
		}
		// Other bytes are parsed and compared with the record as before.
		b.ManifestJSON = raw + " "
		rt = newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b} }))
		if _, err := rt.Lookup(ctx, "echo"); err == nil || !strings.Contains(err.Error(), "the build recorded") {
			t.Fatalf("other bytes, another manifest: got %v", err)
		}
		b, _ = recorded(t, echo, want)
		b.ManifestJSON = raw + " "
		rt = newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b} }))
		p, err = rt.Lookup(ctx, "echo")
		if err != nil || p.Info().Description != want.Description || p.Info().ManifestJSON != raw {
			t.Fatalf("other bytes, the same manifest: %v, %+v", err, p)
		}
	})

	t.Run("an unreadable module fails its lookup", func(t *testing.T) {
		b, _ := recorded(t, echo, want)
		b.Wasm = func() ([]byte, error) { return nil, errors.New("gone") }
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b} }))
		if _, err := rt.Lookup(ctx, "echo"); err == nil || !strings.Contains(err.Error(), "gone") {
			t.Fatalf("got %v", err)
		}
		b.Manifest = nil // without a record it is read at New and listed as failed
		rt = newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b} }))
		if l := rt.List(ctx); len(l) != 1 || l[0].Err == nil || !strings.Contains(l[0].Err.Error(), "gone") || !l[0].Bundled {
			t.Fatalf("list: %+v", l)
		}
	})

	t.Run("an external copy of a recorded bundled plugin is the same plugin", func(t *testing.T) {
		b, _ := recorded(t, echo, want)
		dir := t.TempDir()
		writeFile(t, dir, "echo-copy.wasm", echo)
		writeFile(t, dir, "echo-variant.wasm", variant(echo, "v")) // another file: the bundled one wins
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.Bundled = []Bundled{b}; o.PluginPath = []string{dir} }))
		p, err := rt.Lookup(ctx, "echo")
		if err != nil || !p.Info().Bundled {
			t.Fatalf("got %v", err)
		}
		l := rt.List(ctx)
		if len(l) != 2 || !strings.HasSuffix(l[1].File, "echo-variant.wasm") || len(l[1].Problems) != 1 {
			t.Fatalf("list: %+v", l)
		}
	})
}

// A host asked for the binary's own plugins when the binary has none (built
// without make) fails loudly instead of serving no provider; asking for
// none explicitly still works.
func TestNewWithoutBinaryPlugins(t *testing.T) {
	ctx := context.Background()
	own, _ := binaryPlugins()
	cfg := Options{NoDiskCache: true, PluginPath: []string{}}
	rt, err := New(ctx, cfg)
	if len(own) == 0 {
		if !errors.Is(err, ErrNoBundledPlugins) {
			t.Fatalf("New without bundled plugins: err = %v, want ErrNoBundledPlugins", err)
		}
		if !strings.Contains(err.Error(), "make") {
			t.Fatalf("the error does not say how to build them: %v", err)
		}
	} else {
		if err != nil {
			t.Fatalf("New with the binary's %d plugins: %v", len(own), err)
		}
		rt.Close(ctx)
	}
	rt, err = New(ctx, set(cfg, func(o *Options) { o.Bundled = []Bundled{} }))
	if err != nil {
		t.Fatalf("New with no bundled plugins asked for: %v", err)
	}
	rt.Close(ctx)
}

// TestBinaryPluginsReadInPlace checks that the host reads the binary's
// bundled modules where the binary holds them: a copy of a module is
// 200-300 KB of fresh heap pages on every start (about 65 page faults
// of a warm record's 1,650). The bytes are those the build recorded.
func TestBinaryPluginsReadInPlace(t *testing.T) {
	ps, err := binaryPlugins()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 || ps[0].Manifest == nil {
		t.Skip("built without the bundled plugins and their record (run make)")
	}
	for _, p := range ps {
		b, err := p.Wasm()
		if err != nil {
			t.Fatalf("%s: %v", p.File, err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != p.SHA256 || len(b) != p.Size {
			t.Errorf("%s: sha256 %s size %d, the build recorded %s size %d", p.File, got, len(b), p.SHA256, p.Size)
		}
		if n := testing.AllocsPerRun(3, func() { b, _ = p.Wasm() }); n != 0 {
			t.Errorf("%s: reading the module allocated %v times: a copy, not the binary's bytes", p.File, n)
		}
	}
}
