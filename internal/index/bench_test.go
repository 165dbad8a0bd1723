package index

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/transcript"
)

// The benchmarks share one synthetic archive of TWASM_BENCH_ARCHIVE_BYTES
// (default 64 MiB; make bench sets 1 GiB): runs of 256 KiB, each a
// run bracket, a step, and messages and tool calls made of words drawn
// from a vocabulary, plus one rare word per run.
var (
	archiveOnce sync.Once
	archiveRoot string
	archiveSize int64
	archiveErr  error
)

func archiveBytes() int64 {
	if v, err := strconv.ParseInt(os.Getenv("TWASM_BENCH_ARCHIVE_BYTES"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 64 << 20
}

var vocab = strings.Fields(`the a test build error failed passed file read write edit run command output
go python pytest npm cargo make docker git commit branch merge diff patch function method class struct
interface package module import return value string number list map slice channel context timeout retry
server client request response header body json yaml config env path directory permission denied missing
found cannot unexpected token syntax line column index database query table migration schema user admin`)

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
	}
	return b.String()
}

func writeArchive(dir string, size int64) (int64, error) {
	tdir := filepath.Join(dir, "transcripts")
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		return 0, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var total int64
	for run := 0; total < size; run++ {
		id := uuid.NewString()
		f, err := os.Create(filepath.Join(tdir, id+".jsonl"))
		if err != nil {
			return total, err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		seq := uint64(0)
		var n int64
		emit := func(ev *transcript.Event) error {
			seq++
			ev.Seq, ev.RunID = seq, id
			ev.Timestamp = base.Add(time.Duration(run)*time.Hour + time.Duration(seq)*time.Second)
			b, err := transcript.MarshalEvent(ev)
			if err != nil {
				return err
			}
			n += int64(len(b)) + 1
			w.Write(b)
			return w.WriteByte('\n')
		}
		emit(&transcript.Event{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "bench " + strconv.Itoa(run), Kind: transcript.KindWorkflow, Schema: transcript.Schema}})
		emit(&transcript.Event{Type: transcript.StepStarted, Path: "agent", Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}})
		rare := fmt.Sprintf("zq%dx", run)
		for i := 0; n < 256<<10; i++ {
			text := sentence(r, 60)
			if i == 7 {
				text += " " + rare
			}
			emit(&transcript.Event{Type: transcript.MessageAssistant, Path: "agent", Payload: &transcript.MessagePayload{Role: "assistant",
				Blocks: []transcript.Block{{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: sentence(r, 30)}, transcript.TextBlock(text)}}})
			in, _ := json.Marshal(map[string]string{"command": sentence(r, 6), "file_path": "src/" + vocab[r.IntN(len(vocab))] + ".go"})
			call := fmt.Sprintf("c%d", i)
			emit(&transcript.Event{Type: transcript.ToolCall, Path: "agent", Payload: &transcript.ToolPayload{Name: "Bash", CallID: call, Input: in, Fidelity: transcript.FidelityAgentEmitted}})
			emit(&transcript.Event{Type: transcript.ToolResult, Path: "agent", Payload: &transcript.ToolPayload{Name: "Bash", CallID: call, Output: sentence(r, 120), Status: "ok", Fidelity: transcript.FidelityAgentEmitted}})
		}
		emit(&transcript.Event{Type: transcript.StepCompleted, Path: "agent", Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: "ok"}})
		emit(&transcript.Event{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "bench", Kind: transcript.KindWorkflow, Status: "ok"}})
		if err := w.Flush(); err != nil {
			return total, err
		}
		if err := f.Close(); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// benchArchive builds the archive once per process. BenchmarkIndexBuild
// leaves its index in place; the search benchmarks build it when it is
// missing (indexed reports whether it was there).
func benchArchive(b *testing.B) (string, int64) {
	b.Helper()
	archiveOnce.Do(func() {
		archiveRoot, archiveErr = os.MkdirTemp("", "twasm-index-bench-")
		if archiveErr != nil {
			return
		}
		archiveSize, archiveErr = writeArchive(archiveRoot, archiveBytes())
	})
	if archiveErr != nil {
		b.Fatal(archiveErr)
	}
	return archiveRoot, archiveSize
}

