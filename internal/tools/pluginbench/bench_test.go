package pluginbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/natives"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/transcript"
)

// corpusBytes is the size each corpus is repeated to: large enough that
// one pass takes about a second natively.
const corpusBytes = 16 << 20

// plugins are the bundled plugins (natives.Plugins: every one, so a
// plugin added to plugins/ is measured without a line here).
var plugins = func() (out []struct {
	name string
	p    sdk.Plugin
}) {
	for _, n := range natives.Plugins() {
		out = append(out, struct {
			name string
			p    sdk.Plugin
		}{n.Name, n.Plugin})
	}
	return out
}()

// corpus concatenates the line-oriented golden inputs of a provider (and,
// for AWF's comparison, the shared capture AWF was measured on) and
// repeats them to corpusBytes. Each copy is normalized as a stream of
// its own (copies): the same bytes fed again in one stream are a replay,
// which a plugin that knows its records' ids (copilot, qwen, droid, amp)
// skips whole and most others in part, so that a corpus normalized as one
// stream measured those plugins on work they skip.
func corpus(tb testing.TB, files []string) corpusData {
	tb.Helper()
	one := concat(tb, files)
	out := make([]byte, 0, corpusBytes+len(one))
	for len(out) < corpusBytes {
		out = append(out, one...)
	}
	return corpusData{data: out, copy: len(one)}
}

// corpusData is a corpus: copies of the same inputs, one after the other.
type corpusData struct {
	data []byte // every copy
	copy int    // the length of one
}

// copies are the corpus's copies, each a stream's input.
func (c corpusData) copies() [][]byte {
	var out [][]byte
	for off := 0; off < len(c.data); off += c.copy {
		out = append(out, c.data[off:min(off+c.copy, len(c.data))])
	}
	return out
}

// concat is the files one after the other, each ending with a newline.
func concat(tb testing.TB, files []string) []byte {
	tb.Helper()
	var one bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		one.Write(bytes.TrimRight(b, "\n"))
		one.WriteByte('\n')
	}
	if one.Len() == 0 {
		tb.Skip("no corpus files")
	}
	return one.Bytes()
}

func goldenInputs(tb testing.TB, provider string) []string {
	// The inputs as the golden check reads them (golden.Cases: no
	// expectation, .fault file or README), the JSON Lines ones and
	// Aider's chat histories.
	cases, _ := golden.Cases(filepath.Join("..", "..", "..", "testdata", "golden", provider))
	var out []string
	for _, c := range cases {
		if ext := filepath.Ext(c.Input); ext == ".jsonl" || ext == ".md" {
			out = append(out, c.Input)
		}
	}
	sort.Strings(out)
	return out
}

// awfCorpus is the capture AWF's normalizer was measured on
// (awf-baseline.md), when ../shared is there; else our Claude inputs.
func awfCorpus(tb testing.TB) corpusData {
	f := filepath.Join("..", "..", "..", "..", "shared", "fixtures", "claude", "switchboard_stream_json_tool_vocabulary.jsonl")
	if _, err := os.Stat(f); err == nil {
		return corpus(tb, []string{f})
	}
	return corpus(tb, goldenInputs(tb, "claude"))
}

type countSink struct{ events, blocks int }

func (s *countSink) Emit(_ context.Context, _ string, evs []*transcript.Event) error {
	for _, ev := range evs {
		s.events++
		if m := ev.Message(); m != nil {
			s.blocks += len(m.Blocks)
		}
	}
	return nil
}
func (s *countSink) OpenScope(context.Context, normalize.Scope) error         { return nil }
func (s *countSink) CloseScope(context.Context, string, string, string) error { return nil }

var (
	hostOnce sync.Once
	hostRT   *host.Runtime
	hostErr  error
	loaded   = map[string]*host.Plugin{}
	loadMu   sync.Mutex
)

// toolchain is the compiler of the measured modules: the bundled plugins'
// (TinyGo, found as the Makefile finds it) unless $WASM_TOOLCHAIN is "go"
// or TinyGo is not installed. The first call logs which.
func toolchain(tb testing.TB) wasmbuild.Toolchain {
	tb.Helper()
	toolchainOnce.Do(func() {
		if os.Getenv("WASM_TOOLCHAIN") != "go" {
			wasmToolchain, _ = wasmbuild.FindTinyGo(context.Background(), ".")
		}
		// Printed, not logged: benchreport reads it from the output.
		fmt.Printf("wasm toolchain: %s %s\n", wasmToolchain.Name(), strings.Join(wasmToolchain.Flags, " "))
	})
	return wasmToolchain
}

