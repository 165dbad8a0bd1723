package main

import (
	"bufio"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Results holds what `go test -bench` printed: every sample of every
// metric of every benchmark (one sample per -count), in the order the
// benchmarks first appeared, plus the header lines and markers that
// describe the run.
type Results struct {
	// Samples maps a benchmark name, without its -GOMAXPROCS suffix, to
	// its metrics (unit → one value per run).
	Samples map[string]map[string][]float64
	// Order lists the benchmark names as they first appeared.
	Order []string
	// CPU is the "cpu:" header line of the first package, if any.
	CPU string
	// Loads are the "loadavg <label>: a b c ..." markers `make bench`
	// writes around the benchmarks.
	Loads []Load
	// Failures are the lines reporting a failed package or benchmark.
	Failures []string
	// Toolchain is what pluginbench printed after "wasm toolchain:": the
	// compiler (and flags) of the measured modules.
	Toolchain string
	// MemoryFlat are pluginbench's TestPluginMemoryFlat results.
	MemoryFlat []MemoryFlat
}

// MemoryFlat is one "memory-flat PLUGIN WHAT COUNT WARM END" line: the
// instance's wasm memory after the first half of COUNT lines or streams
// and at the end.
type MemoryFlat struct {
	Plugin, What string
	Count        int
	Warm, End    float64
}

var memoryFlatLine = regexp.MustCompile(`memory-flat (\S+) (\S+) (\d+) (\d+) (\d+)`)

// Load is one load-average reading.
type Load struct {
	Label string
	Avg   [3]float64
}

// procsSuffix is the -GOMAXPROCS suffix go test appends to a name.
var procsSuffix = regexp.MustCompile(`-\d+$`)

var loadLine = regexp.MustCompile(`^loadavg ([^:]*): +([0-9.]+) +([0-9.]+) +([0-9.]+)`)

// Parse reads go test -bench output. Lines that are not results are
// skipped; a benchmark whose name was printed on a line of its own (it
// logged something) gets the figures of the next line that starts with an
// iteration count.
func Parse(r io.Reader) (*Results, error) {
	res := &Results{Samples: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	pending := ""
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		switch {
		case strings.HasPrefix(line, "cpu: "):
			if res.CPU == "" {
				res.CPU = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
			}
			continue
		case strings.HasPrefix(line, "wasm toolchain: "):
			res.Toolchain = strings.TrimSpace(strings.TrimPrefix(line, "wasm toolchain: "))
			continue
		case memoryFlatLine.MatchString(line):
			m := memoryFlatLine.FindStringSubmatch(line)
			mf := MemoryFlat{Plugin: m[1], What: m[2]}
			mf.Count, _ = strconv.Atoi(m[3])
			mf.Warm, _ = strconv.ParseFloat(m[4], 64)
			mf.End, _ = strconv.ParseFloat(m[5], 64)
			res.MemoryFlat = append(res.MemoryFlat, mf)
			continue
		case strings.HasPrefix(line, "loadavg "):
			if m := loadLine.FindStringSubmatch(line); m != nil {
				l := Load{Label: m[1]}
				for i := range l.Avg {
					l.Avg[i], _ = strconv.ParseFloat(m[2+i], 64)
				}
				res.Loads = append(res.Loads, l)
			}
			continue
		case strings.HasPrefix(line, "FAIL") || strings.HasPrefix(strings.TrimSpace(line), "--- FAIL") ||
			strings.HasPrefix(line, "panic:") || strings.Contains(line, "[build failed]") || strings.Contains(line, "[setup failed]"):
			res.Failures = append(res.Failures, strings.TrimSpace(line))
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		name := ""
		if strings.HasPrefix(fields[0], "Benchmark") {
			name = procsSuffix.ReplaceAllString(fields[0], "")
			fields = fields[1:]
			if len(fields) == 0 {
				pending = name
				continue
			}
		} else if pending != "" {
			name = pending
		} else {
			continue
		}
		if _, err := strconv.ParseInt(fields[0], 10, 64); err != nil || len(fields) < 3 || len(fields)%2 != 1 {
			// Not a result line (a benchmark's log, a SKIP, ...).
			if strings.HasPrefix(line, "Benchmark") {
				pending = ""
			}
			continue
		}
		pending = ""
		metrics := res.Samples[name]
		if metrics == nil {
			metrics = map[string][]float64{}
			res.Samples[name] = metrics
			res.Order = append(res.Order, name)
		}
		for i := 1; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			metrics[fields[i+1]] = append(metrics[fields[i+1]], v)
		}
	}
	return res, sc.Err()
}

// Stat summarizes the samples of one metric.
type Stat struct {
	Median, Min, Max float64
	N                int
}

// Summarize returns the median (the mean of the two middle values for an
// even count), minimum and maximum; ok is false without samples.
func Summarize(v []float64) (s Stat, ok bool) {
	if len(v) == 0 {
		return Stat{}, false
	}
	x := append([]float64(nil), v...)
	sort.Float64s(x)
	n := len(x)
	s = Stat{Min: x[0], Max: x[n-1], N: n}
	if n%2 == 1 {
		s.Median = x[n/2]
	} else {
		s.Median = (x[n/2-1] + x[n/2]) / 2
	}
	return s, true
}

// Stat returns the summary of a benchmark's metric.
func (r *Results) Stat(bench, unit string) (Stat, bool) {
	if r == nil {
		return Stat{}, false
	}
	return Summarize(r.Samples[bench][unit])
}

// Has reports whether the benchmark reported the unit.
func (r *Results) Has(bench, unit string) bool {
	return r != nil && len(r.Samples[bench][unit]) > 0
}

// Pick returns the first of units that every one of benches reported
// (so that a ratio compares like with like); ok is false when none is.
func (r *Results) Pick(units []string, benches ...string) (string, bool) {
	for _, u := range units {
		all := true
		for _, b := range benches {
			if !r.Has(b, u) {
				all = false
				break
			}
		}
		if all {
			return u, true
		}
	}
	return "", false
}

// Subs returns the distinct path elements that follow prefix in
// benchmark names ("BenchmarkNormalize/" → "claude", "codex"), in order
// of appearance.
func (r *Results) Subs(prefix string) []string {
	var out []string
	seen := map[string]bool{}
	if r == nil {
		return nil
	}
	for _, name := range r.Order {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		sub, _, _ := strings.Cut(rest, "/")
		if sub != "" && !seen[sub] {
			seen[sub] = true
			out = append(out, sub)
		}
	}
	return out
}
