package searchcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/views"
)

// Options are the search flags.
type Options struct {
	F     *cmdutil.Factory
	Query index.Query
	cmdutil.Window
	JSON bool
}

// NewCmdSearch returns the search command.
func NewCmdSearch(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search every run: prompts, answers, thinking, tool calls and outputs, commands, file paths",
		Long: `Search finds words across every run in storage: the user's prompts, the
assistant's text and thinking, tool calls (name, command, input: file paths
are in it) and their outputs, commands, and the errors of steps and runs.
Every word must match (in any order); "a quoted phrase" must match as a
phrase. --fts takes QUERY as an SQLite FTS5 expression instead (OR, NOT,
NEAR, prefix*).

Each hit shows the run, the step path, the seq, the time and a snippet with
the matches marked; open one with "twasm view RUN --seq N". --json prints
one hit per line.

The index (<storage>/index.db, SQLite) is built from the transcripts and
brought up to date before every search from the change journal the writers
keep: a run added, grown or changed is read again, and a deleted or damaged
index is rebuilt (and said so). "twasm index --check" checks every file,
after a tool other than twasm appended to a transcript.
Filters: --provider, --model, --status (a hit's own outcome where it has
one: a tool call's and its result's, ok, error, denied or cancelled; else
its run's status: ok, error, incomplete, cancelled, running), --since/--until
(of the event), --run (an id or its start), --tool (tool name), --type
(text, thinking, command, stream, tool_call, tool_result, error), --role
(user, assistant, tool), --project (the run's project directory, or one
below it; a sub-run without one is its parent run's). Filters alone, with
no words, list what they select, newest first.

With --limit, a search whose words and filters match more than 2,000
messages ranks only the newest 2,000 of them (the last indexed; system
prompts and injected context, one text shared by every session, after the
rest) and says so on stderr: ranking every match of a word found in every session takes
seconds. Without --limit every match is ranked.

--project DIR: ` + cmdutil.ProjectHelp + `.

What a person or the model wrote ranks above what the agent's tooling
injected (injected context, system prompts: marked "injected"); a text
found again in other places (the same instructions in every session) is
shown once, with how many more there are (--every lists each). Relevance
is bm25 over each run's distinct texts: a text a run repeats verbatim
(an answer said again, the same tool output) counts once, a system prompt or
injected context once in the whole index however many sessions were sent
it, and each place it was said is still a hit. A run that
another holds again is left out, with its sub-runs, as ls, stats and usage
leave it out, so that a session is found once: the sub-agents' runs of
an archive a killed sync or import left unfinished, which the next one
archived again, such an archive of a session that is archived whole in
another run, a run recorded from an agent's output (twasm record) whose
session twasm sync archived from the agent's store, and the original of a
renormalize rebuild (unless it was written after the rebuild). --superseded
finds them too (ls --superseded lists them), each such hit marked
"(superseded)" ("superseded": true in --json). Exit 1 when nothing matches,
as grep does.`,
		Example: `  twasm search "permission denied"
  twasm search --tool Bash --status error pytest
  twasm search --tool Bash --status error --since yesterday
  twasm search --provider codex --since 7d apply_patch src/main.go
  twasm search --json --type thinking migration | jq .run_id
  twasm search --project . flaky test`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query.Text = strings.Join(args, " ")
			var pf views.ProjectFilter
			var err error
			if opts.Query.Since, opts.Query.Until, pf, err = opts.Window.Read(f, f.Now()); err != nil {
				return err
			}
			opts.Query.Projects = pf.Dirs
			if opts.Query.Limit < 0 {
				return cmdutil.FlagErrorf("--limit must not be negative")
			}
			if len(args) == 0 && !opts.Query.HasFilter() {
				return cmdutil.FlagErrorf("give words to find, a filter, or both")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	q := &opts.Query
	fl.StringVar(&q.Provider, "provider", "", "only runs with an agent step of this provider")
	fl.StringVar(&q.Model, "model", "", "only runs that used this model (or a name starting with it)")
	fl.StringVar(&q.Status, "status", "", "only hits with this outcome: a tool call's or result's own (ok, error, denied, cancelled), else its run's (ok, error, incomplete, cancelled, running)")
	opts.Window.AddFlags(fl, "only events at or after: an age (7d, 12h), a date (2026-11-20, 20261120) or today, yesterday",
		"only events before: an age (7d, 12h), a date (2026-11-20, 20261120) or today, yesterday", "runs")
	fl.StringVar(&q.Run, "run", "", "only this run (an id or the start of one)")
	fl.StringVar(&q.Tool, "tool", "", "only tool calls and results of this tool")
	fl.StringVar(&q.Kind, "type", "", "only this kind: text, thinking, command, stream, tool_call, tool_result, error")
	fl.StringVar(&q.Role, "role", "", "only this role: user, assistant, tool")
	fl.IntVar(&q.Limit, "limit", 20, "at most this many hits (0: no limit)")
	fl.BoolVar(&q.Raw, "fts", false, "QUERY is an SQLite FTS5 expression")
	fl.BoolVar(&q.Every, "every", false, "list every hit, none folded into another with the same text")
	fl.BoolVar(&q.Superseded, "superseded", false, "find in runs another run stands for too (a recorded run whose session sync archived, renormalized originals, repaired archives)")
	fl.BoolVar(&opts.JSON, "json", false, "one JSON object per hit")
	return cmd
}

// Open opens the storage's index and brings it up to date, reporting on
// w a rebuild and why.
func Open(ctx context.Context, f *cmdutil.Factory, w io.Writer) (*index.Index, error) {
	ix, why, err := index.Open(ctx, f.StorageRoot())
	if err != nil {
		return nil, err
	}
	if why != "" {
		fmt.Fprintf(w, "twasm: search index %s rebuilt from the transcripts (%s)\n", index.File(f.StorageRoot()), why)
	}
	if _, err := ix.Update(ctx); err != nil {
		ix.Close()
		if index.IsCorrupt(err) {
			// Damaged while in use: start again from the transcripts.
			return reopen(ctx, f, w, err)
		}
		return nil, err
	}
	return ix, nil
}

func reopen(ctx context.Context, f *cmdutil.Factory, w io.Writer, cause error) (*index.Index, error) {
	if err := index.Remove(f.StorageRoot()); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "twasm: search index rebuilt from the transcripts (%v)\n", cause)
	ix, _, err := index.Open(ctx, f.StorageRoot())
	if err != nil {
		return nil, err
	}
	if _, err := ix.Update(ctx); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// refreshPendingKiB is the budget of FTS5's pending terms of a command
// that refreshes the index after it wrote runs (Refresh, RefreshRuns):
// FTS5's own 1 MiB, not Open's 4 MiB, whose memory (about 8 MiB more)
// a writer such as sync, whose peak RSS has a bound (#31), cannot spare.
const refreshPendingKiB = 1024

// Refresh brings the index up to date after a command wrote runs (their
// sub-agent runs included: every transcript is checked, by size and mtime
// for the unchanged ones). The index is a cache: a failure is worth a
// warning, never the command's failure.
func Refresh(ctx context.Context, f *cmdutil.Factory) error {
	ix, _, err := index.Open(ctx, f.StorageRoot())
	if err != nil {
		return err
	}
	defer ix.Close()
	ix.SetPendingKiB(refreshPendingKiB)
	_, err = ix.Update(ctx)
	return err
}

// RefreshRuns brings the given runs, and the child runs they link to, up
// to date in the index (creating it) after a command wrote them: unlike
// Refresh, its cost does not grow with the number of runs in storage
// (other runs are checked by the next search, ls or stats, as always). A
// failure is worth a warning, never the command's failure.
func RefreshRuns(ctx context.Context, f *cmdutil.Factory, runIDs []string) error {
	ix, _, err := index.Open(ctx, f.StorageRoot())
	if err != nil {
		return err
	}
	defer ix.Close()
	ix.SetPendingKiB(refreshPendingKiB)
	_, err = ix.UpdateRuns(ctx, runIDs)
	return err
}

// markOpen and markClose mark a match in a snippet until it is printed.
const markOpen, markClose = "\ue000", "\ue001"

// Run searches.
func Run(ctx context.Context, opts *Options) error {
	ios := opts.F.IOStreams
	if err := opts.F.RequireStorage(); err != nil {
		return err
	}
	ix, err := Open(ctx, opts.F, ios.ErrOut)
	if err != nil {
		return err
	}
	defer ix.Close()
	q := opts.Query
	if q.Limit == 0 {
		q.Limit = 1 << 30
	}
	// Text output marks matches with two private-use runes, which survive
	// views.OneLine; the snippet's own escapes do not.
	open, close := "«", "»"
	if ios.ColorEnabled() {
		open, close = "\x1b[1;33m", "\x1b[0m"
	}
	if !opts.JSON {
		q.MarkOpen, q.MarkClose = markOpen, markClose
	}
	res, err := ix.SearchResults(ctx, q)
	hits := res.Hits
	if err != nil {
		if strings.HasPrefix(err.Error(), "query ") || strings.HasPrefix(err.Error(), "empty query") {
			return &cmdutil.FlagError{Err: err}
		}
		return err
	}
	// Said on stderr in either form: stdout stays the hits.
	if res.RankedAmong > 0 {
		fmt.Fprintf(ios.ErrOut, "more than %d messages match: hits ranked among the newest %d (the last indexed); older ones are not shown (search without --limit, or add words or filters, to rank every match)\n", res.RankedAmong, res.RankedAmong)
	}
	// With --superseded a hit of a run another holds again is marked,
	// as serve's list marks the run.
	var gone map[string]bool
	if q.Superseded && len(hits) > 0 {
		if gone, err = ix.Gone(ctx); err != nil {
			return err
		}
	}
	if opts.JSON {
		for _, h := range hits {
			b, _ := json.Marshal(jsonHit{Hit: h, Superseded: gone[h.RunID]})
			fmt.Fprintln(ios.Out, string(b))
		}
		return nil
	}
	for _, h := range hits {
		when := "-"
		if !h.Time.IsZero() {
			when = h.Time.Local().Format("2006-01-02 15:04")
		}
		what := h.Kind
		if h.Tool != "" {
			what += " " + h.Tool
		} else if h.Role != "" {
			what = h.Role + " " + what
		}
		if h.Injected {
			what += " (injected)"
		}
		if gone[h.RunID] {
			what += " (superseded)"
		}
		if h.Kind == "tool_call" || h.Kind == "tool_result" {
			if h.Status != "" && h.Status != h.RunStatus || h.Status == "error" {
				what += " " + h.Status
			}
		}
		path := h.Path
		if path == "" {
			path = "(run)"
		}
		// Every field but the time comes from transcript content: none
		// may drive the terminal (views.OneLine, as every view does).
		snippet := strings.NewReplacer(markOpen, open, markClose, close).Replace(views.OneLine(h.Snippet))
		fmt.Fprintf(ios.Out, "%s  %s  %s  seq %d  %s  %s\n    %s\n", views.OneLine(h.RunID[:min(8, len(h.RunID))]), when,
			views.OneLine(path), h.Seq, views.OneLine(what), views.Clip(runName(h), 60), snippet)
		if h.Also > 0 {
			fmt.Fprintf(ios.Out, "    (and %d more with the same text)\n", h.Also)
		}
	}
	if len(hits) == 0 {
		fmt.Fprintln(ios.ErrOut, "no match")
		return cmdutil.ErrSilent
	}
	if len(hits) == q.Limit {
		fmt.Fprintf(ios.ErrOut, "%d hits shown (--limit); open one with: twasm view RUN --seq N\n", len(hits))
	} else {
		fmt.Fprintf(ios.ErrOut, "%d hit(s); open one with: twasm view RUN --seq N\n", len(hits))
	}
	return nil
}

// jsonHit is a hit as --json prints it: Superseded marks a hit of a run
// another holds again, found with --superseded.
type jsonHit struct {
	index.Hit
	Superseded bool `json:"superseded,omitempty"`
}

// runName is what a hit's run is called, as ls calls it: its first
// prompt where twasm made its name up (views.DisplayName).
func runName(h index.Hit) string {
	return views.DisplayName(views.RunHead{RunID: h.RunID, Name: h.RunName, Title: h.RunTitle,
		AutoName: views.IsAutoName(h.RunName, h.RunSession)})
}