var (
	toolchainOnce sync.Once
	wasmToolchain wasmbuild.Toolchain
)

// wasmInstance is a host plugin's instance as the benchmarks use it.
type wasmInstance interface {
	normalize.KeyedInstance
	Close(ctx context.Context) error
	MemorySize() uint32
}

// newInstance takes an instance of p; the caller closes it.
func newInstance(tb testing.TB, p *host.Plugin) wasmInstance {
	tb.Helper()
	in, err := p.NewInstance(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return in.(wasmInstance)
}

// wasmPlugin builds (cached) and loads a plugin as bundled (trusted, no
// timeout) or external (sandboxed, per-call timeout).
func wasmPlugin(b testing.TB, name string, sandboxed bool) *host.Plugin {
	b.Helper()
	hostOnce.Do(func() {
		hostRT, hostErr = host.New(context.Background(), host.Options{
			Bundled: []host.Bundled{}, PluginPath: []string{},
			// Every instance seeded alike: a guest's map order, and so
			// the memory TestPluginMemoryFlat checks, is then the same
			// on every run. With crypto/rand, cursor's TinyGo heap grew
			// from 1 to 2 MiB before the warm-up's end in 29 runs of 30,
			// never in one, and after it now and then: a failure by
			// chance.
			RandSource: func() io.Reader { return rand.NewChaCha8([32]byte{}) },
		})
	})
	if hostErr != nil {
		b.Fatal(hostErr)
	}
	key := name
	if sandboxed {
		key += "/sandboxed"
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if p := loaded[key]; p != nil {
		return p
	}
	wasm := moduleOf(b, name)
	p, err := hostRT.Load(context.Background(), wasm, host.Source{Path: key + ".wasm", Bundled: !sandboxed})
	if err != nil {
		b.Fatal(err)
	}
	loaded[key] = p
	return p
}

// moduleOf is the module of the named plugin: built as the bundled one
// is (cached), or, when $TWASM_BENCH_WASM names a directory, the
// <name>.wasm in it, so that another build of the same plugin (other
// flags, an optimizer run over it) is measured by the same code, A/B.
func moduleOf(tb testing.TB, name string) []byte {
	tb.Helper()
	if dir := os.Getenv("TWASM_BENCH_WASM"); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	return toolchain(tb).ForTest(tb, filepath.Join("..", "..", "..", "plugins", name, "wasm"))
}

// run normalizes the corpus b.N times, each time on a new instance, each
// copy a stream of its own on it (a session after another, as sync feeds
// a warm instance).
func run(b *testing.B, c corpusData, newInst func() normalize.Instance) {
	b.Helper()
	b.SetBytes(int64(len(c.data)))
	lines := bytes.Count(c.data, []byte("\n"))
	copies := c.copies()
	ctx := context.Background()
	b.ResetTimer()
	start := cpuTime()
	var sink countSink
	for i := 0; i < b.N; i++ {
		inst := newInst()
		for _, one := range copies {
			if err := stream(ctx, inst, one, &sink); err != nil {
				b.Fatal(err)
			}
		}
		if c, ok := inst.(interface{ Close(context.Context) error }); ok {
			_ = c.Close(ctx)
		}
	}
	b.StopTimer()
	reportCPU(b, start, int64(len(c.data)))
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(sink.events)/float64(b.N), "events/op")
}

// stream normalizes data as one stream on inst, fed in one batch of
// bytes (normalize.Run's reads are 256 KiB; a copy of the inputs is
// less), without Run's buffer for each.
func stream(ctx context.Context, inst normalize.Instance, data []byte, sink normalize.Sink) error {
	s, err := normalize.NewStream(ctx, inst, sink, normalize.Options{Provider: "bench"})
	if err != nil {
		return err
	}
	for len(data) > 0 {
		n := min(len(data), 256<<10)
		if err := s.Feed(ctx, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	res, err := s.Close(ctx)
	if err != nil {
		return err
	}
	if res.FailedLines > 0 {
		return fmt.Errorf("%d lines failed: %v", res.FailedLines, res.Warnings)
	}
	return nil
}

// BenchmarkNormalize runs each plugin natively, through wasm (trusted) and
// through wasm with the external-plugin sandbox (per-call timeouts).
func BenchmarkNormalize(b *testing.B) {
	for _, pl := range plugins {
		data := corpus(b, goldenInputs(b, pl.name))
		b.Run(pl.name+"/native", func(b *testing.B) {
			run(b, data, func() normalize.Instance { return normalize.NativeInstance(pl.p) })
		})
		for _, sandboxed := range []bool{false, true} {
			mode := "wasm"
			if sandboxed {
				mode = "sandboxed"
			}
			b.Run(pl.name+"/"+mode, func(b *testing.B) {
				p := wasmPlugin(b, pl.name, sandboxed)
				run(b, data, func() normalize.Instance {
					in, err := p.NewInstance(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					return in
				})
			})
		}
	}
}

// BenchmarkAWF compares, on the capture AWF was measured on, the claude
// plugin in the sandbox with an AWF-style normalizer: encoding/json into
// structs, one line at a time, keeping only assistant content blocks (the
// part of the job AWF did).
func BenchmarkAWF(b *testing.B) {
	c := awfCorpus(b)
	data := c.data
	b.Run("awf-style/native", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		blocks := 0
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			blocks += awfStyle(data)
		}
		reportCPU(b, start, int64(len(data)))
		b.ReportMetric(float64(blocks)/float64(b.N), "blocks/op")
	})
	b.Run("claude/sandboxed", func(b *testing.B) {
		p := wasmPlugin(b, "claude", true)
		run(b, c, func() normalize.Instance {
			in, err := p.NewInstance(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			return in
		})
	})
}

type awfLine struct {
	Type    string `json:"type"`
	Message struct {
		Content []struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Thinking string          `json:"thinking"`
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
}

type awfBlock struct {
	Type, Text, ToolName, ToolID string
	ToolInput                    json.RawMessage
}

func awfStyle(data []byte) int {
	var out []awfBlock
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var l awfLine
		if json.Unmarshal(line, &l) != nil || l.Type != "assistant" {
			continue
		}
		for _, c := range l.Message.Content {
			switch c.Type {
			case "text":
				if c.Text != "" {
					out = append(out, awfBlock{Type: "text", Text: c.Text})
				}
			case "thinking":
				out = append(out, awfBlock{Type: "thinking", Text: c.Thinking})
			case "tool_use":
				out = append(out, awfBlock{Type: "tool_use", ToolName: c.Name, ToolID: c.ID, ToolInput: c.Input})
			}
		}
	}
	return len(out)
}

// TestCorpusCopiesNotReplayed: normalized as run feeds it, each copy of
// a plugin's corpus gives what the first gives (no copy skipped as a
// replay of the one before), and the copies are the corpus.
func TestCorpusCopiesNotReplayed(t *testing.T) {
	ctx := context.Background()
	for _, pl := range plugins {
		t.Run(pl.name, func(t *testing.T) {
			c := corpus(t, goldenInputs(t, pl.name))
			copies := c.copies()
			if len(copies) < 2 || !bytes.Equal(bytes.Join(copies, nil), c.data) {
				t.Fatalf("%d copies of %d bytes do not make the %d-byte corpus", len(copies), c.copy, len(c.data))
			}
			inst := normalize.NativeInstance(pl.p)
			var one, three countSink
			if err := stream(ctx, inst, copies[0], &one); err != nil {
				t.Fatal(err)
			}
			for _, cp := range copies[:3] {
				if err := stream(ctx, inst, cp, &three); err != nil {
					t.Fatal(err)
				}
			}
			if one.events == 0 || three.events != 3*one.events || three.blocks != 3*one.blocks {
				t.Errorf("three copies gave %d events, %d blocks; one gave %d, %d", three.events, three.blocks, one.events, one.blocks)
			}
		})
	}
}

// TestModuleOfOverride: with TWASM_BENCH_WASM set, the module measured is
// the file in that directory, not a build.
func TestModuleOfOverride(t *testing.T) {
	dir := t.TempDir()
	want := []byte("\x00asm\x01\x00\x00\x00other build")
	if err := os.WriteFile(filepath.Join(dir, "claude.wasm"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TWASM_BENCH_WASM", dir)
	if got := moduleOf(t, "claude"); !bytes.Equal(got, want) {
		t.Fatalf("moduleOf = %q, want %q", got, want)
	}
}
