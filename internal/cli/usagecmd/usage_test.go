package usagecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
)

func TestNewCmdUsage(t *testing.T) {
	now := time.Date(2026, 8, 10, 15, 0, 0, 0, time.Local)
	tests := []struct {
		argv         string
		code         int
		since, until time.Time
		by           string
	}{
		{"", 0, time.Time{}, time.Time{}, "day"},
		{"--by model --since 20260801 --until 20260801", 0, time.Date(2026, 8, 1, 0, 0, 0, 0, time.Local), time.Date(2026, 8, 2, 0, 0, 0, 0, time.Local), "model"},
		{"--since yesterday --until today", 0, time.Date(2026, 8, 9, 0, 0, 0, 0, time.Local), time.Date(2026, 8, 11, 0, 0, 0, 0, time.Local), "day"},
		{"--since 2026-08-01T10:00:00Z --until 2026-08-01T12:00:00+02:00", 0, time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), "day"},
		{"--since 7d", 0, now.Add(-7 * 24 * time.Hour), time.Time{}, "day"},
		{"--timezone UTC --by week --since 20260801 --until 2026-08-01T12:00", 0, time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC), "week"},
		{"--timezone Mars/Olympus", cmdutil.ExitUsage, time.Time{}, time.Time{}, ""},
		{"--by hour", cmdutil.ExitUsage, time.Time{}, time.Time{}, ""},
		{"--since soon", cmdutil.ExitUsage, time.Time{}, time.Time{}, ""},
	}
	for _, tc := range tests {
		env := cmdtest.New(t)
		err := cmdtest.Parse(NewCmdUsage(env.F, func(*Options) error { return nil }), tc.argv)
		if cmdutil.ExitCode(err) != tc.code {
			t.Errorf("%q: err = %v", tc.argv, err)
		}
	}
	for _, tc := range tests {
		if tc.code != 0 {
			continue
		}
		o := &Options{Now: func() time.Time { return now }, Window: cmdutil.Window{Since: field(tc.argv, "--since"), Until: field(tc.argv, "--until")}, Timezone: field(tc.argv, "--timezone")}
		o.Report.By = tc.by
		if err := parseWhen(o); err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		if tz := field(tc.argv, "--timezone"); tz != "" && (o.Report.Location == nil || o.Report.Location.String() != tz) {
			t.Errorf("%q: location %v", tc.argv, o.Report.Location)
		}
		if !o.Report.Since.Equal(tc.since) || !o.Report.Until.Equal(tc.until) {
			t.Errorf("%q: since %v until %v, want %v %v", tc.argv, o.Report.Since, o.Report.Until, tc.since, tc.until)
		}
	}
}

func field(argv, flag string) string {
	f := strings.Fields(argv)
	for i := range f {
		if f[i] == flag && i+1 < len(f) {
			return f[i+1]
		}
	}
	return ""
}

