package ls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
)

// Options are the inputs of runLs.
type Options struct {
	IO *iostreams.IOStreams
	// List returns every run id in storage; Dir is where their
	// transcripts are.
	List func() ([]string, error)
	// Digests gives the runs' digests from the index (nil, or an error:
	// the transcripts are read instead, with the same result).
	Digests func(ctx context.Context, ids []string, w io.Writer) (map[string]*views.RunDigest, error)
	Dir     func() string
	// Usage gives the price table and the runs' usage ledgers for the
	// COST column and --json's "cost"; with no Usage.Prices no cost is
	// computed.
	Usage  cmdutil.UsageSource
	Logger func() *slog.Logger
	Now    func() time.Time
	Filter views.RunFilter
	cmdutil.Window
	Limit    int
	Children bool
	// Superseded lists the runs another stands for too (views.Superseded).
	Superseded bool
	JSON       bool
}

// NewCmdLs returns the ls command.
func NewCmdLs(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, List: f.ListRuns, Digests: f.RunDigests, Dir: f.TranscriptDir, Logger: f.Logger, Now: f.Now,
		Usage: f.UsageSource()}
	cmd := &cobra.Command{
		Use:     "ls [flags]",
		Aliases: []string{"list"},
		Short:   "List the runs in storage, newest first",
		Long: `List the runs in storage, newest first (by the time the run started): id,
name, status, start, duration, providers, steps, tool calls and cost, each
run counted with its child runs. The cost is what the providers stated,
else priced from the price table in force (twasm prices); "?" when no
figure is known (a model the table lacks), "+?" after a part. Child runs themselves (sub-agents,
sub-workflows) are listed only with --children. A run another stands for
is listed only with --superseded, so that a session is listed once as
stats, usage, search and serve count and find it once: the original of a
renormalize rebuild (unless it was written after the rebuild), an archive
sync found damaged and made again, a session's run ended before the
agent's other store's copy of it was archived (an older Cursor's workspace
composer, later in its global database), and a run recorded from an
agent's output (twasm record of claude -p, codex exec --json, ...) whose
session sync or import archived from the agent's store; --json then states
"superseded_by", the rebuild's "renormalized_from", or the standing
run's "supersedes_runs". An archived agent session
(twasm sync) stays open while it may grow: its status is its latest
part's (ok, error or incomplete, judged from the session log), marked
"(open)" on a terminal and "open": true in --json.

NAME is the name given to the run (record --name); a run without one (an
archived session, a record without --name) is named by its first prompt,
and --json has both ("name", "title"). --json also states the run's own
tokens ("usage"), its child runs' ("sub_run_usage") and the two together
("usage_in_all"), the cost with its provenance ("cost": micro_usd, usd,
source provider|priced|mixed|unknown, the price table, unpriced_models;
"cost_usd" is only what the providers stated), and the run it was
rebuilt from by renormalize ("renormalized_from").

On a terminal the id is cut to 8 characters, enough for any RUN argument
(every command takes a unique prefix of a run id); in a pipe each run is
one tab-separated line with the full id, an RFC 3339 start, the duration
in milliseconds and the cost in dollars, in the column order:
ID NAME STATUS STARTED DURATION PROVIDERS STEPS TOOLS COST

--since and --until take a time (today, yesterday, 2026-11-20, 20261120,
2026-11-20T15:04, RFC 3339) or an age (90m, 36h, 7d, 2w) meaning that long
ago.

--project DIR: ` + cmdutil.ProjectHelp + `. --json states each run's "project".`,
		Example: `  twasm ls
  twasm ls --provider claude --status error --since 7d
  twasm ls --name nightly --limit 5
  twasm ls --project .
  twasm ls --json | jq -r 'select(.cost_usd > 1) | .run_id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return cmdutil.FlagErrorf("--limit must not be negative")
			}
			var err error
			if opts.Filter.Since, opts.Filter.Until, opts.Filter.Project, err = opts.Window.Read(f, opts.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runLs(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Filter.Provider, "provider", "", "only runs with an agent step of this provider")
	fl.StringVar(&opts.Filter.Status, "status", "", "only runs with this status (ok, error, incomplete, cancelled, running)")
	fl.StringVar(&opts.Filter.Name, "name", "", "only runs whose name or first prompt contains this (case-insensitive)")
	opts.Window.AddFlags(fl, "only runs started at or after this time or age", "only runs started before this time or age", "runs")
	fl.IntVarP(&opts.Limit, "limit", "n", 0, "show at most this many runs (0: all)")
	fl.BoolVar(&opts.Children, "children", false, "list child runs too")
	fl.BoolVar(&opts.Superseded, "superseded", false, "list runs another run stands for too (renormalized originals, repaired archives, a session's copy archived again from another store)")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object per run (JSON Lines)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"ok", "error", "incomplete", "cancelled", "running"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runLs(ctx context.Context, opts *Options) error {
	ids, err := opts.List()
	if err != nil {
		return err
	}
	var l listing
	if digests := digestsOf(ctx, opts, ids); digests != nil {
		l = listDigests(opts, ids, digests)
	} else {
		l = listScan(opts, ids)
	}
	rows := l.rows
	views.SortNewestFirst(rows)
	if opts.Limit > 0 && len(rows) > opts.Limit {
		rows = rows[:opts.Limit]
	}
	if err := addCosts(ctx, opts, ids, rows); err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSONLines(opts.IO.Out, rows)
	}
	tty := opts.IO.IsStdoutTTY()
	t := cmdutil.NewTable(opts.IO.Out, tty, "ID", "NAME", "STATUS", "STARTED", "DURATION", "PROVIDERS", "STEPS", "TOOLS", "COST")
	for _, r := range rows {
		id, started, dur, cost := r.RunID, "", "", ""
		if tty {
			id = views.ShortID(id)
		}
		if r.Started != nil {
			started = r.Started.UTC().Format(time.RFC3339)
			if tty {
				started = r.Started.Local().Format("2006-01-02 15:04")
			}
		}
		if r.DurationMS != nil {
			dur = strconv.FormatInt(*r.DurationMS, 10)
			if tty {
				dur = views.FormatDuration(*r.DurationMS)
			}
		}
		if r.Cost != nil {
			cost = r.Cost.Text(tty)
		} else if r.CostUSD != nil {
			cost = costString(*r.CostUSD, tty)
		}
		name := views.DisplayName(r.RunHead)
		if tty {
			name = views.Clip(name, 48)
		}
		status := r.Status
		if tty && r.Open {
			status += " (open)"
		}
		t.Row(id, name, status, started, dur, strings.Join(r.Providers, ","), strconv.Itoa(r.Steps), strconv.Itoa(r.Tools), cost)
	}
	if tty && l.superseded > 0 {
		runs := "runs"
		if l.superseded == 1 {
			runs = "run"
		}
		fmt.Fprintf(opts.IO.ErrOut, "%d superseded %s not listed (--superseded lists them)\n", l.superseded, runs)
	}
	if tty && len(rows) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no run matches in %s\n", filepath.Dir(opts.Dir()))
		return nil
	}
	return t.Render()
}

// digestsOf returns the runs' digests from the index, nil when it cannot
// be used (said in the log): the transcripts are read instead.
func digestsOf(ctx context.Context, opts *Options, ids []string) map[string]*views.RunDigest {
	if opts.Digests == nil {
		return nil
	}
	d, err := opts.Digests(ctx, ids, opts.IO.ErrOut)
	if err != nil {
		opts.Logger().Warn("index not used: reading the transcripts", "err", err)
		return nil
	}
	return d
}

// listDigests lists the runs from their digests: what listScan lists.
func listDigests(opts *Options, ids []string, digests map[string]*views.RunDigest) listing {
	lookup := func(id string) (*views.RunDigest, bool) { d, ok := digests[id]; return d, ok }
	return list(opts, ids, func(id string) (string, func() (views.RunSummary, []member), error) {
		d := digests[id]
		if d.LoadErr != "" {
			return "", nil, errors.New(d.LoadErr)
		}
		return d.ParentRunID, func() (views.RunSummary, []member) {
			tree := views.DigestTree(d, lookup)
			members := make([]member, 0, len(tree))
			for _, n := range tree {
				members = append(members, member{n.RunID, n.File})
			}
			return views.SummarizeDigests(tree), members
		}, nil
	})
}

// listScan lists the runs by reading every transcript.
func listScan(opts *Options, ids []string) listing {
	loader := views.Loader{Dir: opts.Dir()}
	return list(opts, ids, func(id string) (string, func() (views.RunSummary, []member), error) {
		run, err := loader.Load(id)
		if err != nil {
			return "", nil, err
		}
		return views.BuildRun(run).ParentRunID, func() (views.RunSummary, []member) {
			root := views.BuildTree(loader, run)
			var members []member
			for _, n := range root.Runs() {
				members = append(members, member{n.RunID, n.File})
			}
			return views.Summarize(root), members
		}, nil
	})
}

// member is a run of a listed run's tree (itself included) and its file.
type member struct{ runID, file string }

// listing is what ls lists: the rows, and how many runs were left out
// as superseded.
type listing struct {
	rows       []views.RunSummary
	superseded int
}

// list is the listing of the runs that one reads: their parent run and
// their listing line with the runs of their tree (made only for the runs
// listed). Unless opts.Superseded, a top-level run another stands
// for (views.Superseded: the original of a renormalize rebuild, a damaged
// archive repaired by sync) is left out, as stats, usage and search leave
// it out, so that a session is listed once.
func list(opts *Options, ids []string, one func(id string) (parent string, summary func() (views.RunSummary, []member), err error)) listing {
	var all []views.RunSummary
	heads := map[string]views.RunHead{}
	trees := map[string][]member{}
	for _, id := range ids {
		parent, summary, err := one(id)
		if err != nil {
			opts.Logger().Warn("run not listed", "run", id, "err", err)
			continue
		}
		if parent != "" && !opts.Children {
			continue
		}
		s, tree := summary()
		all = append(all, s)
		if parent == "" {
			heads[s.RunID] = s.RunHead
			trees[s.RunID] = tree
		}
	}
	gone := map[string]bool{} // superseded runs and, with --children, their trees
	if !opts.Superseded {
		files := func(id string) []string {
			var out []string
			for _, m := range trees[id] {
				out = append(out, m.file)
			}
			return out
		}
		for id := range views.Superseded(heads, views.TreeTime(files)) {
			for _, m := range trees[id] {
				gone[m.runID] = true
			}
		}
	}
	var out listing
	for _, s := range all {
		if gone[s.RunID] {
			if heads[s.RunID].RunID != "" {
				out.superseded++ // counted once, without its child runs
			}
			continue
		}
		if opts.Filter.Match(s) {
			out.rows = append(out.rows, s)
		}
	}
	return out
}

// addCosts sets each row's Cost from the runs' usage ledgers (package
// usage: what a report by session says of the run).
func addCosts(ctx context.Context, opts *Options, ids []string, rows []views.RunSummary) error {
	if opts.Usage.Prices == nil || len(rows) == 0 {
		return nil
	}
	tbl, ledgers, err := opts.Usage.Load(ctx, ids, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	for i := range rows {
		if c, ok := usage.TreeCost(rows[i].RunID, ledgers, tbl.Version()); ok {
			rows[i].Cost = &c
		}
	}
	return nil
}

// costString is a cost in dollars as ls prints it: "$0.0862" on a
// terminal; in a pipe the number to the micro-dollar, without the float
// noise of a sum (0.08619, not 0.08618999999999999).
func costString(usd float64, tty bool) string {
	if tty {
		return fmt.Sprintf("$%.4f", usd)
	}
	return strconv.FormatFloat(math.Round(usd*1e6)/1e6, 'f', -1, 64)
}
