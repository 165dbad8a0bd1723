package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	var (
		in      = flag.String("in", "bench.out", "go test -bench output to read")
		out     = flag.String("out", "BENCHMARKS.md", "markdown file to write")
		bin     = flag.String("twasm", "", "twasm binary for the command-level measurements (none: not measured)")
		method  = flag.String("method", "", "how the benchmarks were run (go test flags per package), for the Method section")
		warm    = flag.Int("warm-runs", 20, "warm-cache start-up runs")
		cold    = flag.Int("cold-runs", 5, "empty-cache start-up runs")
		example = flag.String("example", "examples/claude/stream-json.jsonl", "Claude stream the start-up input is made from")
		golden  = flag.String("golden", "testdata/golden/claude", "directory of claude golden inputs the large RSS input repeats")
		modules = flag.String("modules", "internal/bundled/wasm", "directory of the bundled modules whose sizes are reported")
	)
	flag.Parse()
	if err := run1(*in, *out, *bin, *method, *example, *golden, *modules, *warm, *cold); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run1(in, out, bin, method, example, golden, modules string, warmRuns, coldRuns int) error {
	startLoad := readLoad()
	start := time.Now().UTC()
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	res, err := Parse(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	// 128 MiB, not 1 GiB as before the input's copies had ids of their
	// own (bigInput): recorded as one session, 1 GiB of distinct records
	// took more than 3 minutes of CPU (its RSS over 220 MB and growing),
	// where the same input of replays took seconds.
	rssSize := int64(128 << 20)
	if s := os.Getenv("BENCH_RSS_BYTES"); s != "" {
		if rssSize, err = parseSize(s); err != nil {
			return fmt.Errorf("BENCH_RSS_BYTES: %w", err)
		}
	}
	m := &Measurements{WarmRuns: warmRuns, ColdRuns: coldRuns}
	m.Modules, m.ModulesErr = moduleSizes(modules)
	awfFile := filepath.Join("..", "shared", "fixtures", "claude", "switchboard_stream_json_tool_vocabulary.jsonl")
	if bin == "" {
		m.Skipped = "no -twasm binary given"
	} else {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return err
		}
		tmp, err := os.MkdirTemp("", "benchreport-")
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "benchreport: start-up: %d warm runs (+ --version), %d cold runs\n", warmRuns, coldRuns)
		measureStartup(m, abs, example, tmp)
		fmt.Fprintf(os.Stderr, "benchreport: RSS: recording %s\n", format(float64(rssSize), "bytes"))
		measureRSS(m, abs, golden, tmp, rssSize)
		fmt.Fprintf(os.Stderr, "benchreport: whole record: 3 runs of %s\n", format(recordBytes, "bytes"))
		measureRecord(m, abs, awfFile, golden, tmp, recordBytes, 3)
		jq, _ := exec.LookPath("jq")
		// The whole record's storages, deleted just before, held a child
		// run for each sub-agent call of every copy: thousands of files.
		// The real logs' records created files right after them and paid
		// for it (claude 96 ms of CPU against 65-72 ms on a settled
		// machine, jq unchanged).
		fmt.Fprintf(os.Stderr, "benchreport: real session logs: %d records and jq runs of each provider's (after %s settling)\n", realLogRuns, quietAfterDeletes)
		settle()
		measureRealLogs(m, abs, jq, ".", tmp, realLogRuns)
		if err := os.RemoveAll(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
		}
	}
	endLoad := readLoad()
	_, awfErr := os.Stat(awfFile)
	tables := Tables(res, m, Options{AWFCorpus: awfErr == nil})

	var buf bytes.Buffer
	writeReport(&buf, res, m, tables, reportInfo{
		Date: start, End: time.Now().UTC(), Method: method, StartLoad: startLoad, EndLoad: endLoad, RSSBytes: rssSize,
	})
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	s := summarize(tables)
	fmt.Fprintf(os.Stderr, "benchreport: wrote %s: %d goals met, %d not met, %d not measured\n", out, len(s.Met), len(s.NotMet), len(s.NotMeasured))
	return nil
}

// realLogRuns is how many times each provider's real logs are recorded
// (and read by jq).
const realLogRuns = 5

// recordBytes is the size of the whole-record corpus (issue #12: 200 MB).
const recordBytes = 200e6

type reportInfo struct {
	Date, End          time.Time
	Method             string
	StartLoad, EndLoad string
	RSSBytes           int64
}

