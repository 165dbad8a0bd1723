package tree

import (
	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/views"
)

// Options are the inputs of runTree.
type Options struct {
	IO   *iostreams.IOStreams
	Load func(arg string) (*views.RunNode, error)
	Run  string
	JSON bool
}

// NewCmdTree returns the tree command.
func NewCmdTree(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Load: f.LoadTree}
	cmd := &cobra.Command{
		Use:   "tree RUN",
		Short: "Show the execution tree of a run and its child runs",
		Long: `Show the steps of a run by path and iteration, with kind, status and
duration, the provider, model and tool count of agent steps, and the child
runs of call_workflow steps nested under them (followed through
child_run_id to the transcripts beside the run's own; cycles are cut).`,
		Example: `  twasm tree 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm tree --json run.jsonl | jq '.steps[].status'`,
		Args:              cmdutil.ExactArgs(1, "RUN"),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runTree(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the tree as JSON")
	return cmd
}

func runTree(opts *Options) error {
	root, err := opts.Load(opts.Run)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, root)
	}
	return views.WriteTree(opts.IO.Out, root, opts.IO.ColorEnabled())
}
