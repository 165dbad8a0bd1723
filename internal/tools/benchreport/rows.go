package main

import (
	"fmt"
	"math"
	"strings"
)

// Quantity is one measured figure: a summary and its unit. A Quantity
// that was not measured has OK false and may say why in Why.
type Quantity struct {
	Stat Stat
	Unit string
	OK   bool
	// Label, when set, is shown instead of the unit (e.g. where the
	// figure comes from).
	Label string
	Why   string
}

func measured(s Stat, unit string) Quantity { return Quantity{Stat: s, Unit: unit, OK: true} }

// notMeasured is a Quantity that is missing, with the reason.
func notMeasured(why string) Quantity { return Quantity{Why: why} }

// fromSamples summarizes raw samples (e.g. command timings).
func fromSamples(v []float64, unit string) Quantity {
	s, ok := Summarize(v)
	if !ok {
		return notMeasured("no samples")
	}
	return measured(s, unit)
}

// Goal is the target of a row: on the ratio (value/baseline) or on the
// value itself. A zero Goal means the row is reported as context only.
type Goal struct {
	Cmp     string // ">=" or "<="; "" reports only
	Limit   float64
	OnRatio bool
	Unit    string // unit of Limit for a goal on the value
}

// AtLeastX and AtMostX are goals on the ratio; AtMost is one on the value.
func AtLeastX(x float64) Goal { return Goal{Cmp: ">=", Limit: x, OnRatio: true} }
func AtMostX(x float64) Goal  { return Goal{Cmp: "<=", Limit: x, OnRatio: true} }
func AtMost(v float64, unit string) Goal {
	return Goal{Cmp: "<=", Limit: v, Unit: unit}
}

// AtLeast is a goal on the value.
func AtLeast(v float64, unit string) Goal {
	return Goal{Cmp: ">=", Limit: v, Unit: unit}
}

// Row is one line of a table.
type Row struct {
	Figure   string
	Value    Quantity
	Baseline Quantity // zero when the row has no baseline
	Goal     Goal
	Note     string
	// Paired, when set, is the ratio measured run for run (each run's
	// figure over the baseline's run beside it): the median of those
	// ratios, and Min and Max their first and third quartiles. Ratio is
	// then its median.
	Paired *Stat
}

// Ratio is the median value over the median baseline, when both exist,
// or the median of the paired ratios (Paired).
func (r Row) Ratio() (float64, bool) {
	if !r.Value.OK || !r.Baseline.OK || r.Baseline.Stat.Median == 0 {
		return 0, false
	}
	if r.Paired != nil {
		return r.Paired.Median, true
	}
	return r.Value.Stat.Median / r.Baseline.Stat.Median, true
}

// hasBaseline tells a row that compares with something from one that
// does not (absolute figures).
func (r Row) hasBaseline() bool {
	return r.Baseline.OK || r.Baseline.Why != "" || r.Baseline.Unit != "" || r.Baseline.Label != ""
}

// Met says whether the goal is met: "yes", "no", "not measured", or "—"
// for a row reported as context.
func (r Row) Met() string {
	if !r.Value.OK || (r.Goal.OnRatio && !r.Baseline.OK) {
		return "not measured"
	}
	if r.Goal.Cmp == "" {
		return "—"
	}
	x := r.Value.Stat.Median
	if r.Goal.OnRatio {
		x, _ = r.Ratio()
	}
	ok := x >= r.Goal.Limit
	if r.Goal.Cmp == "<=" {
		ok = x <= r.Goal.Limit
	}
	if ok {
		return "yes"
	}
	return "no"
}

// Miss says by how much a goal that is not met is missed ("" otherwise):
// the figure's distance from the limit, in percent of the limit.
func (r Row) Miss() string {
	if r.Met() != "no" || r.Goal.Limit == 0 {
		return ""
	}
	x := r.Value.Stat.Median
	if r.Goal.OnRatio {
		x, _ = r.Ratio()
	}
	d := (x - r.Goal.Limit) / r.Goal.Limit * 100
	if r.Goal.Cmp == "<=" {
		return fmt.Sprintf("%.0f%% over", d)
	}
	return fmt.Sprintf("%.0f%% short", -d)
}

// metCell is the met? column: the verdict, and by how much a goal is
// missed.
func (r Row) metCell() string {
	if m := r.Miss(); m != "" {
		return "no, " + m
	}
	return r.Met()
}

