package stats

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// Options are the inputs of runStats.
type Options struct {
	IO   *iostreams.IOStreams
	Load func(arg string) (*views.RunNode, error)
	// List returns every run id in storage, for --all.
	List func() ([]string, error)
	// Digests gives the runs' digests from the index for --all (nil, or
	// an error: the transcripts are read instead, with the same result).
	Digests func(ctx context.Context, ids []string, w io.Writer) (map[string]*views.RunDigest, error)
	// Usage gives the price table and the runs' usage ledgers, for the
	// cost with its provenance and --model (nil Usage.Prices: neither).
	Usage cmdutil.UsageSource
	Now   func() time.Time
	// Filter selects the sessions (top-level runs) counted, their child
	// runs with them, as ls selects them; Model those with a model whose
	// name contains it.
	Filter views.RunFilter
	Model  string
	cmdutil.Window
	Runs []string
	All  bool
	JSON bool
}

func (o *Options) filtered() bool { return !o.Filter.IsZero() || o.Model != "" }

// NewCmdStats returns the stats command.
func NewCmdStats(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Load: f.LoadTree, List: f.ListRuns, Digests: f.RunDigests, Usage: f.UsageSource(), Now: f.Now}
	cmd := &cobra.Command{
		Use:   "stats RUN...|--all",
		Short: "Count events, blocks, tools, usage, cost and format drift",
		Long: `Aggregate transcripts: events by type, content blocks by type, tool calls by
name and by fidelity, token usage and cost per provider (summed from the
agent steps' results), and the drift report: native line types a provider
plugin did not map, per provider and provider version. A growing drift
count after a CLI upgrade means the plugin needs an update.

Each RUN counts with its child runs; a run reached twice counts once.
--all counts every transcript in storage, each session once: a run that
"twasm renormalize" rebuilt is left out (its rebuild counts), unless it
or one of its child runs was written to after the rebuild (then the
rebuild is left out). The
usage shows each provider's agent steps, the sub-runs' (sub-agents) apart,
and every token together ("in all"); the figures are uncached input,
cache read, cache write and output, as the providers bill them.

The cost says where it comes from, as in "twasm usage": stated by the
provider, priced from the price table in force ("twasm prices"), or
unknown for a model the table lacks (named; never counted as 0). --json's
"cost" and "cost_by_provider" carry it in micro-dollars; "cost_usd" and
"cost_usd_by_provider" are only what the providers stated.

--provider, --since, --until, --project and --model select sessions as
ls selects runs (a session that started in the period counts whole, with
its sub-agents; "twasm usage --since" counts usage by when it happened).

--project DIR: ` + cmdutil.ProjectHelp + `.`,
		Example: `  twasm stats 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm stats --all
  twasm stats --all --json | jq '.drift'
  twasm stats --all --project ~/src/app`,
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = args
			if opts.All == (len(args) > 0) {
				return cmdutil.FlagErrorf("give RUN arguments or --all, not both or neither")
			}
			var err error
			if opts.Filter.Since, opts.Filter.Until, opts.Filter.Project, err = opts.Window.Read(f, opts.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runStats(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "count every transcript in storage")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the statistics as JSON")
	cmd.Flags().StringVar(&opts.Filter.Provider, "provider", "", "only sessions with an agent step of this provider")
	cmd.Flags().StringVar(&opts.Model, "model", "", "only sessions that used a model whose name contains this")
	opts.Window.AddFlags(cmd.Flags(), "only sessions started at or after this time or age", "only sessions started before this time or age", "sessions")
	return cmd
}

func runStats(ctx context.Context, opts *Options) error {
	runs := opts.Runs
	var all []string
	if opts.All {
		ids, err := opts.List()
		if err != nil {
			return &cmdutil.InputError{Err: fmt.Errorf("list transcripts: %w", err)}
		}
		runs, all = ids, ids
	}
	sel := &selection{opts: opts}
	if opts.Usage.Prices != nil {
		ids := all
		if !opts.All {
			// the runs named and their child runs
			ids = nil
			for _, arg := range runs {
				root, err := opts.Load(arg)
				if err != nil {
					return err
				}
				for _, n := range root.Runs() {
					ids = append(ids, n.RunID)
				}
			}
		}
		src := opts.Usage
		if !opts.All {
			// The index keeps the ledgers of the runs it is asked for and
			// drops the others': a few runs are read from their files.
			src.Ledgers = nil
		}
		var err error
		if sel.table, sel.ledgers, err = src.Load(ctx, ids, opts.IO.ErrOut); err != nil {
			return err
		}
	}
	var st *views.Stats
	if opts.All {
		st = statsOfDigests(ctx, opts, all, sel)
	}
	if st == nil {
		var err error
		if st, err = scanStats(opts, runs, opts.All, sel); err != nil {
			return err
		}
	}
	if sel.table != nil {
		total, by := usage.Costs(sel.roots, sel.ledgers, sel.table.Version())
		if len(by) > 0 {
			st.Priced, st.PricedByProvider = &total, by
		}
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, st)
	}
	return printStats(opts.IO.Out, st)
}

