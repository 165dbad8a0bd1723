package runcmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/twasm/twasm/internal/redact"
	"time"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
)

// BeginOptions are the flags of run begin.
type BeginOptions struct {
	F           *cmdutil.Factory
	Name        string
	Parent      string
	Path        string
	Iter        int
	LockTimeout time.Duration
	Redact      bool
}

// EndOptions are the flags of run end.
type EndOptions struct {
	F           *cmdutil.Factory
	RunID       string
	Error       string
	Cancelled   bool
	CancelOpen  bool
	LockTimeout time.Duration
	// ExportDir, when set, receives the run folder (export dir) once the
	// run has ended.
	ExportDir string
	// Redact masks secrets in what is written: the error, the run folder.
	Redact bool
}

// NewCmdRun returns the run command group.
func NewCmdRun(f *cmdutil.Factory, beginF func(context.Context, *BeginOptions) error, endF func(context.Context, *EndOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run <command>",
		Short: "Begin and end runs made of several steps, from a shell script",
		Long: `A run begun with "twasm run begin" stays open while "twasm record --run-id"
adds steps to it (several at once, from several processes), and is closed by
"twasm run end". A run begun with --parent is a sub-run: the parent gets a
step.call_workflow.started with the child's id at --path, and "run end" on
the child writes the parent's step.call_workflow.completed.

"run end" writes run.completed once: a run already ended is refused, and
so is a run whose steps or sub-runs are still open (a record still
running, or one that was killed), naming them, unless --cancel-open closes
them as cancelled first. Nothing can be added to an ended run.`,
		Example: `  RUN=$(twasm run begin --name release)
  twasm record --run-id "$RUN" --path plan --provider claude -- claude -p "plan" --output-format stream-json --verbose
  SUB=$(twasm run begin --parent "$RUN" --path fixes --name fixes)
  twasm record --run-id "$SUB" --path fix --iteration 0 --provider codex -- codex exec --json "fix it"
  twasm run end "$SUB"
  twasm run end "$RUN" --error "tests still failing"`,
	}
	cmd.AddCommand(newCmdBegin(f, beginF), newCmdEnd(f, endF))
	return cmd
}

