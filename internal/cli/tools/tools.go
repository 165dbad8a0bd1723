package tools

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/views"
)

// Options are the inputs of runTools.
type Options struct {
	IO   *iostreams.IOStreams
	Load func(arg string) (*views.RunNode, error)
	Run  string
	JSON bool
}

// NewCmdTools returns the tools command.
func NewCmdTools(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Load: f.LoadTree}
	cmd := &cobra.Command{
		Use:   "tools RUN",
		Short: "List the tool calls of a run and its child runs",
		Long: `List every tool call (tool.call paired with its tool.result by call id) of a
run and of its child runs: name, kind, command (for a call that writes
files, the files and how: "update src/main.go"), status, exit code,
duration (call to result), fidelity, call id and step path. A call without
a result has status "dangling".

On a terminal this is an aligned table; in a pipe it is tab-separated with
no header, one call per line, in the column order:
SEQ PATH NAME KIND COMMAND STATUS EXIT DURATION FIDELITY CALL_ID

--json prints one object per call (JSON Lines), with "files" ({path, op})
for a call that writes files; exit_code is absent when the provider stated
none.`,
		Example: `  twasm tools 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm tools run.jsonl | awk -F'\t' '$6 == "dangling"'
  twasm tools --json run.jsonl | jq -c 'select(.exit_code != null and .exit_code != 0)'`,
		Args:              cmdutil.ExactArgs(1, "RUN"),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runTools(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object per call (JSON Lines)")
	return cmd
}

func runTools(opts *Options) error {
	root, err := opts.Load(opts.Run)
	if err != nil {
		return err
	}
	rows := views.Ledger(root)
	if opts.JSON {
		return cmdutil.WriteJSONLines(opts.IO.Out, rows)
	}
	tty := opts.IO.IsStdoutTTY()
	t := cmdutil.NewTable(opts.IO.Out, tty, "SEQ", "PATH", "NAME", "KIND", "COMMAND", "STATUS", "EXIT", "DURATION", "FIDELITY", "CALL ID")
	for _, r := range rows {
		exit, dur := "", ""
		if r.ExitCode != nil {
			exit = strconv.Itoa(*r.ExitCode)
		}
		if r.DurationMS != nil {
			dur = views.FormatDuration(*r.DurationMS)
			if !tty {
				// Pipes get a number a script can compare.
				dur = strconv.FormatInt(*r.DurationMS, 10)
			}
		}
		cmdText := r.Command
		if cmdText == "" && len(r.Files) > 0 {
			// An edit's "command" is the files it writes.
			var files []string
			for _, f := range r.Files {
				files = append(files, f.Op+" "+f.Path)
			}
			cmdText = strings.Join(files, ", ")
		}
		if tty {
			cmdText = views.Clip(cmdText, 60)
		}
		path := r.Path
		if r.Iteration != 0 {
			path += "[" + strconv.Itoa(r.Iteration) + "]"
		}
		t.Row(strconv.FormatUint(r.Seq, 10), path, r.Name, r.Kind, cmdText, r.Status, exit, dur, r.Fidelity, r.CallID)
	}
	return t.Render()
}
