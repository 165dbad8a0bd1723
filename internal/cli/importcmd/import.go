package importcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/twasm/twasm/internal/redact"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/cli/searchcmd"
	"github.com/twasm/twasm/internal/detect"
	"github.com/twasm/twasm/internal/regfile"
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
	Redact   bool
	// Whole imports a file that holds many sessions (a sections store's,
	// as Aider's chat history) as one run rather than one per session.
	Whole bool
	// Indexed is called with the runs the import wrote (the search index).
	Indexed func(ctx context.Context, runIDs []string) error
}

// NewCmdImport returns the import command.
func NewCmdImport(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f, Indexed: func(ctx context.Context, ids []string) error { return searchcmd.Refresh(ctx, f) }}
	cmd := &cobra.Command{
		Use:   "import --provider P|auto FILE...",
		Short: "Import saved outputs and native session logs, one run per session",
		Long: `Import records each file as a run of its own (one agent step), keeping the
file's bytes as the raw capture; a file that holds many sessions one
after another (an Aider chat history) becomes one run per session, as
twasm sync makes of it, unless --whole is given. Native session logs are read as they are:
Claude Code projects (~/.claude/projects/*/*.jsonl), Codex sessions
(~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), Gemini CLI chats
(~/.gemini/tmp/*/chats/*.json), Copilot session state
(~/.copilot/session-state/*/events.jsonl), Pi sessions
(~/.pi/agent/sessions/*/*.jsonl, also OMP's and OpenClaw's), Qwen Code
chats (~/.qwen/projects/*/chats/*.jsonl), Kimi Code and Kimi CLI wire
logs (~/.kimi-code/sessions/*/*/agents/*/wire.jsonl,
~/.kimi/sessions/*/*/wire.jsonl), Factory Droid sessions
(~/.factory/sessions/*/*.jsonl; sync reads their settings.json usage
too), Cursor's agent transcripts
(~/.cursor/projects/*/agent-transcripts/**/*.jsonl), Amp threads
(~/.local/share/amp/threads/T-*.json), Goose's session files from
before sessions.db (~/.local/share/goose/sessions/*.jsonl), a Cline or
Roo Code task's api_conversation_history.json or ui_messages.json (a
whole task folder is read by twasm sync), an Aider chat history
(<repo>/.aider.chat.history.md: one run per session, each printed as
FILE#N), and saved outputs of every
provider (opencode run --format json too). OpenCode's database
(~/.local/share/opencode/opencode.db), Goose's
(~/.local/share/goose/sessions/sessions.db), Crush's (.crush/crush.db) and
the Cursor IDE's (~/.config/Cursor/User/globalStorage/state.vscdb) are not
files of sessions:
"twasm sync" reads them, one run per session.

With --provider auto, twasm looks at the start of each file and picks the
provider and format when the evidence is unambiguous; otherwise it says
what it saw and asks for --provider.

A Claude Code sub-agent's file (<session>/subagents/agent-*.jsonl) is not
a session: it becomes a child run of its session's run when "twasm sync"
archived that session and its run is still open, else a run of its own
named "claude sub-agent agent-X of session S" (stderr says why).

Import is idempotent by content: bytes already imported (or synced by
"twasm sync"), from this path or any other, are recognised and skipped,
and a file that grew since adds only its new part, in a new run that
names the run holding the rest. Runs and steps carry the session's own
times, not the time of the import. --redact masks secrets as record does.

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
	cmd.Flags().BoolVar(&opts.Redact, "redact", false, redact.FlagUsage)
	cmd.Flags().BoolVar(&opts.Whole, "whole", false, "import a file of many sessions (an Aider chat history) as one run")
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
	// Action is what the import did: new, continued (the file grew
	// since it was imported), or unchanged (already imported).
	Action string `json:"action,omitempty"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`

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
	lock, err := archive.AcquireLock(ctx, opts.F.StorageRoot(), true, func(pid string) {
		fmt.Fprintf(ios.ErrOut, "twasm: waiting for another sync or import on %s (pid %s)\n", opts.F.StorageRoot(), pid)
	})
	if err != nil {
		return err
	}
	defer lock.Release()
	provider := opts.Provider
	if opts.Plugins.Plugin != "" && (provider == "auto" || provider == "") {
		// --plugin names the plugin: its first provider is the provider.
		p, err := plugload.Resolve(ctx, rt, opts.Plugins, provider)
		if err != nil {
			return err
		}
		provider = p.Info().Manifest.Providers[0]
	}
	var written []string
	arc, _, err := archive.Open(archive.Options{
		Store: opts.F.Store(), Producer: opts.F.Producer(), Logger: opts.F.Logger(), Redact: opts.Redact,
		Whole: true, CloseIdle: 0, CloseWrittenOnly: true,
		Plugin: func(ctx context.Context, provider string) (capture.Plugin, error) {
			p, err := plugload.Resolve(ctx, rt, opts.Plugins, provider)
			if err != nil {
				return nil, err
			}
			return p, nil
		},
		Written: func(id string) { written = append(written, id) },
	})
	if err != nil {
		return err
	}
	defer arc.Close()
	var failed, notUnderstood []string
	for _, o := range arc.Recover(ctx) { // what a killed sync or import left unfinished
		if o.Action == archive.ActionFailed {
			failed = append(failed, o.Path)
			fmt.Fprintf(ios.ErrOut, "twasm: %s: %s\n", o.Path, o.Reason)
			continue
		}
		fmt.Fprintf(ios.ErrOut, "twasm: %s: %s %s: %s\n", o.Path, o.Action, o.RunID, o.Reason)
	}
	if opts.Indexed != nil {
		defer func() {
			if len(written) > 0 {
				if err := opts.Indexed(context.WithoutCancel(ctx), written); err != nil {
					fmt.Fprintf(ios.ErrOut, "twasm: search index: %v\n", err)
				}
			}
		}()
	}
	for _, file := range opts.Files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ims := importFile(ctx, rt, arc, opts, Imported{File: file, Provider: provider, Format: opts.Format})
		for i := range ims {
			im := &ims[i]
			if im.Error != "" {
				failed = append(failed, im.File)
			} else if cmdutil.ReportStep(ios.ErrOut, im.File, opts.F.StorageRoot(), im.Transcript, im.res) != nil {
				notUnderstood = append(notUnderstood, im.File)
			}
			if opts.JSON {
				b, _ := json.Marshal(im)
				fmt.Fprintln(ios.Out, string(b))
				continue
			}
			if im.Error != "" {
				fmt.Fprintf(ios.ErrOut, "twasm: %s: %s\n", im.File, im.Error)
				continue
			}
			fmt.Fprintf(ios.Out, "%s\t%s\t%s\t%s\n", im.RunID, im.Provider, im.Status, im.File)
			if im.Detected != "" && i == 0 {
				fmt.Fprintf(ios.ErrOut, "%s: detected %s\n", file, im.Detected)
			}
			switch im.Action {
			case archive.ActionNew:
				if im.Reason != "" { // a sub-agent's file standing alone, a file rewritten
					fmt.Fprintf(ios.ErrOut, "%s: %s\n", im.File, im.Reason)
				}
			case archive.ActionUnchanged:
				fmt.Fprintf(ios.ErrOut, "%s: already imported as run %s, skipped (%s)\n", im.File, im.RunID, im.Reason)
			case archive.ActionContinued:
				fmt.Fprintf(ios.ErrOut, "%s: grew since it was imported: only its new part was imported (%s)\n", im.File, im.Reason)
			}
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

// importFile imports one file: one Imported, or one per session of a
// file that holds many (a sections store's), File then naming the
// session (FILE#N).
func importFile(ctx context.Context, rt *host.Runtime, arc *archive.Archiver, opts *Options, im Imported) []Imported {
	file := im.File
	fail := func(err error) []Imported { im.Error = err.Error(); return []Imported{im} }
	// A named pipe, a device or a directory is refused before anything
	// is read, without blocking in open (the storage lock is held).
	fh, err := regfile.Open(file)
	if err != nil {
		return fail(err)
	}
	if im.Provider != "auto" {
		fh.Close()
	} else {
		sample := make([]byte, 256<<10)
		n, err := io.ReadFull(fh, sample)
		fh.Close()
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
	}
	p, err := plugload.Resolve(ctx, rt, opts.Plugins, im.Provider)
	if err != nil {
		return fail(err)
	}
	declared := archive.DeclaredOf(p.Info().Manifest)
	if !opts.Whole {
		if loc, ok := archive.SectionsStore(declared, im.Provider, file); ok {
			outs, _ := arc.SyncSections(ctx, archive.Session{Loc: &loc, Path: file})
			ims := make([]Imported, len(outs))
			for i, o := range outs {
				ims[i] = im
				ims[i].File = o.Path
				ims[i].fromOutcome(opts, arc, o)
			}
			return ims
		}
	}
	if s, ok := archive.SubAgentFile(declared, im.Provider, file); ok && im.Format == "" {
		// A sub-agent's file (Claude Code's <session>/subagents/agent-*.jsonl):
		// a child run of its session's run when that run is open (synced
		// earlier), else a run of its own named as the session's
		// sub-agent, never a session of its own.
		im.fromOutcome(opts, arc, arc.SyncSession(ctx, s))
		return []Imported{im}
	}
	im.fromOutcome(opts, arc, arc.SyncFileAs(ctx, im.Provider, im.Format, file))
	return []Imported{im}
}

// fromOutcome fills in what the archive did with a file or a session.
func (im *Imported) fromOutcome(opts *Options, arc *archive.Archiver, o archive.Outcome) {
	im.RunID, im.Action, im.Reason = o.RunID, o.Action, o.Reason
	if o.RunID != "" {
		if p, err := opts.F.Store().TranscriptPath(o.RunID); err == nil {
			im.Transcript = p
		}
	}
	im.Status, im.res = o.Status, o.Result
	if o.Action == archive.ActionUnchanged {
		if e := arc.Ledger().ByPath(o.Path); e != nil {
			im.Status = e.Status
		}
	}
	switch o.Action {
	case archive.ActionFailed:
		im.Error = o.Reason
	case archive.ActionPending: // a sections file without a complete line
		im.Error = "holds no session: " + o.Reason
	}
}
