package stats

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
)

func TestNewCmdStats(t *testing.T) {
	tests := []struct {
		argv string
		code int
	}{
		{"--all", 0}, {viewstest.Root, 0}, {"", cmdutil.ExitUsage}, {"--all " + viewstest.Root, cmdutil.ExitUsage},
	}
	for _, tc := range tests {
		env := cmdtest.New(t)
		err := cmdtest.Parse(NewCmdStats(env.F, func(*Options) error { return nil }), tc.argv)
		if cmdutil.ExitCode(err) != tc.code {
			t.Errorf("%q: err = %v", tc.argv, err)
		}
	}
}

func TestRunStats(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"one run with its child", Options{Runs: []string{viewstest.Root}}, []string{
			"runs 2 (1 top-level, 1 sub-runs), events 20, agent steps 2", "malformed lines 1, unknown types 1, dangling calls 1",
			"  Bash                         1", "  claude uncached_input_tokens=200 cache_read_tokens=800 output_tokens=200  $0.2500",
			"  total cost $0.2500", "  claude 2.0.1  system/hook_response  2", "  codex 0.50.0  event_msg/token_count  3"}},
		{"all counts each run once", Options{All: true}, []string{"runs 2 (1 top-level, 1 sub-runs), events 20"}},
		{"child only", Options{Runs: []string{viewstest.Child}}, []string{"runs 1 (0 top-level, 1 sub-runs), events 7", "  codex 0.50.0  event_msg/token_count  3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			o := tc.opts
			o.IO, o.Load, o.List = env.IO, env.F.LoadTree, env.F.ListRuns
			if err := runStats(context.Background(), &o); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(env.Out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, env.Out)
				}
			}
		})
	}
	env := cmdtest.New(t)
	if err := runStats(context.Background(), &Options{IO: env.IO, Load: env.F.LoadTree, List: env.F.ListRuns, All: true, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var st views.Stats
	if err := json.Unmarshal(env.Out.Bytes(), &st); err != nil || st.Runs != 2 || len(st.Drift) != 2 {
		t.Fatalf("json: %v %+v", err, st)
	}
	env.F.StorageFlag = t.TempDir()
	err := runStats(context.Background(), &Options{IO: env.IO, Load: env.F.LoadTree, List: env.F.ListRuns, All: true})
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("empty storage: %v", err)
	}
	if err := runStats(context.Background(), &Options{IO: env.IO, Load: env.F.LoadTree, Runs: []string{viewstest.Other}}); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("missing run: %v", err)
	}
}

// stats --all counts the same from the index's digests as from the
// transcripts, whatever the storage holds (a storage with a file that is
// not a transcript gives the same error both ways).
func TestIndexAndScanAgree(t *testing.T) {
	for _, s := range viewstest.Storages() {
		t.Run(s.Name, func(t *testing.T) {
			root := t.TempDir()
			s.Write(t, root)
			env := cmdtest.New(t)
			env.F.StorageFlag = root
			run := func(json, digests bool) (string, error) {
				ios, _, out, _ := iostreams.Test()
				o := &Options{IO: ios, Load: env.F.LoadTree, List: env.F.ListRuns, All: true, JSON: json}
				if digests {
					o.Digests = env.F.RunDigests
				}
				err := runStats(context.Background(), o)
				return out.String(), err
			}
			// Text first (the index is filled), then JSON (from it).
			for _, stage := range []string{"first", "cached"} {
				for _, js := range []bool{stage == "cached"} {
					want, werr := run(js, false)
					got, gerr := run(js, true)
					if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
						t.Errorf("%s (json %v): from the index %v\n%s\nfrom the transcripts %v\n%s", stage, js, gerr, got, werr, want)
					}
				}
			}
		})
	}
}

