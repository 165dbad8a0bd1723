package searchcmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/index"
)

// IndexOptions are the index command's flags.
type IndexOptions struct {
	F     *cmdutil.Factory
	Check bool
	JSON  bool
}

// NewCmdIndex returns the index command: bring the search index up to
// date, from the change journal or (--check) by checking every file.
func NewCmdIndex(f *cmdutil.Factory, runF func(context.Context, *IndexOptions) error) *cobra.Command {
	opts := &IndexOptions{F: f}
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Bring the search index up to date (--check: check every transcript)",
		Long: `Index brings <storage>/index.db up to date with the transcripts, as every
search, ls and serve does first: it reads what the writers noted in the
storage's change journal (<storage>/transcripts/.journal) since it last
looked, the runs still being written, and the files added or removed.

--check looks at every transcript by size and mtime instead, whatever the
journal says: after a tool other than twasm (or an older twasm, which keeps
no journal) appended to a transcript. A journal that is missing, cut short
or rewritten makes every update check every file, once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunIndex(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Check, "check", false, "check every transcript against the index, whatever the journal says")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was done as JSON")
	return cmd
}

// RunIndex brings the index up to date.
func RunIndex(ctx context.Context, opts *IndexOptions) error {
	ios := opts.F.IOStreams
	if err := opts.F.RequireStorage(); err != nil {
		return err
	}
	ix, why, err := index.Open(ctx, opts.F.StorageRoot())
	if err != nil {
		return err
	}
	defer ix.Close()
	if why != "" {
		fmt.Fprintf(ios.ErrOut, "twasm: search index %s rebuilt from the transcripts (%s)\n", index.File(opts.F.StorageRoot()), why)
	}
	update := ix.Update
	if opts.Check {
		update = ix.Check
	}
	st, err := update(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(ios.Out).Encode(st)
	}
	fmt.Fprintf(ios.Out, "checked %d transcripts: %d read (%d again from the start), %d removed, %d documents added\n",
		st.Checked, st.Indexed, st.Reindexed, st.Removed, st.Docs)
	return nil
}
