package importcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/detect"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Options are the flags and arguments.
type Options struct {
	F        *cmdutil.Factory
	Plugins  plugload.Flags
	Provider string
	Format   string
	Files    []string
	JSON     bool
}

// NewCmdImport returns the import command.
func NewCmdImport(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "import --provider P|auto FILE...",
		Short: "Import saved outputs and native session logs, one run per file",
		Long: `Import records each file as a run of its own (one agent step), keeping the
file's bytes as the raw capture. Native session logs are read as they are:
Claude Code projects (~/.claude/projects/*/*.jsonl), Codex sessions
(~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), Gemini CLI chats
(~/.gemini/tmp/*/chats/*.json), Copilot session state
(~/.copilot/session-state/*/events.jsonl), and saved outputs of every
provider.

With --provider auto, twasm looks at the start of each file and picks the
provider and format when the evidence is unambiguous; otherwise it says
what it saw and asks for --provider.

As after record, each file gets one stderr line "twasm: FILE: ..." when
there is anything a user must know (see twasm record --help); a file of
which the plugin understood no line makes import exit 1.`,
		Example: `  twasm import --provider auto ~/.claude/projects/-home-me-app/*.jsonl
  twasm import --provider codex ~/.codex/sessions/2026/11/20/rollout-*.jsonl
  twasm import --provider auto --json saved/*.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if opts.Provider == "" {
				return cmdutil.FlagErrorf("--provider is required (a provider name, or auto)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Provider, "provider", "", "provider of the files, or auto to detect it per file")
	cmd.Flags().StringVar(&opts.Format, "format", "", "format hint for the plugin (default: detect)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object per imported file")
	opts.Plugins.Register(cmd, true)
	return cmd
}

// Imported is what --json prints per file.
type Imported struct {
	File       string `json:"file"`
	RunID      string `json:"run_id,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	Provider   string `json:"provider,omitempty"`
	Format     string `json:"format,omitempty"`
	Detected   string `json:"detected,omitempty"`
	Status     string `json:"status,omitempty"`
	Error      string `json:"error,omitempty"`

	res *transcript.AgentResult
}

// Run imports every file; a file that fails is reported and the others
// go on. It fails (exit 2) when any file could not be imported.
func Run(ctx context.Context, opts *Options) error {
	rt, err := plugload.Open(ctx, opts.F, opts.Plugins)
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	ios := opts.F.IOStreams
	var failed, notUnderstood []string
	for _, file := range opts.Files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		im := importFile(ctx, rt, opts, file)
		if im.Error != "" {
			failed = append(failed, file)
		} else if cmdutil.ReportStep(ios.ErrOut, file, opts.F.StorageRoot(), im.Transcript, im.res) != nil {
			notUnderstood = append(notUnderstood, file)
		}
		if opts.JSON {
			b, _ := json.Marshal(im)
			fmt.Fprintln(ios.Out, string(b))
			continue
		}
		if im.Error != "" {
			fmt.Fprintf(ios.ErrOut, "twasm: %s: %s\n", file, im.Error)
			continue
		}
		fmt.Fprintf(ios.Out, "%s\t%s\t%s\t%s\n", im.RunID, im.Provider, im.Status, file)
		if im.Detected != "" {
			fmt.Fprintf(ios.ErrOut, "%s: detected %s\n", file, im.Detected)
		}
	}
	if len(failed) > 0 {
		return &cmdutil.InputError{Err: fmt.Errorf("%d of %d files not imported: %s", len(failed), len(opts.Files), strings.Join(failed, ", "))}
	}
	if len(notUnderstood) > 0 {
		return fmt.Errorf("%w: %s", cmdutil.ErrNotUnderstood, strings.Join(notUnderstood, ", "))
	}
	return nil
}

func importFile(ctx context.Context, rt *host.Runtime, opts *Options, file string) Imported {
	im := Imported{File: file, Provider: opts.Provider, Format: opts.Format}
	fail := func(err error) Imported { im.Error = err.Error(); return im }
	fh, err := os.Open(file)
	if err != nil {
		return fail(err)
	}
	defer fh.Close()
	if opts.Provider == "auto" && opts.Plugins.Plugin == "" {
		sample := make([]byte, 256<<10)
		n, err := io.ReadFull(fh, sample)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return fail(err)
		}
		d, err := detect.Detect(sample[:n])
		if err != nil {
			return fail(err)
		}
		im.Provider, im.Detected = d.Provider, d.Reason
		if im.Format == "" {
			im.Format = d.Format
		}
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return fail(err)
		}
	}
	plugin, err := plugload.Resolve(ctx, rt, opts.Plugins, im.Provider)
	if err != nil {
		return fail(err)
	}
	if im.Provider == "auto" || im.Provider == "" {
		im.Provider = plugin.Manifest().Providers[0]
	}
	store := opts.F.Store()
	name := "import " + filepath.Base(file)
	var res *transcript.AgentResult
	var runID, path string
	err = lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: name, Producer: opts.F.Producer(), Logger: opts.F.Logger(),
		Recorder: []recorder.Option{recorder.WithLogger(opts.F.Logger())}}, func(ctx context.Context, run *lifecycle.Run) error {
		runID, path = run.RunID(), run.Path()
		return run.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
			agent, err := capture.Start(ctx, s, capture.Options{Provider: im.Provider, Format: im.Format, Store: store,
				Plugin: plugload.Capture(plugin), Logger: opts.F.Logger()})
			if err != nil {
				return err
			}
			feedErr := agent.ReadFrom(ctx, fh)
			res, err = agent.Finish(context.WithoutCancel(ctx), nil)
			if err := errors.Join(feedErr, err); err != nil {
				return err
			}
			return capture.ResultError(res)
		})
	})
	im.RunID, im.Transcript = runID, path
	if res != nil {
		im.Status, im.res = res.Status, res
	}
	if err != nil && !capture.IsAgentError(err) {
		return fail(err)
	}
	return im
}