// benchRow compares two benchmarks on the first of units both reported.
func benchRow(res *Results, figure, bench, base string, units []string, goal Goal) Row {
	row := Row{Figure: figure, Goal: goal}
	unit, ok := res.Pick(units, bench, base)
	if !ok {
		row.Value = benchQuantity(res, bench, units)
		row.Baseline = benchQuantity(res, base, units)
		if row.Value.OK && row.Baseline.OK {
			// Both ran but share no metric: no ratio.
			row.Baseline = notMeasured(fmt.Sprintf("%s and %s share none of %s", short(bench), short(base), strings.Join(units, ", ")))
		}
		return row
	}
	v, _ := res.Stat(bench, unit)
	b, _ := res.Stat(base, unit)
	row.Value, row.Baseline = measured(v, unit), measured(b, unit)
	return row
}

// valueRow is an absolute figure of one benchmark.
func valueRow(res *Results, figure, bench string, units []string, goal Goal) Row {
	return Row{Figure: figure, Value: benchQuantity(res, bench, units), Goal: goal}
}

// benchQuantity is the first of units the benchmark reported.
func benchQuantity(res *Results, bench string, units []string) Quantity {
	unit, ok := res.Pick(units, bench)
	if !ok {
		if res == nil || res.Samples[bench] == nil {
			return notMeasured(short(bench) + " did not run")
		}
		return notMeasured(short(bench) + " reported none of " + strings.Join(units, ", "))
	}
	s, _ := res.Stat(bench, unit)
	return measured(s, unit)
}

func short(bench string) string { return strings.TrimPrefix(bench, "Benchmark") }

// format renders one number in a unit, choosing a readable scale.
func format(v float64, unit string) string {
	switch unit {
	case "events/s", "lines/s":
		switch {
		case math.Abs(v) >= 1e6:
			return fmt.Sprintf("%.2fM", v/1e6)
		case math.Abs(v) >= 1e3:
			return fmt.Sprintf("%.1fk", v/1e3)
		}
		return fmt.Sprintf("%.0f", v)
	case "MB/s", "cpuMB/s":
		if math.Abs(v) < 10 {
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.1f", v)
	case "bytes", "wasm-bytes", "wasm-bytes-end", "B/op":
		switch {
		case math.Abs(v) >= 1<<30:
			return fmt.Sprintf("%.2f GiB", v/(1<<30))
		case math.Abs(v) >= 1<<20:
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		case math.Abs(v) >= 1<<10:
			return fmt.Sprintf("%.1f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	case "s":
		if math.Abs(v) < 1 {
			return fmt.Sprintf("%.1f ms", v*1e3)
		}
		return fmt.Sprintf("%.2f s", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// unitLabel is how a unit is named after a figure ("" when format
// already says it).
func unitLabel(unit string) string {
	switch unit {
	case "bytes", "wasm-bytes", "wasm-bytes-end", "B/op", "s":
		return ""
	}
	return unit
}

// cell renders a Quantity: "median [min–max] unit".
func (q Quantity) cell() string {
	if !q.OK {
		if q.Why != "" {
			return "not measured (" + q.Why + ")"
		}
		return "not measured"
	}
	s := format(q.Stat.Median, q.Unit)
	if q.Stat.N > 1 && q.Stat.Min != q.Stat.Max {
		s += " [" + format(q.Stat.Min, q.Unit) + "–" + format(q.Stat.Max, q.Unit) + "]"
	}
	if u := unitLabel(q.Unit); u != "" {
		s += " " + u
	}
	if q.Label != "" {
		s += " " + q.Label
	}
	return s
}

func (g Goal) String() string {
	if g.Cmp == "" {
		return "report"
	}
	op := "≥"
	if g.Cmp == "<=" {
		op = "≤"
	}
	if g.OnRatio {
		return fmt.Sprintf("%s %gx", op, g.Limit)
	}
	s := format(g.Limit, g.Unit)
	if u := unitLabel(g.Unit); u != "" {
		s += " " + u
	}
	return op + " " + s
}

func (r Row) ratioCell() string {
	x, ok := r.Ratio()
	if !ok {
		return "—"
	}
	if p := r.Paired; p != nil && p.Min != p.Max {
		return fmt.Sprintf("%.2fx [%.2f–%.2f]", x, p.Min, p.Max)
	}
	return fmt.Sprintf("%.2fx", x)
}

func (r Row) baselineCell() string {
	if !r.hasBaseline() {
		return "—"
	}
	return r.Baseline.cell()
}
