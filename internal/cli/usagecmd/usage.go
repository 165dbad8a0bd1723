package usagecmd

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
)

// Options are the inputs of runUsage.
type Options struct {
	IO   *iostreams.IOStreams
	Now  func() time.Time
	List func() ([]string, error)
	// Usage gives the price table and the runs' ledgers, from the index
	// (or the transcripts when it cannot be used, with the same result).
	Usage   cmdutil.UsageSource
	ModTime func(id string) time.Time

	Report usage.Options
	cmdutil.Window
	Timezone string
	JSON     bool
}

// NewCmdUsage returns the usage command.
func NewCmdUsage(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Now: f.Now, List: f.ListRuns, Usage: f.UsageSource(), ModTime: f.FileModTime}
	cmd := &cobra.Command{
		Use:   "usage [flags]",
		Short: "Tokens and cost by day, week, month, session, model, agent or project",
		Long: `Sum the tokens of every archived session and what they cost, by day (the
default), week (from Monday), month, session, model, provider (the agent)
or project (the session's project directory; "(no project)" when its
agent's data names none),
in the local time zone (--timezone UTC cuts days as the consoles do). The figures are as the providers bill them:
uncached input, cache read, cache write and output (reasoning included).

A session is counted once: its sub-agents with it, a run rebuilt by
"twasm renormalize" in place of the original, a part archived again once.
A fork counts what it did after the fork, not the turns it copied from
its parent (except a Codex fork that a build before 0.125 wrote by
copying its parent's history, a Copilot CLI fork and a duplicated or
forked Cursor composer: see the README).
Every grouping counts the same usage, so the totals agree.

Cost says where it comes from: "provider" (stated by the agent: Claude's
result line, Pi, Cline, OpenCode...), "priced" (from the price table in
force: "twasm prices" says which), "mixed" (both), "unknown" (a model the
table lacks, named: its cost is unknown, never 0). Claude Code's stated
cost counts its sub-agents' calls too: their tokens are counted on their
own model's rows, their cost once, in the parent's (their rows show 0,
"provider").

--since and --until take a time (today, yesterday, 2026-11-20, 20261120,
2026-11-20T15:04, RFC 3339) or an age (36h, 7d, 2w); a day given as
--until is included. --model matches a part of the model's name.

--project DIR: ` + cmdutil.ProjectHelp + `
(a session's project is its top-level run's, else its first sub-agent's).

It answers from the index (<storage>/index.db), reading only the
transcripts that changed since.`,
		Example: `  twasm usage
  twasm usage --by model --since 7d
  twasm usage --by session --provider claude --since 20261101 --until 20261130
  twasm usage --by month --breakdown --json | jq '.total.cost'
  twasm usage --by project --since 30d
  twasm usage --project . --by week`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseWhen(opts); err != nil {
				return err
			}
			var err error
			if opts.Report.Project, err = f.ProjectFilter(opts.Project); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runUsage(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Report.By, "by", usage.ByDay, "group by "+strings.Join(usage.Groupings, ", "))
	fl.StringVar(&opts.Report.Provider, "provider", "", "only this provider (agent)")
	fl.StringVar(&opts.Report.Model, "model", "", "only models whose name contains this (case-insensitive)")
	opts.Window.AddFlags(fl, "only usage at or after this time or age", "only usage before this time (a day: up to its end)", "sessions")
	fl.BoolVar(&opts.Report.Breakdown, "breakdown", false, "each group's figures per model")
	fl.StringVar(&opts.Timezone, "timezone", "", "cut days in this time zone (UTC, Europe/Paris; default the local one)")
	fl.BoolVar(&opts.JSON, "json", false, "print the report as one JSON object")
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions(usage.Groupings, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// dayOnly and wallClock are compiled on first use, not when the process
// starts: every twasm command links this package, few read --since.
var (
	dayOnly = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\d{8}|\d{4}-\d{2}-\d{2}|today|yesterday)$`)
	})
	// wallClock is a time with no zone of its own: read in --timezone.
	wallClock = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\d{8}|\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?|today|yesterday)$`)
	})
)

