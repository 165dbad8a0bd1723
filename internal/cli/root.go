package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
)

// NewCmdRoot returns the root command with every subcommand registered.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "twasm <command> [flags]",
		Short: "Record and read AI coding-agent transcripts",
		Long: `twasm records AI coding-agent runs as one append-only JSONL transcript per
run (<storage>/transcripts/<run-id>.jsonl) and reads them back.

A RUN argument is a run id, or any start of one that only one run in
storage has, "latest" (the top-level run that started last; child runs
are reached through their parent or by id), or a path to a .jsonl file.
The storage root is --storage, else $TWASM_STORAGE, else
$XDG_DATA_HOME/twasm, else ~/.local/share/twasm. "twasm ls" lists the runs.

Data goes to stdout and diagnostics to stderr. Colors are used only on a
terminal and never when NO_COLOR is set.

Exit codes: 0 ok, 1 failure (e.g. a transcript that breaks the format),
2 usage error or unreadable input, 130 interrupted.`,
		Example: `  twasm ls --since 1d
  twasm tree 0b6e8c0e
  twasm view --only dialog,thinking run.jsonl | less
  twasm tail -f latest
  twasm stats --all --json`,
		Version:       build.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate(build.Info())
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	root.SetIn(f.IOStreams.In)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: err}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&f.StorageFlag, "storage", "", "storage root (default $"+cmdutil.EnvStorage+", else $XDG_DATA_HOME/twasm, else ~/.local/share/twasm)")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "log debug diagnostics to stderr")
	addCommands(root, f)
	return root
}

// Main runs twasm with args (without the program name) and returns the
// exit code. SIGINT and SIGTERM cancel the command's context.
func Main(ctx context.Context, args []string, ios *iostreams.IOStreams, getenv func(string) string) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: getenv}
	root := NewCmdRoot(f)
	var prof profiling
	prof.flags(root.PersistentFlags())
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return prof.start() }
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if perr := prof.stop(); perr != nil && err == nil {
		err = perr
	}
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitCode(err)
	if errors.Is(err, cmdutil.ErrSilent) {
		return code
	}
	if code == cmdutil.ExitFailure && isUsage(err) {
		// cobra reports unknown commands and arguments as plain errors.
		code = cmdutil.ExitUsage
		err = &cmdutil.FlagError{Err: err}
	}
	if code == cmdutil.ExitCancelled {
		fmt.Fprintln(ios.ErrOut, "twasm: interrupted")
		return code
	}
	fmt.Fprintf(ios.ErrOut, "twasm: %v\n", err)
	var fe *cmdutil.FlagError
	if errors.As(err, &fe) && cmd != nil {
		fmt.Fprintf(ios.ErrOut, "\n%s", cmd.UsageString())
	}
	return code
}

// isUsage recognises cobra's own usage errors, which are not typed.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
