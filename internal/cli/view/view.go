package view

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// Options are the inputs of runView.
type Options struct {
	IO        *iostreams.IOStreams
	Load      func(arg string) (*views.RunNode, error)
	Run       string
	Only      []string
	Path      string
	Format    string
	Children  string
	MaxOutput int
	JSON      bool
	// Seq opens the run at one event (a search hit): that event, then the
	// events around it in the step it belongs to.
	Seq uint64
	// Context is how many events of the hit's step are shown before and
	// after it; negative shows the whole step.
	Context int
	// Prices gives the price table each agent step's cost is priced with
	// (nil: the footer shows only the cost the provider stated).
	Prices func() (*prices.Table, string, error)
}

// NewCmdView returns the view command.
func NewCmdView(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Load: f.LoadTree, Prices: f.Prices}
	cmd := &cobra.Command{
		Use:   "view RUN",
		Short: "Render a run as a readable transcript",
		Long: `Render a run as markdown a person can read: a header with the run's id,
name, status, start and duration and, per agent step, the provider, model,
session and usage; then each step: the prompt (the system prompt folded
away), the assistant's messages with their times (thinking folded in
<details>), and each tool call once, with its result beside it: commands as
shell, patches and file edits (apply_patch, Edit, MultiEdit, Write,
file_change) as unified diffs, other inputs as JSON, long outputs and
errors folded and cut to --max-output bytes; then a footer per agent step
(status, exit code, the provider's error, warnings, lost and unmapped
lines, the command line, the tail of the agent's stderr, the final answer
when no message holds it); then the problems: malformed lines, unknown
types, dangling tool calls, an unfinished run. Terminal escape sequences
are removed.

Child runs (sub-workflows, sub-agents) are rendered inline under their
call_workflow step; --children link prints a pointer instead.

--only keeps some sections (dialog, thinking, tools, errors; repeat the flag
or give a comma list); errors keeps failed, denied and cancelled tool calls
and the footer of a step that is not ok. --path keeps one step or sub-run: its full dot path
or anything below it ("review", "review.subagent"). --seq N opens the run
at event N (a hit of "twasm search"): that event first, then the events
around it in its step (--context of them before and after, -1 for the
whole step), then the commands that read on before and after.`,
		Example: `  twasm view 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a > run.md
  twasm view --only dialog,thinking run.jsonl
  twasm view --only errors --format text run.jsonl
  twasm view --path review.subagent --format json run.jsonl`,
		Args:              cmdutil.ExactArgs(1, "RUN"),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if opts.JSON {
				if cmd.Flags().Changed("format") && opts.Format != "json" {
					return cmdutil.FlagErrorf("--json and --format %s conflict", opts.Format)
				}
				opts.Format = "json"
			}
			if runF != nil {
				return runF(opts)
			}
			return runView(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Only, "only", nil, "show only these sections: dialog, thinking, tools, errors")
	fl.StringVar(&opts.Path, "path", "", "show only the step or sub-run at this dot path and below")
	fl.StringVar(&opts.Format, "format", views.FormatMarkdown, "output format: md, text or json")
	fl.StringVar(&opts.Children, "children", views.ChildrenInline, "child runs: inline or link")
	fl.IntVar(&opts.MaxOutput, "max-output", views.DefaultMaxOutput, "bytes of tool output shown before truncating (-1: all)")
	fl.Uint64Var(&opts.Seq, "seq", 0, "open the run at this event (a search hit): the event, then the events around it")
	fl.IntVar(&opts.Context, "context", 10, "with --seq: events of its step shown before and after it (-1: the whole step)")
	fl.BoolVar(&opts.JSON, "json", false, "print the selected events as transcript lines (JSON Lines; same as --format json)")
	_ = cmd.RegisterFlagCompletionFunc("only", cobra.FixedCompletions(views.SectionNames, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"md", "text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runView(opts *Options) error {
	only, err := views.ParseSections(opts.Only)
	if err != nil {
		return &cmdutil.FlagError{Err: err}
	}
	if opts.MaxOutput == 0 {
		// 0 would mean "the default" to views; on the command line it
		// means what it says.
		opts.MaxOutput = 1
	}
	vo := views.ViewOptions{Only: only, Path: opts.Path, Format: opts.Format, Children: opts.Children, MaxOutput: opts.MaxOutput}
	switch opts.Format {
	case views.FormatMarkdown, views.FormatText, "json":
	default:
		return cmdutil.FlagErrorf("unknown --format %q (valid: md, text, json)", opts.Format)
	}
	root, err := opts.Load(opts.Run)
	if err != nil {
		return err
	}
	var readOn []string
	if opts.Seq > 0 {
		if readOn, err = atSeq(opts, root, &vo); err != nil || opts.Format == "json" {
			return err
		}
	}
	if opts.Path != "" && !views.HasPath(root, opts.Path) {
		paths := strings.Join(views.StepPaths(root), ", ")
		return &cmdutil.InputError{Err: fmt.Errorf("--path %q: no step of run %s is at or below it (its steps: %s)", opts.Path, root.RunID, cmp.Or(paths, "none"))}
	}
	if opts.Format == "json" {
		return writeEvents(opts, views.SelectEvents(root, vo))
	}
	if vo.StepCosts, err = stepCosts(opts, root); err != nil {
		return err
	}
	if err := views.WriteView(opts.IO.Out, root, vo); err != nil {
		if errors.Is(err, views.ErrBadOption) {
			return &cmdutil.FlagError{Err: err}
		}
		return err
	}
	for _, l := range readOn {
		if _, err := fmt.Fprintln(opts.IO.Out, l); err != nil {
			return err
		}
	}
	return nil
}

// stepCosts prices every agent step of the tree as a usage report does
// (usage.LedgerOf): the footer shows each step's cost and where it comes
// from.
func stepCosts(opts *Options, root *views.RunNode) (map[views.StepRef]prices.Cost, error) {
	if opts.Prices == nil {
		return nil, nil
	}
	tbl, note, err := opts.Prices()
	if err != nil {
		return nil, err
	}
	if note != "" {
		fmt.Fprintf(opts.IO.ErrOut, "twasm: %s\n", note)
	}
	out := map[views.StepRef]prices.Cost{}
	for _, n := range root.Runs() {
		for _, s := range usage.LedgerOf(n.Source(), tbl).Steps {
			out[views.StepRef{RunID: n.RunID, Seq: s.Seq}] = s.Cost
		}
	}
	return out, nil
}

// writeEvents prints events as transcript lines (JSON Lines), so that
// the JSON form is exactly the transcript format.
func writeEvents(opts *Options, evs []*transcript.Event) error {
	for _, ev := range evs {
		line, err := views.EventJSON(ev)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(opts.IO.Out, "%s\n", line); err != nil {
			return err
		}
	}
	return nil
}

// atSeq prints event opts.Seq of the run, narrows the view to the step
// that holds it (a run-level event shows the whole run) and to the
// opts.Context events before and after it there, and returns the lines
// that say how to read on.
func atSeq(opts *Options, root *views.RunNode, vo *views.ViewOptions) ([]string, error) {
	var hit *transcript.Event
	var step []*transcript.Event // the events of the hit's step, in seq order
	if src := root.Source(); src != nil {
		for _, ev := range src.Events {
			if ev.Seq == opts.Seq {
				hit = ev
			}
		}
		if hit != nil {
			for _, ev := range src.Events {
				if ev.Path == hit.Path {
					step = append(step, ev)
				}
			}
		}
	}
	if hit == nil {
		return nil, &cmdutil.InputError{Err: fmt.Errorf("--seq %d: run %s has no event with that seq", opts.Seq, root.RunID)}
	}
	if opts.Format == "json" {
		return nil, writeEvents(opts, []*transcript.Event{hit})
	}
	if _, err := fmt.Fprintf(opts.IO.Out, "> seq %d: %s\n\n", hit.Seq, views.Compact(hit, false)); err != nil {
		return nil, err
	}
	if opts.Path == "" && hit.Path != "" {
		opts.Path = root.FullPath(hit.Path)
		vo.Path = opts.Path
	}
	if opts.Context < 0 {
		return nil, nil
	}
	slices.SortFunc(step, func(a, b *transcript.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	i := slices.Index(step, hit)
	c, last := opts.Context, len(step)-1
	vo.Window = &views.SeqWindow{From: step[max(0, i-c)].Seq, To: step[min(last, i+c)].Seq}
	var readOn []string
	more := func(label string, seq uint64) {
		readOn = append(readOn, fmt.Sprintf("%s: twasm view %s --seq %d --context %d", label, root.RunID, seq, c))
	}
	if i-c > 0 {
		more("earlier", step[max(0, i-2*c-1)].Seq)
	}
	if i+c < last {
		more("later", step[min(last, i+2*c+1)].Seq)
	}
	if len(readOn) > 0 {
		readOn = append(readOn, fmt.Sprintf("whole step: twasm view %s --seq %d --context -1", root.RunID, hit.Seq))
	}
	return readOn, nil
}
