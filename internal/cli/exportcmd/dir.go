package exportcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
)

// DirOptions are the inputs of `export dir`.
type DirOptions struct {
	Dir    string
	Runs   []string
	All    AllRuns
	Redact bool
}

func newCmdDir(f *cmdutil.Factory, runF func(context.Context, *DirOptions) error) *cobra.Command {
	opts := &DirOptions{}
	cmd := &cobra.Command{
		Use:   "dir DIR RUN... | --all",
		Short: "Write runs as run folders (events.jsonl, transcript.md, logs/)",
		Long: `Write each run, and every child run it links to, as the run folder of the
original run-recording design, which other tools of that design read:

  DIR/runs/<run-id>/events.jsonl       the transcript, byte for byte
  DIR/runs/<run-id>/transcript.md      a summary a person reads: Metadata,
                                       Prompt, Effective Role Summary, Skills
                                       Used, Tool Activity Summary, Work Notes,
                                       Deliverables, Errors and Warnings; it
                                       cites events.jsonl by seq
  DIR/runs/<run-id>/logs/tools.jsonl   one line per tool call with its result
  DIR/runs/<run-id>/logs/errors.jsonl  every error and recoverable failure:
                                       provider errors, failed, denied and
                                       cancelled tools, calls without results,
                                       plugin faults, unmapped lines, warnings

A run folder is written beside its place and renamed into it: it is whole or
absent, and exporting a run again replaces its folder. 'twasm run end
--export-dir DIR' writes it when a run finishes.

` + allHelp,
		Example: `  twasm export dir ./out latest
  twasm export dir /srv/runs --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("name the directory to write into")
			}
			opts.Dir, opts.Runs = args[0], args[1:]
			if opts.All.On == (len(opts.Runs) > 0) {
				return cmdutil.FlagErrorf("name runs to export, or --all (not both)")
			}
			if err := checkAll(opts.All); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDir(cmd.Context(), f, opts)
		},
	}
	addAllFlags(cmd, &opts.All)
	addRedactFlag(cmd, &opts.Redact, "every file written (events.jsonl is then the masked events, encoded again)")
	return cmd
}

func runDir(ctx context.Context, f *cmdutil.Factory, opts *DirOptions) error {
	targets, left, err := Targets(ctx, f, opts.Runs, opts.All)
	if err != nil {
		return err
	}
	red := masked(targets, opts.Redact)
	for _, t := range targets {
		rep, err := export.ExportDir(ctx, opts.Dir, t)
		if err != nil {
			return cmdutil.PathInputError(t.Path, err)
		}
		for _, r := range rep.Runs {
			fmt.Fprintln(f.IOStreams.Out, r)
		}
		cmdutil.WarnSkipped(f.IOStreams.ErrOut, t.Path, rep.Skipped)
	}
	reportSuperseded(f.IOStreams.ErrOut, left)
	reportRedacted(f, red)
	return nil
}