// The fixture: the root run's Claude step states $0.25 (Claude's result
// line), its child run's Codex step states none: gpt-5, 50 uncached input
// and 5 output tokens, priced 50*1.25 + 5*10 = 112.5 µ$, 113 rounded.
// From the index and from the files alike.
func TestRunUsage(t *testing.T) {
	for _, index := range []bool{true, false} {
		env := cmdtest.New(t)
		run := func(by string, js bool) string {
			t.Helper()
			ios, _, out, _ := iostreams.Test()
			o := &Options{IO: ios, List: env.F.ListRuns, Usage: env.F.UsageSource(), ModTime: env.F.FileModTime, JSON: js}
			if !index {
				o.Usage.Ledgers = nil
			}
			o.Report.By, o.Report.Breakdown = by, true
			if err := runUsage(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			return out.String()
		}
		var rep usage.Report
		if err := json.Unmarshal([]byte(run("provider", true)), &rep); err != nil {
			t.Fatal(err)
		}
		if c := rep.Total.Cost; c.MicroUSD != 250113 || c.USD != "0.250113" || c.Source != "mixed" || rep.Total.Sessions != 1 {
			t.Errorf("index %v: total %+v, sessions %d", index, c, rep.Total.Sessions)
		}
		want := map[string]usage.Cost{"claude": {MicroUSD: 250000, Source: "provider"}, "codex": {MicroUSD: 113, Source: "priced"}}
		for _, g := range rep.Groups {
			if w := want[g.Key]; g.Cost.MicroUSD != w.MicroUSD || g.Cost.Source != w.Source {
				t.Errorf("index %v: %s %+v, want %+v", index, g.Key, g.Cost, w)
			}
		}
		text := run("session", false)
		for _, w := range []string{viewstest.Root, "\t0.250113\tmixed", "  gpt-5\t", "total\t1\t"} {
			if !strings.Contains(text, w) {
				t.Errorf("index %v: text lacks %q:\n%s", index, w, text)
			}
		}
	}
}

func TestPrices(t *testing.T) {
	env, cfg, o, out, errOut := pricesEnv(t)
	if err := runPrices(o); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "price table twasm-bundled@") || !strings.Contains(s, "(bundled)") || !strings.Contains(s, "claude-sonnet-4-5") ||
		!strings.Contains(s, "\t50%\t") {
		t.Fatalf("prices:\n%s", s)
	}
	file := filepath.Join(t.TempDir(), "p.json")
	viewstest.WriteFile(t, file, []byte(`{"schema": "twasm.prices/1", "name": "mine", "date": "2999-01-01", "models": [
		{"id": "gpt-5", "provider": "openai", "usd_per_mtok": {"input": "2", "output": "20"}, "sources": ["https://example.com"], "checked": "2999-01-01"}]}`))
	bad := filepath.Join(t.TempDir(), "bad.json")
	viewstest.WriteFile(t, bad, []byte(`{"schema": "twasm.prices/1", "name": "x", "date": "2999-01-01", "models": [{"id": "m"}]}`))
	o.File = bad
	if err := runUpdate(o); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("a bad table: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg, "twasm", "prices.json")); err == nil {
		t.Fatal("a bad table was installed")
	}
	o.File = file
	if err := runUpdate(o); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runPrices(o); err != nil || !strings.Contains(out.String(), "price table mine@2999-01-01 ("+filepath.Join(cfg, "twasm", "prices.json")) {
		t.Fatalf("after update: %v\n%s%s", err, out, errOut)
	}
	// usage now prices with it: the child's 50 and 5 tokens at $2 and $20: 100 + 100 = 200 µ$.
	if rep := usageByModel(t, env); rep.Prices != "mine@2999-01-01" || rep.Total.Cost.MicroUSD != 250200 {
		t.Fatalf("usage after update: %s %+v", rep.Prices, rep.Total.Cost)
	}
}

// pricesEnv is a test environment whose configuration directory (cfg)
// is its own, and the prices commands' options in it writing to out and
// errOut.
func pricesEnv(t *testing.T) (env *cmdtest.Env, cfg string, o *PricesOptions, out, errOut *bytes.Buffer) {
	env = cmdtest.New(t)
	cfg = t.TempDir()
	env.F.Getenv = func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	ios, _, out, errOut := iostreams.Test()
	return env, cfg, &PricesOptions{IO: ios, Prices: env.F.Prices, Path: env.F.PricesPath}, out, errOut
}