// stats selects sessions as ls does (--provider, --since, --until) and by
// model, from the index and from the files alike, and states the cost
// with its provenance: the fixture's Claude step states $0.25, its child
// run's Codex step is priced (gpt-5: 50*1.25 + 5*10 = 112.5 µ$, 113).
func TestFiltersAndCost(t *testing.T) {
	future := viewstest.T0.Add(24 * time.Hour)
	tests := []struct {
		name   string
		set    func(*Options)
		runs   int
		micro  int64
		source string
	}{
		{"all", func(*Options) {}, 2, 250113, "mixed"},
		{"provider codex: the session that has it, whole", func(o *Options) { o.Filter.Provider = "codex" }, 2, 250113, "mixed"},
		{"provider gemini", func(o *Options) { o.Filter.Provider = "gemini" }, 0, 0, ""},
		{"model gpt-5", func(o *Options) { o.Model = "GPT-5" }, 2, 250113, "mixed"},
		{"model opus", func(o *Options) { o.Model = "opus" }, 0, 0, ""},
		{"since tomorrow", func(o *Options) { o.Filter.Since = future }, 0, 0, ""},
		{"until tomorrow", func(o *Options) { o.Filter.Until = future }, 2, 250113, "mixed"},
	}
	for _, tc := range tests {
		for _, digests := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/index %v", tc.name, digests), func(t *testing.T) {
				env := cmdtest.New(t)
				o := &Options{IO: env.IO, Load: env.F.LoadTree, List: env.F.ListRuns, All: true, JSON: true, Usage: env.F.UsageSource()}
				if digests {
					o.Digests = env.F.RunDigests
				} else {
					o.Usage.Ledgers = nil
				}
				tc.set(o)
				if err := runStats(context.Background(), o); err != nil {
					t.Fatal(err)
				}
				var st views.Stats
				if err := json.Unmarshal(env.Out.Bytes(), &st); err != nil {
					t.Fatal(err)
				}
				if st.Runs != tc.runs {
					t.Errorf("runs %d, want %d", st.Runs, tc.runs)
				}
				if tc.source == "" {
					if st.Priced != nil {
						t.Errorf("cost %+v for nothing counted", st.Priced)
					}
					return
				}
				if c := st.Priced; c == nil || c.MicroUSD != tc.micro || c.Source != tc.source {
					t.Fatalf("cost %+v, want %d %s", c, tc.micro, tc.source)
				}
				if c := st.PricedByProvider["codex"]; c.MicroUSD != 113 || c.Source != "priced" {
					t.Errorf("codex %+v", c)
				}
				if c := st.PricedByProvider["claude"]; c.MicroUSD != 250000 || c.Source != "provider" {
					t.Errorf("claude %+v", c)
				}
			})
		}
	}
	env := cmdtest.New(t)
	o := &Options{IO: env.IO, Load: env.F.LoadTree, List: env.F.ListRuns, All: true, Usage: env.F.UsageSource()}
	if err := runStats(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"  claude uncached_input_tokens=200 cache_read_tokens=800 output_tokens=200  $0.2500 provider",
		"  codex uncached_input_tokens=50 output_tokens=5  $0.0001 priced", "  total cost $0.2501 (mixed, prices twasm-bundled@"} {
		if !strings.Contains(env.Out.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, env.Out)
		}
	}
	for _, argv := range []string{"--all --since 7d --provider claude --model sonnet --until 2026-01-01"} {
		if err := cmdtest.Parse(NewCmdStats(env.F, func(*Options) error { return nil }), argv); err != nil {
			t.Errorf("%q: %v", argv, err)
		}
	}
	if err := cmdtest.Parse(NewCmdStats(env.F, func(*Options) error { return nil }), "--all --since soon"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--since soon: %v", err)
	}
}

// stats of a few runs reads their ledgers from their files: the index
// keeps the ledgers of the runs it is asked for and drops the others', so
// asking it for one run made the next usage or ls read every transcript
// again.
func TestRunsLeaveTheIndexWhole(t *testing.T) {
	env := cmdtest.New(t)
	ids, err := env.F.ListRuns()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := env.F.UsageSource().Load(ctx, ids, env.ErrOut); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		db, err := sql.Open("sqlite", "file:"+index.File(env.Storage)+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM derived WHERE kind LIKE 'usage.Ledger/%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != len(ids) {
		t.Fatalf("%d ledgers in the index, want %d", n, len(ids))
	}
	o := &Options{IO: env.IO, Load: env.F.LoadTree, List: env.F.ListRuns, Runs: []string{viewstest.Child}, Usage: env.F.UsageSource()}
	if err := runStats(ctx, o); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != len(ids) {
		t.Errorf("after stats of one run: %d ledgers in the index, want %d", n, len(ids))
	}
}

// TestProject: stats --all --project counts the sessions of a directory
// and those below it, each with its sub-agent's run, from the index and
// from the files alike (viewstest.ProjectRuns).
func TestProject(t *testing.T) {
	tests := []struct {
		project string
		runs    int // sessions and their child runs
	}{
		{"", 6},
		{"/src/app", 4},
		{"/src/app/web", 1},
		{"/src/apple/", 1},
		{"/elsewhere", 0},
	}
	for _, tc := range tests {
		for _, digests := range []bool{false, true} {
			env := cmdtest.NewProjects(t)
			o := &Options{IO: env.IO, Load: env.F.LoadTree, List: env.F.ListRuns, All: true, JSON: true, Usage: env.F.UsageSource()}
			if digests {
				o.Digests = env.F.RunDigests
			} else {
				o.Usage.Ledgers = nil
			}
			var err error
			if o.Filter.Project, err = cmdutil.ParseProject(tc.project, "", ""); err != nil {
				t.Fatal(err)
			}
			if err := runStats(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			var st views.Stats
			if err := json.Unmarshal(env.Out.Bytes(), &st); err != nil {
				t.Fatal(err)
			}
			if st.Runs != tc.runs {
				t.Errorf("index %v, --project %q: runs %d, want %d", digests, tc.project, st.Runs, tc.runs)
			}
		}
	}
	env := cmdtest.NewProjects(t)
	if err := cmdtest.Parse(NewCmdStats(env.F, func(*Options) error { return nil }), "--all --project ."); err != nil {
		t.Errorf("--project .: %v", err)
	}
}