// selection is what stats counts: the sessions the filters select, and
// the ledgers their cost and --model are read from.
type selection struct {
	opts    *Options
	table   *prices.Table
	ledgers map[string]*usage.Ledger
	// roots are the runs counted with their child runs, for the cost.
	roots []string
}

// keep reports whether a run (its listing line s) is counted: every run
// without a filter; with one, a top-level run that passes it (its child
// runs are counted through it).
func (sel *selection) keep(s views.RunSummary) bool {
	o := sel.opts
	if !o.filtered() {
		return true
	}
	if s.ParentRunID != "" && o.All || !o.Filter.Match(s) {
		return false
	}
	return o.Model == "" || usage.HasModel(s.RunID, sel.ledgers, o.Model)
}

// statsOfDigests counts every run from the index's digests, as scanStats
// counts them from the files; nil when the index cannot be used or a run
// needs the file's own error (unreadable, not a transcript).
func statsOfDigests(ctx context.Context, opts *Options, ids []string, sel *selection) *views.Stats {
	if opts.Digests == nil {
		return nil
	}
	digests, err := opts.Digests(ctx, ids, opts.IO.ErrOut)
	if err != nil {
		return nil
	}
	lookup := func(id string) (*views.RunDigest, bool) { d, ok := digests[id]; return d, ok }
	heads := map[string]views.RunHead{}
	for _, id := range ids {
		d := digests[id]
		if d == nil || d.LoadErr != "" || d.NotTranscript != "" {
			return nil
		}
		heads[id] = d.RunHead
	}
	skip := map[string]bool{}
	for id := range views.Superseded(heads, views.TreeTime(views.TreeFiles(digests))) {
		for _, n := range views.DigestTree(digests[id], lookup) {
			skip[n.RunID] = true
		}
	}
	st := views.NewStats()
	st.Superseded = len(skip)
	for _, id := range ids {
		if skip[id] {
			continue
		}
		tree := views.DigestTree(digests[id], lookup)
		if !sel.keep(views.SummarizeDigests(tree)) {
			continue
		}
		sel.roots = append(sel.roots, id)
		for _, n := range tree {
			if !skip[n.RunID] {
				st.AddDigest(n)
			}
		}
	}
	return st
}

// scanStats counts the runs (and their child runs) by reading them. With
// all (every run in storage), a run a renormalized rebuild stands for is
// left out, its child runs with it (views.Superseded), as statsOfDigests
// does.
func scanStats(opts *Options, runs []string, all bool, sel *selection) (*views.Stats, error) {
	st := views.NewStats()
	roots := make([]*views.RunNode, 0, len(runs))
	heads := map[string]views.RunHead{}
	trees := map[string][]string{} // a root's files and its child runs'
	for _, arg := range runs {
		root, err := opts.Load(arg)
		if err != nil {
			return nil, err
		}
		roots = append(roots, root)
		heads[root.RunID] = views.RunHead{RunID: root.RunID, ParentRunID: root.ParentRunID, RenormalizedFrom: root.RenormalizedFrom, SupersedesRuns: root.SupersedesRuns,
			SupersededBy: root.SupersededBy, Archived: root.Archived, Sessions: root.Sessions, Unkeyed: root.Unkeyed}
		for _, n := range root.Runs() {
			trees[root.RunID] = append(trees[root.RunID], n.File)
		}
	}
	skip := map[string]bool{}
	if all {
		superseded := views.Superseded(heads, views.TreeTime(func(id string) []string { return trees[id] }))
		for _, root := range roots {
			if superseded[root.RunID] {
				for _, n := range root.Runs() {
					skip[n.RunID] = true
				}
			}
		}
	}
	st.Superseded = len(skip)
	sel.roots = sel.roots[:0]
	for _, root := range roots {
		if skip[root.RunID] || !sel.keep(views.Summarize(root)) {
			continue
		}
		sel.roots = append(sel.roots, root.RunID)
		for _, n := range root.Runs() {
			if !skip[n.RunID] {
				st.Add(n.Source())
			}
		}
	}
	return st, nil
}

