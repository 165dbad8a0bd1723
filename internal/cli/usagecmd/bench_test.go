package usagecmd

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/benchtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

// The usage benchmarks share one storage of TWASM_BENCH_SESSIONS
// (default 10,000; make bench sets it) sessions made by
// viewstest.ClaudeSessions, spread over a year, written once in a
// temporary directory.
var (
	benchOnce sync.Once
	benchRoot string
	benchN    int
	benchErr  error
)

func benchStorage(b *testing.B) (string, int) {
	b.Helper()
	benchOnce.Do(func() {
		benchRoot, benchErr = os.MkdirTemp("", "twasm-usage-bench-")
		if benchErr != nil {
			return
		}
		benchN = viewstest.BenchSessions()
		viewstest.ClaudeSessions(b, benchRoot, benchN)
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
	cpu := benchtest.CPUTime()
	for range b.N {
		run()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/usage")
	if cpu := benchtest.CPUTime() - cpu; cpu > 0 {
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
