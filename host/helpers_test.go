package host

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/internal/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// returns runs call, which returns only once the host has stopped the
// guest, and returns its error. A guest that is never stopped fails the
// test when the test nears its own deadline (go test -timeout), after two
// minutes at most: a bound no load on the machine reaches for a call
// stopped late, since tests assert that a guest is stopped and how, never
// how soon (BenchmarkStopLatency measures that).
func returns(t *testing.T, what string, call func() error) error {
	t.Helper()
	bound := 2 * time.Minute
	if dl, ok := t.Deadline(); ok {
		bound = min(bound, time.Until(dl)-5*time.Second)
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		t.Fatalf("%s: not stopped after %v", what, bound)
		return nil
	}
}

// hangBound is the call time limit of a test whose fault or result is not
// the time limit: far beyond what any call that ends takes under the race
// detector on a busy machine, it only stops a guest that would never
// return.
const hangBound = 10 * time.Minute

var (
	wasmMu    sync.Mutex
	wasmCache = map[string][]byte{}
)

// plugin returns the module built from a test plugin's source: "echo" is
// the SDK's example, the others live in testdata.
func plugin(t testing.TB, name string) []byte {
	t.Helper()
	wasmMu.Lock()
	defer wasmMu.Unlock()
	if b, ok := wasmCache[name]; ok {
		return b
	}
	dir := filepath.Join("testdata", name)
	if name == "echo" {
		dir = filepath.Join("..", "abi", "sdk", "testdata", "echo")
	}
	b := wasmbuild.ForTest(t, dir)
	wasmCache[name] = b
	return b
}

// testOptions isolates a test from the machine's plugins and caches
// compiled code next to the test builds.
func testOptions() Options {
	return Options{
		Bundled:    []Bundled{},
		PluginPath: []string{},
		CacheDir:   filepath.Join(wasmbuild.TestCacheDir(), "wazero"),
		Logger:     slog.New(slog.DiscardHandler),
	}
}

// emptyCache returns a new cache directory for a test that needs the
// manifest cache empty (or its own): its manifests/ is new, while
// wazero's directory of compiled code in it is a link to the one in
// testOptions' shared cache. Compiled code is keyed by the bytes compiled,
// wazero's version and the CPU, so sharing it changes nothing a test of
// the manifest cache checks, and saves compiling each Go-built module
// anew (some 15 CPU-seconds each under -race).
func emptyCache(t testing.TB) string {
	t.Helper()
	shared := testOptions().CacheDir
	c, err := wazero.NewCompilationCacheWithDir(shared) // makes wazero's versioned directory
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	compiled, err := filepath.Glob(filepath.Join(shared, "wazero-*"))
	if err != nil || len(compiled) == 0 {
		t.Fatalf("no compiled code directory in %s: %v", shared, err)
	}
	dir := t.TempDir()
	for _, d := range compiled {
		if err := os.Symlink(d, filepath.Join(dir, filepath.Base(d))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// set returns o changed by f: a test's variant of a base.
func set(o Options, f func(*Options)) Options {
	f(&o)
	return o
}

// bundledBytes makes bundled plugins of module bytes, by file name, with
// no recorded manifests.
func bundledBytes(files map[string][]byte) []Bundled {
	ps := make([]Bundled, 0, len(files))
	for _, name := range slices.Sorted(maps.Keys(files)) {
		b := files[name]
		ps = append(ps, Bundled{File: name, Wasm: func() ([]byte, error) { return b, nil }})
	}
	return ps
}

func newRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	rt, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func load(t testing.TB, rt *Runtime, name string, bundled bool) *Plugin {
	t.Helper()
	p, err := rt.Load(context.Background(), plugin(t, name), Source{Path: name + ".wasm", Bundled: bundled})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// batch encodes lines into a batch, with tapes, numbered from first.
func batch(first int, lines ...string) []byte {
	b := wire.AppendBatchHeader(nil, len(lines))
	var toks []wire.Token
	for i, l := range lines {
		toks, _ = wire.BuildTape(toks[:0], []byte(l))
		b = wire.AppendBatchLine(b, first+i, []byte(l), toks)
	}
	return b
}

// texts decodes records and returns a compact description of each:
// "warning:TEXT" for warnings, the op number otherwise; span texts are
// resolved against input.
func texts(t testing.TB, records, input []byte) []string {
	t.Helper()
	var out []string
	d := wire.NewDecoder(records)
	for {
		r, err := d.Next()
		if err != nil {
			t.Fatalf("records do not decode: %v", err)
		}
		if r == nil {
			return out
		}
		switch r.Op {
		case wire.OpWarning:
			f, _ := r.Field(wire.TText)
			out = append(out, "warning:"+short(f.Bytes))
		case wire.OpBlock:
			f, _ := r.Field(wire.TText)
			v := f.Bytes
			if f.Kind == wire.VSpan {
				v = input[f.Off : f.Off+f.N]
			}
			out = append(out, "block:"+short(v))
		default:
			out = append(out, fmt.Sprintf("op%d", r.Op))
		}
	}
}

// short keeps failure messages readable when a record is huge.
func short(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%s...(%d bytes)", b[:40], len(b))
	}
	return string(b)
}

// captureHandler is a slog handler that keeps the messages.
type captureHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Message)
	h.mu.Unlock()
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

func (h *captureHandler) count(sub string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if bytes.Contains([]byte(m), []byte(sub)) {
			n++
		}
	}
	return n
}

func slogNew(h slog.Handler) *slog.Logger { return slog.New(h) }