// usageByModel runs usage --by model --json in env and decodes it.
func usageByModel(t *testing.T, env *cmdtest.Env) usage.Report {
	t.Helper()
	ios, _, uout, _ := iostreams.Test()
	u := &Options{IO: ios, List: env.F.ListRuns, Usage: env.F.UsageSource(), ModTime: env.F.FileModTime, JSON: true}
	u.Report.By = "model"
	if err := runUsage(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	var rep usage.Report
	if err := json.Unmarshal(uout.Bytes(), &rep); err != nil {
		t.Fatalf("usage --json: %v", err)
	}
	return rep
}

// TestPricesNewerFile: a price file written by a newer twasm whose gpt-5
// entry has a field this twasm does not know is installed, update and
// prices say which model it leaves unpriced, and usage names gpt-5
// unpriced with the field rather than pricing it without it (the
// fixture's other 250000 µ$ stated as before).
func TestPricesNewerFile(t *testing.T) {
	env, _, o, out, errOut := pricesEnv(t)
	o.File = filepath.Join(t.TempDir(), "p.json")
	viewstest.WriteFile(t, o.File, []byte(`{"schema": "twasm.prices/1", "name": "mine", "date": "2999-01-01", "models": [
		{"id": "gpt-5", "provider": "openai", "usd_per_mtok": {"input": "2", "output": "20"}, "regional_percent": 110, "sources": ["https://example.com"], "checked": "2999-01-01"}]}`))
	if err := runUpdate(o); err != nil {
		t.Fatal(err)
	}
	const note = `the entries of these models have a field this twasm does not know, so their usage is not priced: gpt-5 (regional_percent)`
	if !strings.Contains(out.String(), "installed price table mine@2999-01-01") || !strings.Contains(errOut.String(), note) {
		t.Fatalf("update:\n%s%s", out, errOut)
	}
	errOut.Reset()
	if err := runPrices(o); err != nil || !strings.Contains(errOut.String(), note) {
		t.Fatalf("prices: %v\n%s", err, errOut)
	}
	rep := usageByModel(t, env)
	c := rep.Total.Cost
	if want := []string{`gpt-5 (price entry field "regional_percent" unknown to this twasm)`}; rep.Prices != "mine@2999-01-01" || c.MicroUSD != 250000 || !slices.Equal(c.UnpricedModels, want) {
		t.Fatalf("usage: %s %+v, want %q unpriced", rep.Prices, c, want)
	}
}

// TestUsageProject: --project selects the sessions of a directory and
// those below it (a sub-agent's usage with its session), and --by project
// groups every session under its project, the groups adding up to the
// total; from the index and from the files alike. viewstest.ProjectRuns:
// output tokens 1 (/src/app, run in /src/app/web), 10 (/src/app/web), 100
// (/src/apple), 10000 + its sub-agent's 1000 (/src/app), 100000 (none).
func TestUsageProject(t *testing.T) {
	tests := []struct {
		project, wd string
		sessions    int
		output      int64
	}{
		{"", "", 5, 111111},
		{"/src/app", "", 3, 11011},
		{"/src/app/", "", 3, 11011},
		{"/src/app/../app/web", "", 1, 10},
		{"web", "/src/app", 1, 10},
		{".", "/src/apple", 1, 100},
		{"/src", "", 4, 11111},
		{"/", "", 4, 11111},
		{"/src/ap", "", 0, 0},
		{"/nowhere", "", 0, 0},
	}
	for _, index := range []bool{true, false} {
		env := cmdtest.NewProjects(t)
		run := func(by string, pf views.ProjectFilter) *usage.Report {
			t.Helper()
			ios, _, out, _ := iostreams.Test()
			o := &Options{IO: ios, List: env.F.ListRuns, Usage: env.F.UsageSource(), ModTime: env.F.FileModTime, JSON: true}
			if !index {
				o.Usage.Ledgers = nil
			}
			o.Report.By, o.Report.Project = by, pf
			if err := runUsage(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			var rep usage.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			return &rep
		}
		for _, tc := range tests {
			pf, err := cmdutil.ParseProject(tc.project, tc.wd, "")
			if err != nil {
				t.Fatal(err)
			}
			rep := run("day", pf)
			if got := outputOf(rep.Total); rep.Total.Sessions != tc.sessions || got != tc.output {
				t.Errorf("index %v, --project %q from %q: %d sessions, %d output tokens; want %d, %d", index, tc.project, tc.wd, rep.Total.Sessions, got, tc.sessions, tc.output)
			}
		}
		rep := run(usage.ByProject, views.ProjectFilter{})
		want := map[string]int64{"/src/app": 11001, "/src/app/web": 10, "/src/apple": 100, "(no project)": 100000}
		var sum int64
		for _, g := range rep.Groups {
			if outputOf(g) != want[g.Key] {
				t.Errorf("index %v: project %q: %d output tokens, want %d", index, g.Key, outputOf(g), want[g.Key])
			}
			sum += outputOf(g)
		}
		if len(rep.Groups) != len(want) || sum != outputOf(rep.Total) || sum != 111111 {
			t.Errorf("index %v: by project %d groups summing to %d, total %d", index, len(rep.Groups), sum, outputOf(rep.Total))
		}
	}
}

func outputOf(g usage.Group) int64 {
	if g.Usage == nil || g.Usage.OutputTokens == nil {
		return 0
	}
	return *g.Usage.OutputTokens
}
