package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/verify"
	"github.com/twasm/twasm/internal/wire"
)

// variant returns the module with a custom section appended: other bytes
// (another sha256), the same plugin.
func variant(b []byte, tag string) []byte {
	return section(slices.Clone(b), 0, append(wname(nil, "twasm-test-"+tag), 0))
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	echo := plugin(t, "echo")
	dir1, dir2 := t.TempDir(), t.TempDir()
	writeFile(t, dir1, "panicky.wasm", plugin(t, "panicky"))
	writeFile(t, dir1, "broken.wasm", []byte("not wasm"))
	writeFile(t, dir1, "notes.txt", []byte("ignored"))
	// The same bytes twice are one plugin.
	writeFile(t, dir1, "echo-copy.wasm", echo)

	t.Run("lookup", func(t *testing.T) {
		rt := newRuntime(t, set(testOptions(), func(o *Options) {
			o.Bundled = bundledBytes(map[string][]byte{"echo.wasm": echo})
			o.PluginPath = []string{dir1, filepath.Join(dir1, "missing")}
		}))
		p, err := rt.Lookup(context.Background(), "echo")
		if err != nil || !p.Info().Bundled {
			t.Fatalf("echo: %v", err)
		}
		if p, err := rt.Lookup(context.Background(), "panicky"); err != nil || p.Info().Origin != filepath.Join(dir1, "panicky.wasm") {
			t.Fatalf("panicky: %v", err)
		}
		_, err = rt.Lookup(context.Background(), "claude")
		var ue *UnknownProviderError
		if !errors.As(err, &ue) || !slices.Equal(ue.Available, []string{"echo", "panicky"}) ||
			!strings.Contains(err.Error(), `no plugin serves provider "claude"; available: echo, panicky`) {
			t.Fatalf("unknown provider: %v", err)
		}
		list := rt.List(ctx)
		if len(list) != 3 {
			t.Fatalf("list: %+v", list)
		}
		if l := list[0]; l.Name != "echo" || l.Origin != "bundled" || l.File != "echo.wasm" || len(l.SHA256) != 64 || l.Version != "0.0.1" || !slices.Equal(l.Formats, []string{"jsonl"}) {
			t.Errorf("bundled echo: %+v", l)
		}
		if l := list[2]; l.Err == nil || !strings.HasSuffix(l.Origin, "broken.wasm") || !strings.Contains(l.Err.Error(), "not a valid WebAssembly module") {
			t.Errorf("broken plugin: %+v", l)
		}
	})

	t.Run("conflict between external plugins", func(t *testing.T) {
		a := writeFile(t, dir2, "a.wasm", variant(echo, "a"))
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.PluginPath = []string{dir2, dir1} }))
		_, err := rt.Lookup(context.Background(), "echo")
		var ce *conflictError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), filepath.Join(dir1, "echo-copy.wasm")) {
			t.Fatalf("got %v", err)
		}
		if _, err := rt.Lookup(context.Background(), "panicky"); err != nil {
			t.Fatalf("an unrelated provider: %v", err)
		}
		if info := rt.List(ctx)[0]; len(info.Problems) != 1 || !strings.Contains(info.Problems[0], "also claimed") {
			t.Fatalf("problems: %+v", info)
		}
		os.Remove(a)
	})

	t.Run("external against bundled", func(t *testing.T) {
		ext := writeFile(t, t.TempDir(), "echo2.wasm", variant(echo, "ext"))
		cfg := set(testOptions(), func(o *Options) {
			o.Bundled = bundledBytes(map[string][]byte{"echo.wasm": echo})
			o.PluginPath = []string{filepath.Dir(ext)}
		})
		// Without the override the bundled plugin keeps working, and a
		// warning names the external file and the way to choose it.
		h := &captureHandler{}
		rt := newRuntime(t, set(cfg, func(o *Options) { o.Logger = slogNew(h) }))
		p, err := rt.Lookup(context.Background(), "echo")
		if err != nil || !p.Info().Bundled {
			t.Fatalf("without override: %v", err)
		}
		if h.count("the bundled plugin keeps it") != 1 {
			t.Fatalf("warnings: %q", h.msgs)
		}
		if info := rt.List(ctx)[1]; info.Origin != ext || len(info.Problems) != 1 || !strings.Contains(info.Problems[0], "--plugin-override") {
			t.Fatalf("external info: %+v", info)
		}
		rt = newRuntime(t, set(cfg, func(o *Options) { o.ExternalOverridesBundled = true }))
		p, err = rt.Lookup(context.Background(), "echo")
		if err != nil || p.Info().Origin != ext {
			t.Fatalf("with override: %v", err)
		}
		if info := rt.List(ctx)[0]; !info.Bundled || len(info.Problems) != 1 || !strings.Contains(info.Problems[0], "overridden by "+ext) {
			t.Fatalf("bundled info: %+v", info)
		}
	})

	t.Run("unreadable directory", func(t *testing.T) {
		f := writeFile(t, t.TempDir(), "file", nil)
		rt := newRuntime(t, set(testOptions(), func(o *Options) { o.PluginPath = []string{f} }))
		if l := rt.List(ctx); len(l) != 1 || l[0].Err == nil {
			t.Fatalf("list: %+v", l)
		}
		_, err := rt.Lookup(context.Background(), "x")
		if !strings.Contains(err.Error(), "no plugin is loaded") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestDefaultPluginPath(t *testing.T) {
	t.Setenv("TWASM_PLUGIN_PATH", strings.Join([]string{"/a", "", "/b"}, string(os.PathListSeparator)))
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	t.Setenv("HOME", "/home/x")
	got := DefaultPluginPath()
	if len(got) < 2 || got[0] != "/a" || got[1] != "/b" {
		t.Fatalf("got %q", got)
	}
	if dir, err := os.UserConfigDir(); err == nil && got[len(got)-1] != filepath.Join(dir, "twasm", "plugins") {
		t.Fatalf("got %q", got)
	}
	if d := defaultCacheDir(); d != "" && !strings.HasSuffix(d, filepath.Join("twasm", "wazero")) {
		t.Fatalf("cache dir %q", d)
	}
}

// TestPluginPath: the plugin path read from a command's environment
// names only that environment's directories, whatever the process's: the
// user's own plugins are not seen by a command given another home.
func TestPluginPath(t *testing.T) {
	t.Setenv("TWASM_PLUGIN_PATH", "/process/plugins")
	t.Setenv("XDG_CONFIG_HOME", "/process/cfg")
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"a home only", map[string]string{"HOME": "/h"}, []string{"/h/.config/twasm/plugins"}},
		{"XDG_CONFIG_HOME first", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, []string{"/x/twasm/plugins"}},
		{"a relative XDG_CONFIG_HOME is ignored", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "rel"}, []string{"/h/.config/twasm/plugins"}},
		{"TWASM_PLUGIN_PATH in front", map[string]string{"HOME": "/h", "TWASM_PLUGIN_PATH": "/a" + string(os.PathListSeparator) + string(os.PathListSeparator) + "/b"}, []string{"/a", "/b", "/h/.config/twasm/plugins"}},
		{"nothing", map[string]string{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if runtime.GOOS != "linux" {
				t.Skip("the table is Linux's layout")
			}
			got := PluginPath(env(c.env))
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	if got, want := userConfigDir("darwin", env(map[string]string{"HOME": "/h"})), "/h/Library/Application Support"; got != filepath.FromSlash(want) {
		t.Errorf("darwin: got %q", got)
	}
	if got := userConfigDir("windows", env(map[string]string{"AppData": `C:\\u\\AppData`})); got != `C:\\u\\AppData` {
		t.Errorf("windows: got %q", got)
	}
}

func TestOptions(t *testing.T) {
	dirs := []string{"/a"}
	s, err := Options{Bundled: []Bundled{}, PluginPath: dirs}.resolve()
	dirs[0] = "/changed"
	if err != nil || s.pluginPath[0] != "/a" {
		t.Fatalf("New kept the caller's slice: %v, %v", s.pluginPath, err)
	}
	if s, err := (Options{NoDiskCache: true, CacheDir: "/x", Bundled: []Bundled{}}).resolve(); err != nil || s.cacheDir != "" {
		t.Fatalf("NoDiskCache: cache dir %q, %v", s.cacheDir, err)
	}
	s, err = Options{Bundled: []Bundled{}, PluginPath: []string{}}.resolve()
	if err != nil || s.memoryPages != wire.DefaultMemoryLimit/pageSize || s.callTimeout != wire.DefaultCallTimeout || s.maxFaults != defaultMaxFaults || s.poolSize < 1 {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{MemoryLimit: 1 << 20}, "below the 8 MiB"},
		{Options{MemoryLimit: 8 << 30}, "exceeds the 4 GiB"},
		{Options{CallTimeout: -time.Second}, "negative call timeout"},
		{Options{PoolSize: -1}, "negative pool size"},
		{Options{LogRate: -1}, "negative log rate"},
		{Options{CompilationWorkers: -1}, "negative compilation workers"},
	} {
		if _, err := New(context.Background(), set(c.opts, func(o *Options) { o.Bundled = []Bundled{}; o.PluginPath = []string{} })); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestCacheDirFallsBackToMemory(t *testing.T) {
	f := writeFile(t, t.TempDir(), "file", nil)
	h := &captureHandler{}
	rt := newRuntime(t, set(testOptions(), func(o *Options) { o.CacheDir = filepath.Join(f, "sub"); o.Logger = slogNew(h) }))
	if h.count("compilation cache unavailable") != 1 {
		t.Fatalf("log: %q", h.msgs)
	}
	// A tiny module compiles fast; it gets as far as its (missing)
	// manifest, so compiling and instantiating worked.
	tiny := wasmModule(nil, goodExports(), true)
	if _, err := rt.Load(context.Background(), tiny, Source{Path: "t"}); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Fatalf("got %v", err)
	}
	// No cache at all works too.
	if _, err := newRuntime(t, set(testOptions(), func(o *Options) { o.NoDiskCache = true })).Load(context.Background(), tiny, Source{Path: "t"}); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Fatalf("got %v", err)
	}
}

func TestPoolAndClose(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, set(testOptions(), func(o *Options) { o.PoolSize = 1 }))
	p := load(t, rt, "echo", true)
	a, _ := p.newInstance(ctx)
	b, _ := p.newInstance(ctx)
	ma := a.m
	a.Close(ctx)
	a.Close(ctx) // idempotent
	b.Close(ctx) // the pool is full: closed
	c, _ := p.newInstance(ctx)
	if c.m != ma {
		t.Fatal("the idle instance was not reused")
	}
	if _, err := a.Feed(ctx, batch(1, "{}")); err == nil || !strings.Contains(err.Error(), "closed instance") {
		t.Fatalf("feed after close: %v", err)
	}
	rt.Close(ctx)
	rt.Close(ctx)
	if _, err := p.newInstance(ctx); err == nil {
		t.Fatal("NewInstance after Close")
	}
	if _, err := rt.Load(ctx, plugin(t, "echo"), Source{Path: "e"}); err == nil {
		t.Fatal("Load after Close")
	}
	if _, err := rt.Verify(ctx, plugin(t, "echo")); err == nil {
		t.Fatal("Verify after Close")
	}
	c.Close(ctx)
}