// parseWhen reads --since and --until; a day given as --until includes
// that day.
func parseWhen(opts *Options) error {
	var err error
	if opts.Timezone != "" {
		if opts.Report.Location, err = time.LoadLocation(opts.Timezone); err != nil {
			return cmdutil.FlagErrorf("--timezone: %v", err)
		}
	}
	if opts.Report.Since, opts.Report.Until, err = opts.Window.Times(opts.Now()); err != nil {
		return err
	}
	if loc := opts.Report.Location; loc != nil {
		for _, w := range []struct {
			flag string
			t    *time.Time
		}{{opts.Since, &opts.Report.Since}, {opts.Until, &opts.Report.Until}} {
			if wallClock().MatchString(strings.ToLower(w.flag)) {
				t := *w.t
				*w.t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
			}
		}
	}
	if dayOnly().MatchString(strings.ToLower(opts.Until)) {
		opts.Report.Until = opts.Report.Until.AddDate(0, 0, 1)
	}
	for _, g := range usage.Groupings {
		if opts.Report.By == g {
			return nil
		}
	}
	return cmdutil.FlagErrorf("--by %q: one of %s", opts.Report.By, strings.Join(usage.Groupings, ", "))
}

func runUsage(ctx context.Context, opts *Options) error {
	ids, err := opts.List()
	if err != nil {
		return &cmdutil.InputError{Err: fmt.Errorf("list transcripts: %w", err)}
	}
	tbl, ledgers, err := opts.Usage.Load(ctx, ids, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	rep, err := usage.Build(usage.Sources{IDs: ids, Ledgers: ledgers, ModTime: opts.ModTime}, tbl.Version(), opts.Report)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	if opts.JSON {
		err = cmdutil.WriteJSON(opts.IO.Out, rep)
	} else {
		err = printReport(opts.IO, rep)
	}
	if err != nil || len(rep.Unreadable) == 0 {
		return err
	}
	// Input that cannot be read: each file named with why, the exit
	// status stats gives it (2), after the report of the rest.
	for _, u := range rep.Unreadable {
		fmt.Fprintf(opts.IO.ErrOut, "twasm: run %s: %s\n", u.RunID, u.Error)
	}
	return &cmdutil.InputError{Err: fmt.Errorf("%d of %d runs could not be read and are not counted", len(rep.Unreadable), len(ids))}
}

func printReport(ios *iostreams.IOStreams, rep *usage.Report) error {
	tty := ios.IsStdoutTTY()
	key := strings.ToUpper(rep.By)
	t := cmdutil.NewTable(ios.Out, tty, key, "SESSIONS", "UNCACHED IN", "CACHE READ", "CACHE WRITE", "OUTPUT", "COST", "SOURCE")
	row := func(label string, g *usage.Group) {
		fig := map[string]int64{}
		for _, f := range views.UsageFigures(g.Usage) {
			fig[f.Key] = f.N
		}
		num := func(k string) string { return strconv.FormatInt(fig[k], 10) }
		t.Row(label, strconv.Itoa(g.Sessions), num("uncached_input_tokens"), num("cache_read_tokens"), num("cache_write_tokens"),
			num("output_tokens"), g.Cost.Text(tty), g.Cost.Source)
	}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		label := g.Key
		if g.Name != "" && tty {
			label = views.ShortID(g.Key) + " " + views.Clip(g.Name, 40)
		}
		row(label, g)
		if rep.By == usage.ByModel {
			continue // each group is one model already
		}
		for j := range g.Models {
			row("  "+g.Models[j].Key, &g.Models[j])
		}
	}
	row("total", &rep.Total)
	if err := t.Render(); err != nil {
		return err
	}
	w := ios.ErrOut
	if len(rep.Total.Cost.UnpricedModels) > 0 {
		fmt.Fprintf(w, "twasm: cost unknown (not in the price table %s, not stated by the provider) for: %s\n", rep.Prices, strings.Join(rep.Total.Cost.UnpricedModels, ", "))
	}
	if n := rep.Total.Cost.TierUnknown; n > 0 {
		fmt.Fprintf(w, "twasm: %d step totals above a long-context threshold priced at the base rates (their messages state no usage of their own)\n", n)
	}
	if n := rep.Total.Cost.Batch; n > 0 {
		fmt.Fprintf(w, "twasm: %d figures priced at the batch API's rate (their capture is a batch job's results, or their usage states the batch tier)\n", n)
	}
	if n := rep.Total.Cost.Flex; n > 0 {
		fmt.Fprintf(w, "twasm: %d figures priced at the flex tier's rates (their responses state service_tier flex)\n", n)
	}
	if n := rep.Total.Cost.Priority; n > 0 {
		fmt.Fprintf(w, "twasm: %d figures priced at the priority tier's rates (their responses state service_tier priority)\n", n)
	}
	return nil
}
