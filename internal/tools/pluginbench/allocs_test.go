package pluginbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/normalize"
)

// TestAllocsPerLine is a profiling aid, skipped unless TWASM_ALLOCS names
// a plugin: it feeds the plugin's golden inputs (after one warm-up pass)
// through its wasm module, with a wazero listener on the guest's
// runtime.alloc (TinyGo's allocator; standard Go's guest has no such
// function and counts nothing), and prints the allocations per line by
// calling site: the innermost frames outside the runtime
// (TWASM_ALLOCS_DEPTH of them, default 3), with the runtime function
// that allocated ("[runtime.stringConcat]") when it is not alloc itself.
// Allocation is what a TinyGo guest spends its time on, so these counts
// say where a plugin's guest time goes. It asserts nothing.
// TWASM_BENCH_WASM=DIR counts DIR/<plugin>.wasm instead (moduleOf): the
// counts of two builds, A/B.
//
//	TWASM_ALLOCS=codex go test -run TestAllocsPerLine -v ./internal/tools/pluginbench
func TestAllocsPerLine(t *testing.T) {
	name := os.Getenv("TWASM_ALLOCS")
	if name == "" {
		t.Skip("TWASM_ALLOCS names the plugin to profile")
	}
	depth := 3
	if d := os.Getenv("TWASM_ALLOCS_DEPTH"); d != "" {
		if _, err := fmt.Sscan(d, &depth); err != nil || depth < 1 {
			t.Fatalf("TWASM_ALLOCS_DEPTH=%q: want a positive count", d)
		}
	}
	counts, sizes, total, lines := guestAllocs(t, name, depth)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	fmt.Printf("%s: %d lines, %d allocations (%.2f per line)\n", name, lines, total, float64(total)/float64(lines))
	for i, k := range keys {
		if i == 40 {
			break
		}
		fmt.Printf("%8.3f/line %6d B/alloc  %s\n", float64(counts[k])/float64(lines), sizes[k]/counts[k], k)
	}
}

// guestAllocs feeds the plugin's golden inputs through its TinyGo module
// twice (the first pass warms up) and counts the second pass's calls of
// runtime.alloc by calling site (depth frames outside the runtime): the
// counts and bytes by site, their total, and the lines fed.
func guestAllocs(t *testing.T, name string, depth int) (counts, sizes map[string]int, total, lines int) {
	t.Helper()
	counts, sizes = map[string]int{}, map[string]int{}
	record := func(_ context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, si experimental.StackIterator) {
		var frames []string
		inner := ""
		for si.Next() {
			fn := si.Function().Definition().DebugName()
			if len(frames) == 0 && strings.Contains(fn, "runtime.") {
				if !strings.HasSuffix(fn, "runtime.alloc") {
					inner = strings.TrimPrefix(fn, "main.")
				}
				continue
			}
			frames = append(frames, strings.ReplaceAll(strings.ReplaceAll(fn, "github.com/twasm/twasm/", ""), "main.", ""))
			if len(frames) == depth {
				break
			}
		}
		k := strings.Join(frames, " < ")
		if inner != "" {
			k = "[" + inner + "] " + k
		}
		counts[k]++
		sizes[k] += int(uint32(params[0]))
		total++
	}
	factory := experimental.FunctionListenerFactoryFunc(func(def api.FunctionDefinition) experimental.FunctionListener {
		if strings.HasSuffix(def.DebugName(), "runtime.alloc") {
			return experimental.FunctionListenerFunc(record)
		}
		return nil
	})
	// The listener is set at compilation: a runtime of its own, without
	// the compilation cache (a cached module would come without it).
	ctx := experimental.WithFunctionListenerFactory(context.Background(), factory)
	rt, err := host.New(ctx, host.Options{Bundled: []host.Bundled{}, PluginPath: []string{}, NoDiskCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	wasm := moduleOf(t, name)
	p, err := rt.Load(ctx, wasm, host.Source{Path: name + "-allocs.wasm", Bundled: true})
	if err != nil {
		t.Fatal(err)
	}
	data := concat(t, goldenInputs(t, name))
	in, err := p.NewInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sink countSink
	for pass := 0; pass < 2; pass++ { // the first pass warms up
		clear(counts)
		clear(sizes)
		total = 0
		if _, err := normalize.Run(ctx, in, bytes.NewReader(data), &sink, normalize.Options{Provider: name}); err != nil {
			t.Fatal(err)
		}
	}
	return counts, sizes, total, bytes.Count(data, []byte("\n"))
}

// TestGuestAllocsBound bounds the allocations per line of plugins' TinyGo
// guests on their golden inputs (after a warm-up pass), where a hot path
// was cut down: TinyGo's allocator and collector are far slower than Go's,
// so an allocation put back on such a path costs the wasm build most.
// The counts are the guest's calls of runtime.alloc (guestAllocs); a
// bound sits a little above the count it was set at, which the comment
// beside it gives with the count before the cut.
func TestGuestAllocsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs plugins' TinyGo modules")
	}
	if toolchain(t).Name() != "tinygo" {
		t.Skip("counts TinyGo's runtime.alloc: TinyGo is not installed, or WASM_TOOLCHAIN=go")
	}
	for _, tc := range []struct {
		plugin  string
		perLine float64
	}{
		// 5.83 a line; 10.21 before abi.Iter was declared outside the
		// loops (a for statement's variable is a new one on every
		// iteration, which TinyGo allocates), appendQuoted appended
		// utf8.AppendRune instead of string(r), and sdk.ParseText
		// copied a string's text once; 6.90 before apiHistory wrote a
		// message's key into a buffer it reuses (two to four
		// allocations a message), assistantText and the facts line
		// read views of the line, and uiKind returned a constant for
		// the asks it knows.
		{"cline", 6.3},
		// 1.32 a line; 3.62 before Line read a view of the line (a
		// copy of every line), copying only what it keeps, and quote
		// allocated once.
		{"aider", 1.5},
		// 5.84 a line; 6.20 before a bubble's createdAt was read by
		// utcMillis instead of time.Parse and Format.
		{"cursor", 6.0},
		// 2.31 a line; 2.48 before the replayed records' hashes were
		// an sdk.HashSet instead of a map[uint64]bool (its growth).
		{"qwen", 2.4},
		// 2.44 a line; 2.76 before a saying's type was appended
		// (AppendText) instead of copied into a string first.
		{"gemini", 2.6},
	} {
		t.Run(tc.plugin, func(t *testing.T) {
			_, _, total, lines := guestAllocs(t, tc.plugin, 1)
			if got := float64(total) / float64(lines); got > tc.perLine {
				t.Errorf("%s: %d allocations over %d lines, %.2f a line: want at most %.2f (TWASM_ALLOCS=%s go test -run TestAllocsPerLine -v ./internal/tools/pluginbench says where)", tc.plugin, total, lines, got, tc.perLine, tc.plugin)
			}
		})
	}
}
