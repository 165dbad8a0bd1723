package version

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
)

// Options are the inputs of runVersion.
type Options struct {
	IO   *iostreams.IOStreams
	JSON bool
}

// NewCmdVersion returns the version command. runF replaces runVersion in
// tests.
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the twasm version and build information",
		Example: "  twasm version\n  twasm --version\n  twasm version --json",
		Args:    cmdutil.ExactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func runVersion(opts *Options) error {
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, build.Read())
	}
	_, err := fmt.Fprint(opts.IO.Out, build.Info())
	return err
}
