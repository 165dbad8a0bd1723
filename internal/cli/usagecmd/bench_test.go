package usagecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// The usage benchmarks share one storage of TWASM_BENCH_SESSIONS
// (default 10,000; make bench sets it) sessions made by benchSession,
// spread over a year, written once in a temporary directory.
var (
	benchOnce sync.Once
	benchRoot string
	benchN    int
	benchErr  error
)

func benchSessions() int {
	if v, err := strconv.Atoi(os.Getenv("TWASM_BENCH_SESSIONS")); err == nil && v > 0 {
		return v
	}
	return 10000
}

// benchSession is a Claude Code session as the claude plugin archives
// it: a prompt, 20 assistant messages (a sonnet or an opus model), each
// with the usage of one API request, an agent step whose usage is their
// sum; every tenth session has a sub-agent's run of 5 haiku messages.
func benchSession(tb testing.TB, dir string, i int, at time.Time) {
	id, sub := viewstest.RunID(2*i+1), viewstest.RunID(2*i+2)
	model := []string{"claude-sonnet-4-5-20250929", "claude-opus-4-6"}[i%2]
	b := viewstest.NewBuilder(id, "")
	add := func(b *viewstest.Builder, ev *transcript.Event) {
		ev.Timestamp = at
		b.Add(ev)
		at = at.Add(20 * time.Second)
	}
	add(b, viewstest.Started("claude session"))
	add(b, viewstest.Step(transcript.StepStarted, "session", 0, &transcript.StepPayload{Name: "session", Kind: transcript.KindAgent}))
	add(b, viewstest.Msg(transcript.MessageUser, "session", transcript.TextBlock(fmt.Sprintf("fix test %d", i))))
	var sum transcript.Usage
	for j := range 20 {
		u := &transcript.Usage{UncachedInputTokens: new(int64(100 + j)), CacheReadTokens: new(int64(20000 + 1000*j)),
			CacheWriteTokens: new(int64(500)), OutputTokens: new(int64(300 + j))}
		sum.Add(u)
		add(b, &transcript.Event{Type: transcript.MessageAssistant, Path: "session", Payload: &transcript.MessagePayload{Role: "assistant", Model: model,
			Usage: u, Blocks: []transcript.Block{transcript.TextBlock("done, the tests pass now")}}})
	}
	add(b, viewstest.AgentDone(tb, "session", &transcript.AgentResult{Provider: "claude", Model: model, Status: "ok", Usage: &sum}))
	if i%10 == 0 {
		add(b, &transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "subagent", ChildRunID: sub,
			Payload: &transcript.StepPayload{Name: "subagent", Kind: transcript.KindCallWorkflow}})
		c := viewstest.NewBuilder(sub, id)
		add(c, viewstest.Started("sub-agent"))
		for range 5 {
			add(c, &transcript.Event{Type: transcript.MessageAssistant, Path: "task", Payload: &transcript.MessagePayload{Role: "assistant",
				Model: "claude-haiku-4-5-20251001", Usage: &transcript.Usage{UncachedInputTokens: new(int64(2000)), OutputTokens: new(int64(200))},
				Blocks: []transcript.Block{transcript.TextBlock("found it")}}})
		}
		viewstest.WriteFile(tb, filepath.Join(dir, sub+".jsonl"), c.Bytes(tb))
	}
	viewstest.WriteFile(tb, filepath.Join(dir, id+".jsonl"), b.Bytes(tb))
}

func benchStorage(b *testing.B) (string, int) {
	b.Helper()
	benchOnce.Do(func() {
		benchRoot, benchErr = os.MkdirTemp("", "twasm-usage-bench-")
		if benchErr != nil {
			return
		}
		dir := filepath.Join(benchRoot, "transcripts")
		if benchErr = os.MkdirAll(dir, 0o700); benchErr != nil {
			return
		}
		benchN = benchSessions()
		t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
		for i := range benchN {
			benchSession(b, dir, i, t0.Add(time.Duration(i)*365*24*time.Hour/time.Duration(benchN)))
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRoot, benchN
}

func benchUsage(b *testing.B, index bool) {
	root, n := benchStorage(b)
	f := &cmdutil.Factory{Getenv: func(string) string { return "" }, StorageFlag: root}
	run := func() {
		ios, _, _, _ := iostreams.Test()
		f.IOStreams = ios
		o := &Options{IO: ios, List: f.ListRuns, Usage: f.UsageSource(), ModTime: f.FileModTime}
		if !index {
			o.Usage.Ledgers = nil
		}
		o.Report.By = "day"
		if err := runUsage(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	if index {
		run() // the index built and every ledger stored: what any later usage finds
	}
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		run()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/usage")
	if cpu := cpuTime() - cpu; cpu > 0 {
		// on a busy machine the wall clock counts the others' work too
		b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/usage")
	}
	b.ReportMetric(float64(n), "sessions")
}

// BenchmarkUsageIndex is `twasm usage` by day over the sessions from the
// index (brought up to date from the change journal: nothing to read or
// stat), the report printed.
func BenchmarkUsageIndex(b *testing.B) { benchUsage(b, true) }

// BenchmarkUsageScan is the same report made by reading every transcript.
func BenchmarkUsageScan(b *testing.B) { benchUsage(b, false) }

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}
