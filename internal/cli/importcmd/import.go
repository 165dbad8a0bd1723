package importcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/twasm/twasm/internal/redact"
	"io"
	"os"
	"path/filepath"
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
	// namedKeys remembers, for one Run, what the files beside the
	// sessions given name as their session (archive.NamedKeys): each
	// is read once, however many sessions share its directory.
	namedKeys *archive.NamedKeys
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
(~/.gemini/tmp/*/chats/session-*.json and .jsonl), Copilot session state
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

A sub-agent's file (Claude Code's <session>/subagents/agent-*.jsonl,
Kimi Code's agents/agent-N/wire.jsonl beside the main agent's, Cursor's
agent-transcripts/<id>/subagents/*.jsonl) is not a session: it becomes
a child run of its session's run, linked at the call that started it
where the files tell, as "twasm sync" links it, when the session's file
is given in the same import (in any order: the session's run is ended
after its sub-agents' files) or when "twasm sync" archived that session
and its run is still open; else it is a run of its own named "claude
sub-agent agent-X of session S" (stderr says why). A session's file is
imported with its sub-agents' files on disk, and a sub-agent's file with
its session's file when twasm does not hold that session yet, so that
importing them apart, in either order, makes the runs importing them
together makes (the files not given are listed too). A Kimi wire log or a
Cursor agent transcript in its store's directory (sessions/, projects/)
is read with the facts of its place, as sync reads it: Kimi's session
id is a directory of its path there.

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
	// detectedIn is the file given, when stderr is to say what
	// --provider auto saw in it (once per file).
	detectedIn string
	// found is set for a file not given that the import archives with
	// a session (withSessions).
	found bool
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
		Declared: func(ctx context.Context, provider string) []archive.Declared {
			return declaredOf(ctx, rt, opts, provider)
		},
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
	opts.namedKeys = archive.NewNamedKeys()
	files := make([]resolved, len(opts.Files))
	for i, file := range opts.Files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		files[i] = resolve(ctx, rt, opts, Imported{File: file, Provider: provider, Format: opts.Format})
	}
	files = withSessions(ctx, rt, arc, opts, files)
	for _, g := range groups(files) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, im := range g.archive(ctx, arc, opts, files) {
			if im.found && im.Action == archive.ActionUnchanged {
				continue // not given, and nothing done
			}
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
			if im.detectedIn != "" {
				fmt.Fprintf(ios.ErrOut, "%s: detected %s\n", im.detectedIn, im.Detected)
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

// resolved is a file as import reads it, settled before anything is
// archived: its provider and format, and whether it is one session, a
// file of many (sections) or a sub-agent's file of a session (sub).
type resolved struct {
	im       Imported
	sections *archive.Location
	sub      *archive.Session
	// store is a session file in a store whose plugin reads the facts
	// of its source (archive.StoreFile): archived with them, as sync
	// archives it; or the first file of a tree store's session
	// (archive.TreeFile: Factory Droid's session, its settings
	// document beside it): archived with its other files, as sync
	// archives it.
	store *archive.Session
	// onDisk are a session file's sub-agents' files on disk
	// (archive.SubAgentFiles), archived with it (withSessions).
	onDisk []archive.Session
}

// path is the file's path as the archive knows it (the ledger's, the
// runs' source): a store's file's is absolute.
func (f resolved) path() string {
	switch {
	case f.store != nil:
		return f.store.Path
	case f.sub != nil:
		return f.sub.Path
	}
	return f.im.File
}

// resolve settles what a file is: its provider (detected with
// --provider auto) and how it is archived. A file that cannot be read
// or whose provider is not known is resolved with im.Error set.
func resolve(ctx context.Context, rt *host.Runtime, opts *Options, im Imported) resolved {
	file := im.File
	fail := func(err error) resolved { im.Error = err.Error(); return resolved{im: im} }
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
		im.Provider, im.Detected, im.detectedIn = d.Provider, d.Reason, file
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
			return resolved{im: im, sections: &loc}
		}
	}
	// Not with a --format given: the file is read in that format, as
	// given. A format --provider auto detected is the plugin's to find
	// again, as sync's is.
	if s, ok := archive.SubAgentFile(declared, im.Provider, file); ok && opts.Format == "" {
		im.Format = ""
		return resolved{im: im, sub: &s}
	}
	var onDisk []archive.Session
	if opts.Format == "" {
		onDisk = archive.SubAgentFiles(declared, im.Provider, file, opts.namedKeys)
	}
	if s, ok := archive.StoreFile(declared, im.Provider, file); ok && opts.Format == "" {
		im.Format = ""
		return resolved{im: im, store: &s, onDisk: onDisk}
	}
	if s, ok := archive.TreeFile(declared, im.Provider, file); ok && opts.Format == "" {
		im.Format = ""
		return resolved{im: im, store: &s, onDisk: onDisk}
	}
	return resolved{im: im, onDisk: onDisk}
}

// withSessions adds to the files given those an import archives with
// them, so that a session's runs are the same whichever of its files
// are given, together or in separate imports: the session's file of a
// sub-agent's file given without it, when it is on disk and the archive
// does not know it (its run then takes the sub-agent's as a child run,
// where before the sub-agent's file became a run of its own), and every
// session's sub-agents' files on disk that were not given (linked into
// the session's run while it is open: group.archive). A session
// imported alone, then its sub-agents' files, then gives the runs one
// import of them all gives; and a run an import held open for them
// when it was killed is finished alike (archive.Archiver.Recover).
func withSessions(ctx context.Context, rt *host.Runtime, arc *archive.Archiver, opts *Options, files []resolved) []resolved {
	given := map[string]bool{}
	for _, f := range files {
		if abs, err := filepath.Abs(f.path()); err == nil {
			given[abs] = true
		}
	}
	for i, n := 0, len(files); i < n; i++ {
		f := files[i]
		if f.sub == nil || f.im.Error != "" || given[f.sub.Parent] || arc.Ledger().ByPath(f.sub.Parent) != nil {
			continue
		}
		if st, err := os.Stat(f.sub.Parent); err != nil || !st.Mode().IsRegular() {
			continue
		}
		s := resolve(ctx, rt, opts, Imported{File: f.sub.Parent, Provider: f.im.Provider})
		if s.im.Error == "" && s.sub == nil && s.sections == nil {
			s.im.found = true
			files = append(files, s)
			given[f.sub.Parent] = true
		}
	}
	for i := 0; i < len(files); i++ {
		for _, s := range files[i].onDisk {
			if !given[s.Path] {
				given[s.Path] = true
				files = append(files, resolved{im: Imported{File: s.Path, Provider: files[i].im.Provider, found: true}, sub: &s})
			}
		}
	}
	return files
}

// declaredOf is the stores provider's plugin declares (nil when it
// cannot be resolved).
func declaredOf(ctx context.Context, rt *host.Runtime, opts *Options, provider string) []archive.Declared {
	p, err := plugload.Resolve(ctx, rt, opts.Plugins, provider)
	if err != nil {
		return nil
	}
	return archive.DeclaredOf(p.Info().Manifest)
}

// group is a file, or a session file followed by the sub-agents' files
// of it given in the same import (indexes into the resolved files).
type group struct {
	file int
	subs []int
}

// groups orders the files for archiving: each as given, except that a
// sub-agent's file whose session file is given too comes right after
// that session's file, wherever it was given, so that its run is linked
// into the session's run as sync links it (the session's run is held
// open until then: group.archive).
func groups(files []resolved) []group {
	sessions := map[string]int{} // absolute path -> index of a session file
	for i, f := range files {
		if f.im.Error == "" && f.sections == nil && f.sub == nil {
			if abs, err := filepath.Abs(f.im.File); err == nil {
				if _, dup := sessions[abs]; !dup {
					sessions[abs] = i
				}
			}
		}
	}
	subs, after := map[int][]int{}, map[int]bool{}
	for i, f := range files {
		if f.sub == nil {
			continue
		}
		if j, ok := sessions[f.sub.Parent]; ok && files[j].im.Provider == f.im.Provider {
			subs[j] = append(subs[j], i)
			after[i] = true
		}
	}
	gs := make([]group, 0, len(files)-len(after))
	for i := range files {
		if !after[i] {
			gs = append(gs, group{file: i, subs: subs[i]})
		}
	}
	return gs
}

// archive archives a group's files: the session's file, its run held
// open while its sub-agents' files are archived as child runs of it,
// then ended as the session's part would have ended it.
func (g group) archive(ctx context.Context, arc *archive.Archiver, opts *Options, files []resolved) []Imported {
	f := files[g.file]
	if len(g.subs) == 0 {
		return f.archive(ctx, arc, opts, "")
	}
	arc.Hold(f.path())
	ims := f.archive(ctx, arc, opts, "")
	// Its sub-agents' files found on disk, not given, only into its
	// run while it is open (held, or a sync's): when it has ended they
	// would stand alone.
	e := arc.Ledger().ByPath(f.path())
	open := e != nil && !e.Closed
	for _, i := range g.subs {
		if files[i].im.found && !open {
			continue
		}
		ims = append(ims, files[i].archive(ctx, arc, opts, f.path())...)
	}
	if o, ok := arc.EndHeld(ctx, f.path()); ok && o.Action == archive.ActionFailed {
		ims[0].Error = "its run could not be ended after its sub-agents' files: " + o.Reason
	}
	return ims
}

// archive archives one file: one Imported, or one per session of a file
// that holds many (a sections store's), File then naming the session
// (FILE#N). session, for a sub-agent's file whose session's file is
// archived in the same import, is that file's path as the archive knows
// it (resolved.path).
func (f resolved) archive(ctx context.Context, arc *archive.Archiver, opts *Options, session string) []Imported {
	im := f.im
	switch {
	case im.Error != "":
		return []Imported{im}
	case f.sections != nil:
		outs, _ := arc.SyncSections(ctx, archive.Session{Loc: f.sections, Path: im.File})
		ims := make([]Imported, len(outs))
		for i, o := range outs {
			ims[i] = im
			ims[i].File = o.Path
			if i > 0 {
				ims[i].detectedIn = ""
			}
			ims[i].fromOutcome(opts, arc, o)
		}
		return ims
	case f.sub != nil:
		// A sub-agent's file (Claude Code's <session>/subagents/agent-*.jsonl,
		// Kimi Code's agents/agent-N/wire.jsonl, Cursor's subagents/*.jsonl):
		// a child run of its session's run when that run is open
		// (archived just before, held open, or synced earlier), else a
		// run of its own named as the session's sub-agent, never a
		// session of its own.
		s := *f.sub
		if session != "" {
			s.Parent = session // as the ledger knows it
		}
		im.fromOutcome(opts, arc, arc.SyncSession(ctx, s))
		return []Imported{im}
	case f.store != nil:
		im.fromOutcome(opts, arc, arc.SyncSession(ctx, *f.store))
		return []Imported{im}
	}
	im.fromOutcome(opts, arc, arc.SyncFileAs(ctx, im.Provider, im.Format, im.File))
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
