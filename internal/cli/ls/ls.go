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
	JSON     bool
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
sub-workflows) are listed only with --children. An archived agent session
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
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object per run (JSON Lines)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"ok", "error", "incomplete", "cancelled", "running"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runLs(ctx context.Context, opts *Options) error {
	ids, err := opts.List()
	if err != nil {
		return err
	}
	var rows []views.RunSummary
	if digests := digestsOf(ctx, opts, ids); digests != nil {
		rows = listDigests(opts, ids, digests)
	} else {
		rows = listScan(opts, ids)
	}
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
func listDigests(opts *Options, ids []string, digests map[string]*views.RunDigest) []views.RunSummary {
	lookup := func(id string) (*views.RunDigest, bool) { d, ok := digests[id]; return d, ok }
	return list(opts, ids, func(id string) (string, func() views.RunSummary, error) {
		d := digests[id]
		if d.LoadErr != "" {
			return "", nil, errors.New(d.LoadErr)
		}
		return d.ParentRunID, func() views.RunSummary { return views.SummarizeDigests(views.DigestTree(d, lookup)) }, nil
	})
}

// listScan lists the runs by reading every transcript.
func listScan(opts *Options, ids []string) []views.RunSummary {
	loader := views.Loader{Dir: opts.Dir()}
	return list(opts, ids, func(id string) (string, func() views.RunSummary, error) {
		run, err := loader.Load(id)
		if err != nil {
			return "", nil, err
		}
		return views.BuildRun(run).ParentRunID, func() views.RunSummary { return views.Summarize(views.BuildTree(loader, run)) }, nil
	})
}

// list is the listing of the runs that one reads: their parent run and
// their listing line (made only for the runs listed).
func list(opts *Options, ids []string, one func(id string) (parent string, summary func() views.RunSummary, err error)) []views.RunSummary {
	var rows []views.RunSummary
	for _, id := range ids {
		parent, summary, err := one(id)
		if err != nil {
			opts.Logger().Warn("run not listed", "run", id, "err", err)
			continue
		}
		if parent != "" && !opts.Children {
			continue
		}
		if s := summary(); opts.Filter.Match(s) {
			rows = append(rows, s)
		}
	}
	return rows
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