// TestReleaseIdle: the idle instances of every plugin are closed (the
// next instance is made afresh), and the plugin stays usable.
func TestReleaseIdle(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, set(testOptions(), func(o *Options) { o.PoolSize = 2 }))
	defer rt.Close(ctx)
	p := load(t, rt, "echo", true)
	a, _ := p.newInstance(ctx)
	b, _ := p.newInstance(ctx)
	idle := []*module{a.m, b.m}
	a.Close(ctx)
	b.Close(ctx)
	if n := IdleInstances(p); n != 2 {
		t.Fatalf("%d idle before, want 2", n)
	}
	rt.ReleaseIdle()
	if n := IdleInstances(p); n != 0 {
		t.Fatalf("%d idle after ReleaseIdle, want 0", n)
	}
	c, err := p.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(idle, c.m) {
		t.Fatal("a released instance was used again")
	}
	c.Close(ctx)
	if n := IdleInstances(p); n != 1 {
		t.Fatalf("%d idle after a new instance closed, want 1", n)
	}
}

// TestIdleBoundedAcrossPlugins: the plugins of a Runtime keep at most
// PoolSize idle instances together, those of the plugin given one back
// least recently closed first; one plugin alone keeps its whole pool.
func TestIdleBoundedAcrossPlugins(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, set(testOptions(), func(o *Options) { o.PoolSize = 2 }))
	defer rt.Close(ctx)
	var ps []*Plugin
	for _, path := range []string{"a.wasm", "b.wasm", "c.wasm"} {
		p, err := rt.Load(ctx, plugin(t, "echo"), Source{Path: path, Bundled: true})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	use := func(p *Plugin, n int) {
		var ins []*instance
		for range n {
			in, err := p.newInstance(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ins = append(ins, in)
		}
		for _, in := range ins {
			in.Close(ctx)
		}
	}
	idle := func() []int {
		var out []int
		for _, p := range ps {
			out = append(out, IdleInstances(p))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		p    int // the plugin used
		n    int // instances at once
		want []int
	}{
		{"one plugin keeps its pool", 0, 2, []int{2, 0, 0}},
		{"the next plugin's pool replaces it", 1, 2, []int{0, 2, 0}},
		{"one each: the least recent goes first", 2, 1, []int{0, 1, 1}},
		{"back to the first", 0, 1, []int{1, 0, 1}},
	} {
		use(ps[tc.p], tc.n)
		if got := idle(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: idle %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestVerify(t *testing.T) {
	rt := newRuntime(t, faultOptions())
	ctx := context.Background()
	r, err := rt.Verify(ctx, plugin(t, "echo"))
	if err != nil || !(len(r.Problems) == 0) || r.ABIVersion != fmt.Sprintf("%d.%d", wire.Major, wire.Minor) || r.Manifest == nil || r.Manifest.Name != "echo" || r.Size == 0 || len(r.SHA256) != 64 {
		t.Fatalf("echo: %+v %v", r, err)
	}
	if !slices.ContainsFunc(r.Exports, func(f verify.Func) bool { return f.Name == wire.ExportFeed && f.Signature == "(i32) -> i32" }) ||
		!slices.ContainsFunc(r.Imports, func(f verify.Func) bool {
			return f.Module == wire.HostModule && f.Name == wire.ImportOutput && f.Problem == ""
		}) {
		t.Fatalf("functions: %+v %+v", r.Exports, r.Imports)
	}
	r, _ = rt.Verify(ctx, plugin(t, "fsread"))
	if (len(r.Problems) == 0) || !slices.ContainsFunc(r.Imports, func(f verify.Func) bool { return f.Name == "path_open" && strings.Contains(f.Problem, "file system") }) {
		t.Fatalf("fsread: %+v", r)
	}
	r, _ = rt.Verify(ctx, plugin(t, "abiv2"))
	if (len(r.Problems) == 0) || r.ABIVersion != "2.0" || !strings.Contains(r.Problems[0], "major version 2") {
		t.Fatalf("abiv2: %+v", r)
	}
	r, _ = rt.Verify(ctx, []byte("junk"))
	if (len(r.Problems) == 0) || !strings.Contains(r.Problems[0], "not a valid WebAssembly module") {
		t.Fatalf("junk: %+v", r)
	}
	trap := wasmModule(nil, replace(goodExports(), wire.ExportInitialize, wfn{name: wire.ExportInitialize, trap: true}), true)
	if r, _ = rt.Verify(ctx, trap); (len(r.Problems) == 0) || !strings.Contains(r.Problems[0], "instantiation failed") {
		t.Fatalf("trap: %+v", r)
	}
	// A manifest-less module fails at the manifest.
	if r, _ = rt.Verify(ctx, wasmModule(nil, goodExports(), true)); (len(r.Problems) == 0) || !strings.Contains(r.Problems[0], "manifest") {
		t.Fatalf("no manifest: %+v", r)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := rt.Verify(cctx, trap); err == nil {
		t.Fatal("a cancelled Verify did not fail")
	}
}

// A plugin that fails to load (here an initializer that never returns,
// stopped at its time limit) is remembered by its sha256: later runs skip
// it at once with one warning saying why, until the file changes. A load
// the caller cancelled is not the plugin's fault and is not remembered.
func TestFailedLoadIsRemembered(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "initloop.wasm", plugin(t, "initloop"))
	// The test's own manifest cache (the failure record is the test's,
	// not shared with another test run at the same time), with the
	// shared compiled code (compiling a Go module anew for each runtime
	// takes minutes under -race).
	cfg := set(testOptions(), func(o *Options) { o.PluginPath = []string{dir}; o.CacheDir = emptyCache(t) })
	cfg.initTimeout = 300 * time.Millisecond
	ctx := context.Background()

	// Cancelled: not remembered.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	rt, err := New(cctx, cfg)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	rt.Close(ctx)

	h := &captureHandler{}
	rt = newRuntime(t, set(cfg, func(o *Options) { o.Logger = slogNew(h) }))
	if l := rt.List(ctx); len(l) != 1 || !errors.Is(l[0].Err, errTimeout) {
		t.Fatalf("first run: %+v", l)
	}
	if h.count("plugin not loaded") != 1 {
		t.Fatalf("first run, messages %q", h.msgs)
	}

	// The next runs skip it without running it (a run would end in
	// errTimeout again, not in failedBeforeError). No timing is asserted:
	// the outcome and the one message say it was not run.
	for range 2 {
		h := &captureHandler{}
		rt := newRuntime(t, set(cfg, func(o *Options) { o.Logger = slogNew(h) }))
		var fb *failedBeforeError
		l := rt.List(ctx)
		if len(l) != 1 || !errors.As(l[0].Err, &fb) || fb.Path != path || !strings.Contains(fb.Error(), "ran longer than") {
			t.Fatalf("later run: %+v", l)
		}
		if h.count("plugin skipped") != 1 || len(h.msgs) != 1 {
			t.Fatalf("later run, messages %q", h.msgs)
		}
	}

	// Higher limits, another chance.
	raised := set(cfg, func(o *Options) { o.CallTimeout = 2 * wire.DefaultCallTimeout })
	raised.initTimeout = 300 * time.Millisecond
	if l := newRuntime(t, raised).List(ctx); len(l) != 1 || !errors.Is(l[0].Err, errTimeout) {
		t.Fatalf("with a higher limit: %+v", l)
	}

	// Another file, another chance.
	writeFile(t, dir, "initloop.wasm", plugin(t, "echo"))
	rt = newRuntime(t, cfg)
	if _, err := rt.Lookup(ctx, "echo"); err != nil {
		t.Fatalf("the fixed file: %v", err)
	}
}