// readLoad is /proc/loadavg's three averages, or "unknown".
func readLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// cpuModel is the first "model name" of /proc/cpuinfo, else what go test
// printed.
func cpuModel(fallback string) string {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	if fallback != "" {
		return fallback
	}
	return "unknown"
}

func writeReport(w io.Writer, res *Results, m *Measurements, tables []Table, info reportInfo) {
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated by `make bench` (`internal/tools/benchreport`); do not edit by hand. Every ratio compares two figures measured in the same run on the same machine.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "**Date:** %s (report written %s)\n\n", info.Date.Format("2006-01-02 15:04 MST"), info.End.Format("15:04 MST"))

	fmt.Fprintln(w, "## Machine")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- Go: %s, %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "- CPU: %s; %d logical CPUs (nproc)\n", cpuModel(res.CPU), runtime.NumCPU())
	fmt.Fprint(w, "- Load average (1, 5, 15 min):")
	for _, l := range res.Loads {
		fmt.Fprintf(w, " %s %.2f %.2f %.2f;", l.Label, l.Avg[0], l.Avg[1], l.Avg[2])
	}
	fmt.Fprintf(w, " at the start of benchreport %s; at its end %s.\n", info.StartLoad, info.EndLoad)
	fmt.Fprintf(w, "- **The machine may be shared** (here: with other engineers' builds and test runs). A load average above the %d CPUs means "+
		"other processes competed for them: wall-clock figures (MB/s, events/s, start-up times) are stretched by it, and by different amounts "+
		"for different benchmarks; cpuMB/s (bytes per CPU second of the benchmark process) is much less affected. Ratios between figures of the "+
		"same run cancel part of it, not all of it. The numbers were not tuned or re-run selectively.\n\n", runtime.NumCPU())

	fmt.Fprintln(w, "## Method")
	fmt.Fprintln(w)
	if info.Method != "" {
		fmt.Fprintf(w, "- Benchmarks: %s.\n", info.Method)
	}
	if res.Toolchain != "" {
		fmt.Fprintf(w, "- Plugin modules measured by pluginbench were built with: `%s` (as `make` builds the bundled ones).\n", res.Toolchain)
	}
	fmt.Fprintln(w, "- Each figure is the **median [min–max]** over the `-count` runs of its benchmark; a ratio is the ratio of the two medians. "+
		"Counts ran back to back in one `go test` process per package, not interleaved between packages.")
	fmt.Fprintln(w, "- Speed and memory goals are checked here, by benchmarks, never by timed assertions in tests. "+
		"A goal on a ratio compares with the baseline of the same row; \"report\" rows carry no goal.")
	fmt.Fprintln(w, "- Throughput ratios prefer cpuMB/s where both sides report it (see each value's unit); wall-clock MB/s rows are shown beside them.")
	fmt.Fprintf(w, "- Command-level figures (start-up, RSS) were measured by benchreport running `twasm` as a child process, %d warm-cache runs "+
		"interleaved with `twasm --version` (after a sync(2) that writes back what the benchmarks before left dirty, and a wait of %s for the inodes they deleted to age past ext4's recently-deleted window; the same again before the real session logs, after the whole-record runs' storages are deleted), %d empty-cache runs, and one record of a %s generated input.\n",
		m.WarmRuns, quietAfterDeletes, m.ColdRuns, format(float64(info.RSSBytes), "bytes"))
	fmt.Fprintln(w)

	s := summarize(tables)
	fmt.Fprintln(w, "## Summary")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%d goals met, %d not met, %d not measured.\n\n", len(s.Met), len(s.NotMet), len(s.NotMeasured))
	for _, x := range s.NotMet {
		fmt.Fprintf(w, "- not met: %s\n", x)
	}
	for _, x := range s.NotMeasured {
		fmt.Fprintf(w, "- not measured: %s\n", x)
	}
	if len(s.NotMet)+len(s.NotMeasured) > 0 {
		fmt.Fprintln(w)
	}
	if len(res.Failures) > 0 {
		fmt.Fprintln(w, "**The benchmark run reported failures** (their figures are missing below):")
		fmt.Fprintln(w)
		for i, l := range res.Failures {
			if i == 20 {
				fmt.Fprintf(w, "- … %d more\n", len(res.Failures)-i)
				break
			}
			fmt.Fprintf(w, "- `%s`\n", strings.ReplaceAll(l, "`", "'"))
		}
		fmt.Fprintln(w)
	}
	for _, t := range tables {
		writeTable(w, t)
	}
}