func printStats(w io.Writer, st *views.Stats) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	runs := fmt.Sprintf("runs %d", st.Runs)
	if st.SubRuns > 0 {
		// ls lists the top-level runs: say what the difference is.
		runs = fmt.Sprintf("runs %d (%d top-level, %d sub-runs)", st.Runs, st.Runs-st.SubRuns, st.SubRuns)
	}
	if st.Superseded > 0 {
		runs += fmt.Sprintf(" and %d left out: rebuilt by renormalize or archived again, each session counted once", st.Superseded)
	}
	p("%s, events %d, agent steps %d\n", runs, st.Events, st.AgentSteps)
	if st.Malformed+st.Unknown+st.Dangling > 0 {
		p("malformed lines %d, unknown types %d, dangling calls %d\n", st.Malformed, st.Unknown, st.Dangling)
	}
	section := func(title string, m map[string]int) {
		if len(m) == 0 {
			return
		}
		p("\n%s\n", title)
		for _, c := range views.Sorted(m) {
			p("  %-28s %d\n", views.Clip(c.Key, 28), c.Count)
		}
	}
	section("events by type", st.EventTypes)
	section("blocks by type", st.BlockTypes)
	section("tools by name", st.Tools)
	section("tools by fidelity", st.Fidelity)
	section("tool results by outcome", st.ToolResults)
	if len(st.Usage) > 0 || len(st.Cost) > 0 || st.SubRunUsage != nil || st.Priced != nil {
		p("\nusage and cost by provider\n")
		seen := map[string]bool{}
		for _, prov := range sortedKeys(st.Usage, st.Cost) {
			if seen[prov] {
				continue
			}
			seen[prov] = true
			line := "  " + views.Clip(prov, 16) + " " + usageLine(st.Usage[prov])
			if c, ok := st.PricedByProvider[prov]; ok {
				line += "  " + c.Text(true) + " " + c.Source
			} else if c, ok := st.Cost[prov]; ok {
				line += fmt.Sprintf("  $%.4f", c)
			}
			p("%s\n", strings.TrimRight(line, " "))
		}
		if st.SubRunUsage != nil {
			// Sub-agents' runs have no agent step: their tokens are in
			// their messages, and counted apart.
			p("  %s %s\n", views.Clip("sub-runs", 16), usageLine(st.SubRunUsage))
			p("  %s %s\n", views.Clip("in all", 16), usageLine(st.UsageInAll))
		}
		switch c := st.Priced; {
		case c != nil:
			p("  total cost %s (%s", c.Text(true), c.Source)
			if c.Prices != "" {
				p(", prices %s", c.Prices)
			}
			p(")\n")
			if len(c.UnpricedModels) > 0 {
				p("  cost unknown for %s (not in the price table, not stated by the provider)\n", strings.Join(c.UnpricedModels, ", "))
			}
		case len(st.Cost) > 0:
			p("  total cost $%.4f\n", st.CostUSD)
		}
	}
	p("\ndrift (unmapped native types)\n")
	if len(st.Drift) == 0 {
		p("  none\n")
	}
	for _, d := range st.Drift {
		p("  %s %s  %s  %d\n", views.Clip(d.Provider, 16), views.Clip(d.ProviderVersion, 20), views.Clip(d.NativeType, 40), d.Count)
	}
	return nil
}

// usageLine is u's figures as key=value, named as the transcript names
// them (uncached_input_tokens=...; views.UsageFigures).
func usageLine(u *transcript.Usage) string {
	var parts []string
	for _, f := range views.UsageFigures(u) {
		parts = append(parts, f.Key+"="+strconv.FormatInt(f.N, 10))
	}
	return strings.Join(parts, " ")
}

func sortedKeys(u map[string]*transcript.Usage, c map[string]float64) []string {
	m := map[string]int{}
	for k := range u {
		m[k] = 0
	}
	for k := range c {
		m[k] = 0
	}
	var out []string
	for _, e := range views.Sorted(m) {
		out = append(out, e.Key)
	}
	return out
}
