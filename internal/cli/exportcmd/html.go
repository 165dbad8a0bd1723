package exportcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/redact"
)

// HTMLOptions are the inputs of `export html`.
type HTMLOptions struct {
	Runs      []string
	Output    string
	Redact    bool
	MaxOutput int
	Title     string
}

func newCmdHTML(f *cmdutil.Factory, runF func(context.Context, *HTMLOptions) error) *cobra.Command {
	opts := &HTMLOptions{}
	cmd := &cobra.Command{
		Use:   "html RUN... [-o FILE] [--redact]",
		Short: "Write runs as one self-contained page to share",
		Long: `Write runs, with the child runs they link to, as one HTML file that opens
offline in any browser: no script, style or font is fetched, and the page's
Content-Security-Policy forbids every request and allows only the page's
own script and style (by their hashes, no 'unsafe-inline'). Transcript text
is always escaped; terminal escapes are removed and control and
bidirectional formatting characters are shown, never obeyed.

The page shows the execution tree across sub-runs, each step's dialog with
thinking folded, tool calls with their results beside them, commands as
shell, edits and patches as diffs, fidelity (router or agent-emitted),
usage and cost, errors and warnings, and a search box. Long outputs are
folded, and each block is cut at --max-output bytes (the transcript keeps
everything), so a run of 10,000 events stays quick to open.

--redact masks secrets (what is and is not masked: twasm help redact) in
everything the page shows and says how many of which kind it masked. It fails closed: a line
that cannot be decoded cannot be checked, and then no page is written.`,
		Example: `  twasm export html latest -o run.html
  twasm export html --redact RUN1 RUN2 > runs.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = args
			if len(args) == 0 {
				return cmdutil.FlagErrorf("name at least one run")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runHTML(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "write to this file instead of stdout")
	fl.BoolVar(&opts.Redact, "redact", false, "mask secrets in the page (what is and is not masked: twasm help redact); no page is written if any line cannot be checked")
	fl.IntVar(&opts.MaxOutput, "max-output", 64<<10, "bytes of one output or input block shown (the rest is left out with a note)")
	fl.StringVar(&opts.Title, "title", "", "the page's title (default: the first run's name)")
	return cmd
}

func runHTML(ctx context.Context, f *cmdutil.Factory, opts *HTMLOptions) error {
	targets, _, err := Targets(ctx, f, opts.Runs, AllRuns{})
	if err != nil {
		return err
	}
	var r *redact.Redactor
	if opts.Redact {
		r = redact.New()
	}
	// The page is shown only when whole: a failed (or unredactable)
	// export writes nothing.
	err = writeWhole(f.IOStreams.Out, opts.Output, func(w io.Writer) error {
		err := export.ExportHTML(ctx, w, targets, export.HTMLOptions{Redactor: r, MaxOutput: opts.MaxOutput, Title: opts.Title})
		if err != nil && opts.Redact {
			return fmt.Errorf("no page written: %w", err)
		}
		return err
	})
	if err != nil {
		return err
	}
	if r != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "redacted: %s\n", cmdutil.RedactedSummary(r.Counts()))
	}
	return nil
}