// peakRSS resets the kernel's peak-RSS mark (clear_refs 5) and returns a
// function that reads it back in MiB (0 where /proc is missing).
func peakRSS() func() float64 {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return func() float64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
				return kb / 1024
			}
		}
		return 0
	}
}

// BenchmarkIndexBuild indexes the whole archive from nothing: MB/s of
// transcript read and peak RSS of the process while it does.
func BenchmarkIndexBuild(b *testing.B) {
	root, size := benchArchive(b)
	ctx := context.Background()
	var peak float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := Remove(root); err != nil {
			b.Fatal(err)
		}
		rss := peakRSS()
		b.StartTimer()
		ix, _, err := Open(ctx, root)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Update(ctx); err != nil {
			b.Fatal(err)
		}
		ix.Close()
		peak = max(peak, rss())
	}
	b.ReportMetric(float64(size)/(1<<20), "archive-MiB")
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	if peak > 0 {
		b.ReportMetric(peak, "peak-RSS-MiB")
	}
}

// BenchmarkIndexUnchanged is the check every search makes first: every
// transcript stat'ed against the index, nothing to read.
func BenchmarkIndexUnchanged(b *testing.B) {
	root, _ := benchArchive(b)
	ctx := context.Background()
	ix, _, err := Open(ctx, root)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Update(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st, err := ix.Update(ctx); err != nil || st.Indexed != 0 {
			b.Fatal(err, st)
		}
	}
}

// searchTerms are the queries both search benchmarks answer: a rare
// word (one run) and two common words together.
var searchTerms = []string{"zq3x", "migration denied"}

// BenchmarkSearchIndex answers the queries from the index (the update
// check included, as twasm search does).
func BenchmarkSearchIndex(b *testing.B) {
	root, _ := benchArchive(b)
	ctx := context.Background()
	ix, _, err := Open(ctx, root)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Update(ctx); err != nil { // built here unless BenchmarkIndexBuild ran
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Update(ctx); err != nil {
			b.Fatal(err)
		}
		for _, q := range searchTerms {
			hits, err := ix.Search(ctx, Query{Text: q, Limit: 20})
			if err != nil || len(hits) == 0 {
				b.Fatal(q, err, len(hits))
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "searches/s")
}

// BenchmarkSearchScan answers the same queries the way a tool without an
// index must: read every transcript, decode every line, look at every
// text (first 20 hits, as the index returns).
func BenchmarkSearchScan(b *testing.B) {
	root, _ := benchArchive(b)
	files, _ := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range searchTerms {
			words := strings.Fields(q)
			hits := 0
			for _, file := range files {
				f, err := os.Open(file)
				if err != nil {
					b.Fatal(err)
				}
				r := transcript.NewReader(f)
				for r.Next() {
					ev := r.Event()
					if ev == nil {
						continue
					}
					for _, t := range texts(ev) {
						all := true
						for _, w := range words {
							all = all && strings.Contains(t, w)
						}
						if all {
							hits++
						}
					}
				}
				f.Close()
			}
			if hits == 0 {
				b.Fatal("no hit for", q)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "searches/s")
}

func texts(ev *transcript.Event) []string {
	switch {
	case ev.Message() != nil:
		var out []string
		for _, bl := range ev.Message().Blocks {
			out = append(out, bl.Text, bl.Thinking, bl.Command, bl.Chunk)
		}
		return out
	case ev.Tool() != nil:
		t := ev.Tool()
		return []string{t.Name + " " + t.Command + " " + string(t.Input), t.Output + " " + t.Error}
	}
	return nil
}

// TestMain checks for leaked goroutines and removes the benchmarks'
// archive.
func TestMain(m *testing.M) {
	code := m.Run()
	if archiveRoot != "" {
		os.RemoveAll(archiveRoot)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
