package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/transcript"
)

// Options are the inputs of runValidate.
type Options struct {
	IO      *iostreams.IOStreams
	Resolve func(arg string) (cmdutil.RunRef, error)
	Args    []string
	JSON    bool
	// Strict fails on warnings too (unknown types, dangling calls, an
	// unfinished run), for CI gates that want no drift at all.
	Strict bool
}

// NewCmdValidate returns the validate command.
func NewCmdValidate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Resolve: f.ResolveRun}
	cmd := &cobra.Command{
		Use:   "validate FILE|RUN...",
		Short: "Check transcripts against the format contract",
		Long: `Check each transcript against the twasm transcript format: seq 1..N in file
order, one run id, the run.started/run.completed bracket, vocabularies, step
and tool pairing, and the links with child and parent runs beside it.

Errors (broken invariants) are printed as "line N: code: message" and make
the command exit 1. Warnings (unknown types from a newer writer, tool calls
that never got a result, a run without run.completed) are printed too but do
not fail unless --strict is given.`,
		Example: `  twasm validate storage/transcripts/*.jsonl
  twasm validate 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm validate --json run.jsonl | jq '.errors'`,
		Args:              cmdutil.MinimumArgs(1, "FILE or RUN"),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return runValidate(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON report per file (JSON Lines)")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit 1 on warnings as well as errors")
	return cmd
}

// FileReport is the JSON form of one validated file.
type FileReport struct {
	File string `json:"file"`
	*transcript.Report
}

func runValidate(opts *Options) error {
	var reports []FileReport
	for _, arg := range opts.Args {
		ref, err := opts.Resolve(arg)
		if err != nil {
			return err
		}
		rep, err := transcript.ValidateFile(regfile.FS(ref.Dir), filepath.Base(ref.Path), transcript.ValidateOptions{})
		if err != nil {
			return &cmdutil.InputError{Path: ref.Path, Err: unwrap(err)}
		}
		if rep.Lines == 0 {
			rep.Errors = append(rep.Errors, transcript.Issue{Code: "empty_file", Msg: "the file is empty: a transcript has at least run.started"})
		}
		for _, is := range rep.Errors {
			if is.Code == "read_error" {
				// The file opened but could not be read (a directory, an
				// I/O error): bad input, not a broken transcript.
				return &cmdutil.InputError{Path: ref.Path, Err: errors.New(is.Msg)}
			}
		}
		reports = append(reports, FileReport{File: ref.Path, Report: rep})
	}
	failed := false
	for _, r := range reports {
		if !r.OK() || opts.Strict && (len(r.Warnings) > 0 || len(r.Dangling) > 0) {
			failed = true
		}
	}
	if opts.JSON {
		if err := cmdutil.WriteJSONLines(opts.IO.Out, reports); err != nil {
			return err
		}
	} else if err := printReports(opts, reports); err != nil {
		return err
	}
	if failed {
		return cmdutil.ErrSilent
	}
	return nil
}

// unwrap keeps the reason of an open failure; the path is printed by the
// InputError already.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func printReports(opts *Options, reports []FileReport) error {
	w := opts.IO.Out
	for _, r := range reports {
		verdict := "ok"
		if !r.OK() {
			verdict = fmt.Sprintf("FAIL (%d errors)", len(r.Errors))
		}
		state := "finished"
		if !r.Finished {
			state = "unfinished"
		}
		fmt.Fprintf(w, "%s: %s: run %s, %d events, %s, %d warnings\n", r.File, verdict, r.RunID, r.Events, state, len(r.Warnings)+len(r.Dangling))
		for _, is := range r.Errors {
			fmt.Fprintf(w, "  error: %s\n", is)
		}
		for _, is := range r.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", is)
		}
		for _, d := range r.Dangling {
			fmt.Fprintf(w, "  warning: line %d: dangling_call: tool.call %s (%s) at %q never got a result\n", d.Line, d.CallID, d.Name, d.Path)
		}
	}
	return nil
}
