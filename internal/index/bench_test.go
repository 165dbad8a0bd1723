package index

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The benchmarks share one archive of TWASM_BENCH_ARCHIVE_BYTES (default
// 64 MiB; make bench sets 1 GiB) built by buildArchive: the project's
// golden inputs and captures recorded through the native plugins, then
// replicated with fresh run ids and earlier times. It lives in a
// temporary directory removed at the end, or in TWASM_BENCH_ARCHIVE_DIR
// when set (built there once and kept, to profile one part repeatedly).
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

// benchArchive builds the archive once per process (removed by
// TestMain). BenchmarkIndexBuild leaves its index in place; the others
// build it when it is missing.
func benchArchive(b *testing.B) (string, int64) {
	b.Helper()
	archiveOnce.Do(func() {
		if dir := os.Getenv("TWASM_BENCH_ARCHIVE_DIR"); dir != "" {
			archiveSize, archiveErr = keptArchive(dir)
			return
		}
		archiveRoot, archiveErr = os.MkdirTemp("", "twasm-index-bench-")
		if archiveErr != nil {
			return
		}
		archiveSize, archiveErr = buildArchive(context.Background(), archiveRoot, archiveBytes())
	})
	if archiveErr != nil {
		b.Fatal(archiveErr)
	}
	if dir := os.Getenv("TWASM_BENCH_ARCHIVE_DIR"); dir != "" {
		return dir, archiveSize
	}
	return archiveRoot, archiveSize
}

// keptArchive is the archive in dir (TWASM_BENCH_ARCHIVE_DIR, for
// profiling one part again and again): built there when it has no
// transcripts, kept afterwards.
func keptArchive(dir string) (int64, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "transcripts", "*.jsonl"))
	if len(files) == 0 {
		return buildArchive(context.Background(), dir, archiveBytes())
	}
	var n int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n, nil
}

// childEnv names the storage root TestIndexChild indexes.
const childEnv = "TWASM_BENCH_INDEX_CHILD"

// TestIndexChild is BenchmarkIndexBuild's child process: it builds the
// index of the storage root named by TWASM_BENCH_INDEX_CHILD, as `twasm
// search` does on a storage without one. Skipped otherwise.
func TestIndexChild(t *testing.T) {
	root := os.Getenv(childEnv)
	if root == "" {
		t.Skip("the child of BenchmarkIndexBuild")
	}
	ctx := context.Background()
	ix, _, err := Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("indexed %d runs, %d documents, %d lines skipped\n", st.Indexed, st.Docs, st.Skipped)
}

// BenchmarkIndexBuild indexes the whole archive from nothing in a child
// process (this test binary running TestIndexChild): MB/s of transcript
// read per wall-clock and per CPU second of the child, and its peak RSS
// (rusage).
func BenchmarkIndexBuild(b *testing.B) {
	root, size := benchArchive(b)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var peak float64
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := Remove(root); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cmd := exec.Command(exe, "-test.run=^TestIndexChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+root)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		peak = max(peak, childMaxRSS(cmd.ProcessState))
	}
	b.ReportMetric(float64(size)/(1<<20), "archive-MiB")
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*(1<<30)/float64(size), "s/GiB")
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpuMB/s")
	}
	if peak > 0 {
		b.ReportMetric(peak/(1<<20), "peak-RSS-MiB")
	}
}

// BenchmarkIndexUnchanged is the check every search makes first: every
// transcript stat'ed against the index, nothing to read.
func BenchmarkIndexUnchanged(b *testing.B) {
	ctx := context.Background()
	ix := openBenchIndex(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st, err := ix.Update(ctx); err != nil || st.Indexed != 0 {
			b.Fatal(err, st)
		}
	}
}

// BenchmarkSearchIndex answers benchQueries from the index, 20 hits each
// as twasm search shows, the check against the files included.
func BenchmarkSearchIndex(b *testing.B) {
	ctx := context.Background()
	ix := openBenchIndex(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Update(ctx); err != nil {
			b.Fatal(err)
		}
		for _, q := range benchQueries {
			q.Limit = 20
			hits, err := ix.Search(ctx, q)
			if err != nil || len(hits) == 0 {
				b.Fatal(q, err, len(hits))
			}
		}
	}
	b.ReportMetric(float64(b.N*len(benchQueries))/b.Elapsed().Seconds(), "searches/s")
}

// BenchmarkListPage is serve's listing: the first page of 50 runs
// newest first, the same page filtered by provider, and the filters'
// values (Facets), the check against the files included.
func BenchmarkListPage(b *testing.B) {
	ctx := context.Background()
	ix := openBenchIndex(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Update(ctx); err != nil {
			b.Fatal(err)
		}
		for _, q := range []ListQuery{{Limit: 50}, {Provider: "claude", Limit: 50}} {
			if runs, _, err := ix.List(ctx, q); err != nil || len(runs) == 0 {
				b.Fatal(q, err, len(runs))
			}
		}
		if _, err := ix.Facets(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchScan answers the same queries by reading every
// transcript (scanSearchAll; TestSearchAgreesWithScan checks its hits are
// the index's). One pass over the files answers all the queries: a scan
// that asked one query a pass, as a user does, would be as many times
// slower, so the ratio with the index is understated, not flattered.
func BenchmarkSearchScan(b *testing.B) {
	root, _ := benchArchive(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		all, err := scanSearchAll(root, benchQueries)
		if err != nil {
			b.Fatal(err)
		}
		for j, hits := range all {
			if len(hits) == 0 {
				b.Fatal(benchQueries[j], "no hit")
			}
		}
	}
	b.ReportMetric(float64(b.N*len(benchQueries))/b.Elapsed().Seconds(), "searches/s")
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

// openBenchIndex opens the benchmark archive's index, up to date (built
// here unless BenchmarkIndexBuild ran), closed when b ends.
func openBenchIndex(b *testing.B) *Index {
	root, _ := benchArchive(b)
	ctx := context.Background()
	ix, _, err := Open(ctx, root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	if _, err := ix.Update(ctx); err != nil {
		b.Fatal(err)
	}
	return ix
}