func newCmdBegin(f *cmdutil.Factory, runF func(context.Context, *BeginOptions) error) *cobra.Command {
	opts := &BeginOptions{F: f}
	cmd := &cobra.Command{
		Use:   "begin [--name N] [--parent RUN --path P]",
		Short: "Begin a run and print its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (opts.Parent == "") != (opts.Path == "") {
				return cmdutil.FlagErrorf("--parent and --path go together")
			}
			if opts.Iter < 0 {
				return cmdutil.FlagErrorf("--iteration must not be negative")
			}
			if opts.Path != "" {
				if err := runctl.ValidStepPath(opts.Path); err != nil {
					return cmdutil.FlagErrorf("--path: %v", err)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Begin(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "run", "run name")
	cmd.Flags().StringVar(&opts.Parent, "parent", "", "make it a sub-run of this run")
	cmd.Flags().StringVar(&opts.Path, "path", "", "the parent's step path that calls the sub-run")
	cmd.Flags().IntVar(&opts.Iter, "iteration", 0, "the iteration of that step")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, lockTimeoutHelp)
	cmd.Flags().BoolVar(&opts.Redact, "redact", false, redact.FlagUsage)
	_ = cmd.RegisterFlagCompletionFunc("parent", f.CompleteRuns)
	return cmd
}

func newCmdEnd(f *cmdutil.Factory, runF func(context.Context, *EndOptions) error) *cobra.Command {
	opts := &EndOptions{F: f}
	cmd := &cobra.Command{
		Use:               "end RUN [--error MSG | --cancelled]",
		Short:             "End a run begun with run begin",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if opts.Error != "" && opts.Cancelled {
				return cmdutil.FlagErrorf("--error and --cancelled exclude each other")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return End(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Error, "error", "", "end the run as failed, with this message")
	cmd.Flags().BoolVar(&opts.Cancelled, "cancelled", false, "end the run as cancelled")
	cmd.Flags().BoolVar(&opts.CancelOpen, "cancel-open", false, "close the run's open steps and sub-runs as cancelled first, instead of refusing to end it")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, lockTimeoutHelp)
	cmd.Flags().StringVar(&opts.ExportDir, "export-dir", "", "once ended, write the run folder (as 'twasm export dir') into this directory")
	cmd.Flags().BoolVar(&opts.Redact, "redact", false, redact.FlagUsage+"; the run folder is masked too")
	return cmd
}

const lockTimeoutHelp = "fail when another process holds the run's lock this long (default: wait, naming the holder after 3s)"

// Begin starts the run, leaves it open and prints its id.
func Begin(ctx context.Context, opts *BeginOptions) error {
	store := opts.F.Store()
	ro := lifecycle.RunOptions{Name: opts.Name, Producer: opts.F.Producer(), Logger: opts.F.Logger(),
		Recorder: recorder.Options{Logger: opts.F.Logger(), LockTimeout: opts.LockTimeout}}
	if opts.Redact {
		ro.Recorder.Mask = redact.New().Mask
	}
	var run *lifecycle.Run
	var err error
	if opts.Parent != "" {
		run, err = runctl.BeginChild(ctx, store, opts.Parent, opts.Path, opts.Iter, ro)
	} else {
		run, err = lifecycle.Start(ctx, store, ro)
	}
	if err != nil {
		return inputErr(opts.Parent, err)
	}
	if err := run.Detach(); err != nil {
		return err
	}
	fmt.Fprintln(opts.F.IOStreams.Out, run.RunID())
	return nil
}

// End writes run.completed (and the parent's link completion).
func End(ctx context.Context, opts *EndOptions) error {
	var runErr error
	switch {
	case opts.Cancelled:
		runErr = context.Canceled
	case opts.Error != "":
		runErr = errors.New(opts.Error)
	}
	// The status is decided by the flags, not by a signal arriving now.
	ro := lifecycle.RunOptions{Logger: opts.F.Logger(),
		Recorder: recorder.Options{Logger: opts.F.Logger(), LockTimeout: opts.LockTimeout}}
	var red *redact.Redactor
	if opts.Redact {
		red = redact.New()
		ro.Recorder.Mask = red.Mask
	}
	err := runctl.End(context.WithoutCancel(ctx), opts.F.Store(), opts.RunID, runErr, runctl.EndOptions{RunOptions: ro, CancelOpen: opts.CancelOpen})
	if oe := (*runstate.OpenError)(nil); errors.As(err, &oe) {
		return &cmdutil.InputError{Path: opts.RunID, Err: fmt.Errorf("%w; nothing was written. End them first (a record still running ends its own step), or pass --cancel-open to close them as cancelled", err)}
	}
	if err != nil || opts.ExportDir == "" {
		return inputErr(opts.RunID, err)
	}
	ref, err := opts.F.ResolveRun(opts.RunID)
	if err != nil {
		return err
	}
	target := export.Run{Path: ref.Path, Dir: ref.Dir}
	if red != nil {
		target.Mask = red.Mask
	}
	rep, err := export.ExportDir(ctx, opts.ExportDir, target)
	if err != nil {
		return fmt.Errorf("run %s ended, but its run folder was not written: %w", opts.RunID, err)
	}
	for _, r := range rep.Runs {
		fmt.Fprintln(opts.F.IOStreams.Out, r)
	}
	cmdutil.WarnSkipped(opts.F.IOStreams.ErrOut, ref.Path, rep.Skipped)
	return nil
}

func inputErr(run string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, recorder.ErrInvalidRunID):
		return cmdutil.FlagErrorf("%v", err)
	case errors.Is(err, recorder.ErrRunFinished), errors.Is(err, lifecycle.ErrNotARun), errors.Is(err, lifecycle.ErrInvalidName):
		return &cmdutil.InputError{Path: run, Err: err}
	}
	var pe interface{ Timeout() bool }
	if errors.As(err, &pe) {
		return err
	}
	return &cmdutil.InputError{Path: run, Err: err}
}
