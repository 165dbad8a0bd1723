package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/agentproc"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/exportcmd"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/cli/searchcmd"
	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Options are the parsed flags and arguments.
type Options struct {
	F       *cmdutil.Factory
	Plugins plugload.Flags
	// OTLP sends the recorded step (and the run, when this record ends it)
	// to an OpenTelemetry collector; OTLPFlags say where and how.
	OTLP      bool
	OTLPFlags exportcmd.OTLPOptions
	Provider  string
	Format    string
	Input     string
	RunID     string
	Name      string
	Path      string
	Iter      int
	Prompt    string
	System    string
	Redact    bool
	Live      bool
	JSON      bool
	Quiet     bool
	Fsync     string
	// LockTimeout, when positive, makes waiting for the run's lock held
	// by another process fail after that long.
	LockTimeout time.Duration
	Command     []string
}

// NewCmdRecord returns the record command; runF replaces the run function
// in tests of flag parsing.
func NewCmdRecord(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "record --provider P [--input FILE|-] [flags] [-- CMD ARGS...]",
		Short: "Record an agent run: wrap its CLI, or read its saved output",
		Long: `Record normalizes an agent's output into a transcript.

With -- CMD, twasm runs the agent CLI as a child process: its stdout is
normalized as it arrives and passed through to the terminal (unless --quiet
or --json), its stderr is shown (--quiet included) and kept with the raw
capture, and twasm exits with the child's exit code. The agent runs in a
process group of its own: SIGINT (Ctrl-C), SIGTERM and SIGHUP reach it
once, forwarded by twasm, which records everything it prints until it
exits and then exits 130 (128 + the signal). The step's result records the
command line ("command") and the working directory ("cwd"). Without -- CMD,
the output is read from --input or stdin; stdin on a terminal is announced
on stderr (end it with Ctrl-D, cancel with Ctrl-C).

The run gets a run bracket and one agent step (path "agent", or --path).
The raw bytes are kept beside the transcript. Input is JSON Lines: a line
of more than 32 MiB is kept in the raw capture but not normalized (counted
unmapped as "oversized_line"), and output that goes on for 64 MiB without a line end (a binary
stream, /dev/zero) stops the recording with a message saying so; --input
and import take regular files only (a FIFO or a device is refused). With --run-id the step is
appended to a run begun with "twasm run begin"; several records may append
to one run at the same time.

After the step, stderr gets the transcript's path and, when there is
anything a user must know, one line starting "twasm: ": the step's status
when it is not ok and the provider's reason, how many lines the plugin
could not map, tool calls left without a result, lines lost to a plugin
fault, and, when the plugin understood no line of the input (or the input
was empty), that the provider looks wrong and what detection says the
input is. A recording of which the plugin understood no line exits 1 (or
with the agent's own non-zero exit code); the run and the raw bytes are
kept either way.`,
		Example: `  twasm record --provider claude -- claude -p "fix the tests" --output-format stream-json --verbose
  twasm record --provider codex --live -- codex exec --json "add a README"
  twasm record --provider gemini --input saved.jsonl --prompt "what I asked"
  RUN=$(twasm run begin --name nightly)
  twasm record --run-id "$RUN" --path review --provider claude --input review.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
				return cmdutil.FlagErrorf("unexpected argument %q: put the agent command after --", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() >= 0 {
				opts.Command = args[cmd.ArgsLenAtDash():]
			}
			if len(opts.Command) > 0 && opts.Input != "" {
				return cmdutil.FlagErrorf("--input and a command after -- exclude each other")
			}
			if opts.Provider == "" && opts.Plugins.Plugin == "" {
				return cmdutil.FlagErrorf("--provider is required")
			}
			// Checked before anything is written: a path that cannot
			// name the step's raw capture must not leave a run behind.
			if err := runctl.ValidStepPath(opts.Path); err != nil {
				return cmdutil.FlagErrorf("--path: %v", err)
			}
			if opts.Iter < 0 {
				return cmdutil.FlagErrorf("--iteration must not be negative")
			}
			if _, err := fsyncPolicy(opts.Fsync); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Provider, "provider", "", "provider of the output (see twasm plugins list)")
	fl.StringVar(&opts.Format, "format", "", "format hint for the plugin (default: detect)")
	fl.StringVarP(&opts.Input, "input", "i", "", "read the provider output from FILE (- for stdin)")
	fl.StringVar(&opts.RunID, "run-id", "", "append the step to this run (begun with twasm run begin)")
	fl.DurationVar(&opts.LockTimeout, "lock-timeout", 0, "fail when another process holds the run's lock this long (default: wait, naming the holder after 3s)")
	fl.StringVar(&opts.Name, "name", "", "run name (default: \"record <provider>\")")
	fl.StringVar(&opts.Path, "path", "agent", "step path")
	fl.IntVar(&opts.Iter, "iteration", 0, "step iteration (loop index)")
	fl.StringVar(&opts.Prompt, "prompt", "", "the prompt given to the agent (recorded as message.user)")
	fl.StringVar(&opts.System, "system-prompt", "", "the system prompt given to the agent")
	fl.BoolVar(&opts.Redact, "redact", false, redact.FlagUsage)
	fl.BoolVar(&opts.Live, "live", false, "print one line per event on stderr as it is recorded")
	fl.BoolVar(&opts.JSON, "json", false, "print a summary object on stdout")
	fl.BoolVar(&opts.OTLP, "otlp", false, "once recorded, send the step (and the run, when this record ends it) to an OpenTelemetry collector, as 'twasm export otlp' does")
	exportcmd.AddOTLPFlags(cmd, &opts.OTLPFlags, "otlp-")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "do not pass the agent's stdout through (its stderr always is)")
	fl.StringVar(&opts.Fsync, "fsync", "boundary", "when to fsync the transcript: never, boundary (step and run ends) or always")
	opts.Plugins.Register(cmd, true)
	_ = cmd.RegisterFlagCompletionFunc("fsync", cobra.FixedCompletions([]string{"never", "boundary", "always"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func fsyncPolicy(s string) (recorder.FsyncPolicy, error) {
	switch s {
	case "never":
		return recorder.FsyncNever, nil
	case "", "boundary":
		return recorder.FsyncOnBoundary, nil
	case "always":
		return recorder.FsyncAlways, nil
	}
	return 0, cmdutil.FlagErrorf("--fsync must be never, boundary or always, not %q", s)
}

// Summary is what --json prints.
type Summary struct {
	RunID      string                `json:"run_id"`
	Transcript string                `json:"transcript"`
	Path       string                `json:"path"`
	Status     string                `json:"status"`
	Error      string                `json:"error,omitempty"`
	ExitCode   *int                  `json:"exit_code,omitempty"`
	Provider   string                `json:"provider"`
	Session    string                `json:"session_id,omitempty"`
	Model      string                `json:"model,omitempty"`
	Usage      *transcript.Usage     `json:"usage,omitempty"`
	CostUSD    *float64              `json:"cost_usd,omitempty"`
	Tools      map[string]int        `json:"tools"`
	Unmapped   map[string]int        `json:"unmapped,omitempty"`
	Dangling   []string              `json:"dangling,omitempty"`
	Redacted   map[string]int        `json:"redacted,omitempty"`
	Warnings   []string              `json:"warnings,omitempty"`
	Raw        *transcript.RawRef    `json:"raw,omitempty"`
	Plugin     *transcript.PluginRef `json:"plugin,omitempty"`
	// Errors are the errors the provider reported (the step result's).
	Errors []transcript.ProviderError `json:"errors,omitempty"`
	// SilentLines counts the raw lines the plugin said nothing about (no
	// record, not declared ignored, not counted unmapped: spec 6.8 wants
	// none); SilentFirst lists the first few.
	SilentLines int   `json:"silent_lines,omitempty"`
	SilentFirst []int `json:"silent_first,omitempty"`
	// SubRunUsage and SubRunTools sum the runs the step's sub-agents
	// wrote (its linked child runs, theirs included), as view and stats
	// show them: Usage is the step's own (a sub-agent's messages are not
	// in the step that started it), Tools counts this run's calls only.
	SubRunUsage *transcript.Usage `json:"sub_run_usage,omitempty"`
	SubRunTools int               `json:"sub_run_tools,omitempty"`
	// UsageInAll is Usage and SubRunUsage together, when the step has
	// sub-runs that used some.
	UsageInAll *transcript.Usage `json:"usage_in_all,omitempty"`
}

// ExitError carries the agent's exit code out of the command.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("agent exited with code %d", e.Code) }

// ExitStatus makes twasm exit with the agent's code.
func (e *ExitError) ExitStatus() int { return e.Code }

// recordGCPercent is the collector's GOGC while a record runs. Its live
// heap is small (about 5 MB on real session logs: the plugin's memory is
// not Go heap) and most of what it allocates is garbage at once (read
// buffers, batches, the plugin's output, encoded events), so at GOGC=100
// it collected every few MB: on the repository's real Codex and Copilot
// logs (1.7 and 1.5 MiB) 3-4 collections, 6-7% of the record's CPU. At
// 200 the heap peaks higher, under the memory limit (recordMemoryLimit),
// which still bounds the heap whatever GOGC says.
const recordGCPercent = 200

// recordMemoryLimit is the Go memory limit while a record runs, lower
// than the process's (cmd/twasm) unless the user set GOMEMLIMIT. The
// limit counts Go's memory only, and a record's RSS holds about 45 MB
// that is not: the binary's pages (about 25 MB), the plugin's linear
// memory (a mapping of its own: the claude plugin's 16 MiB, 14 MB
// resident) and SQLite's and wazero's mappings. Under the 64 MiB limit,
// with GOGC at 200, the heap of a record of the claude golden inputs
// repeated with ids of their own (benchreport's RSS input) grew to the
// limit, and its peak RSS was 94.5 MiB at 128 MiB of input against
// 59 MiB at 32 MiB. Under this limit: 61.9 MiB at 128 MiB (1.06x the
// CPU, farm-bench, 3 pairs) and 51.6 MiB at 32 MiB (0.88x). 28 MiB cost
// 1.14x the user CPU at 128 MiB, 24 MiB 1.43x: the live heap is then
// close to the limit (the assembler keeps an entry per tool call id:
// 13 MB live at 128 MiB, 39 at 512). The limit follows the live heap
// (cmdutil.LimitLower: twice the live heap when that is higher, back
// down when it shrinks), so that a longer input is collected as at
// GOGC=100 rather than without end: at 512 MiB the peak RSS was
// 153 MiB (the plugin's memory 59 MB of it) for 24 s of user CPU,
// against 163 MiB and 44 s before. With a cold cache the plugin's
// compilation adds its own peak: 65.6 and 69.8 MiB at 32 and 128 MiB.
//
// Not taken since (#31, flat in input size): the assembler's call ids
// in a packed table of sorted parts (32 bytes an id) instead of a map:
// 36 bytes of live heap an answered id instead of 78, but the peak RSS
// of that record moved from 53.4 and 59.2 MiB at 32 and 128 MiB to 53.3
// and 59.0 (median of 3, old and new binaries in turn), and from 99.5 to
// 97.6 MiB at 384 MiB, while a lookup or insert cost 3-4x a map's (a
// bisection of a table larger than the cache). At the peak of the
// 128 MiB record, /proc/PID/smaps showed 25.7 MB resident in the Go
// heap's mapping (23.1 at 32 MiB) and 22 MB of the binary's pages;
// halving the ids' live heap left the heap's resident peak where it
// was: the heap grows toward the limit whatever its live part.
const recordMemoryLimit = 32 << 20

// Run records.
func Run(ctx context.Context, opts *Options) (err error) {
	var gc cmdutil.GCRaise
	gc.Raise(recordGCPercent)
	defer gc.Lower()
	var limit cmdutil.LimitLower
	limit.Lower(recordMemoryLimit, opts.F.Getenv != nil && opts.F.Getenv("GOMEMLIMIT") != "")
	defer limit.Restore()
	if len(opts.Command) == 0 {
		// Reading a file: SIGINT cancels, and the run still ends
		// (cancelled). With a child, agentproc forwards the signals.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	r := &recording{opts: opts, f: opts.F}
	closeInput, err := r.openInput(ctx)
	if err != nil {
		return err
	}
	defer closeInput()
	if err := r.loadPlugin(ctx); err != nil {
		return err
	}
	defer r.rt.Close(context.WithoutCancel(ctx))
	if err := r.begin(ctx); err != nil {
		return err
	}
	stepErr := r.run.StepAt(ctx, opts.Path, opts.Iter, transcript.KindAgent, r.capture,
		lifecycle.StepOptions{EndRun: !r.attached}) // a run of its own ends with its step: one write and fsync for both
	stepErr, endErr := r.end(ctx, stepErr)
	return r.outcome(stepErr, endErr)
}

// recording is one record command's state, phase by phase: Run calls
// openInput (resolve the input), loadPlugin, begin (begin or attach the
// run), capture (the agent step), end (end or detach, index, OTLP) and
// outcome (summarize and choose the exit code).
type recording struct {
	opts *Options
	f    *cmdutil.Factory

	input    io.Reader // saved output to read (no command)
	rt       *host.Runtime
	plugin   *host.Plugin // a --plugin, loaded before the run begins
	provider string
	red      *redact.Redactor // --redact
	masker   cmdutil.ByteMasker
	run      *lifecycle.Run
	attached bool // --run-id: a step added to a run begun elsewhere
	live     sync.WaitGroup

	res     *transcript.AgentResult
	silent  *capture.Result
	procRes agentproc.Result
}

// openInput resolves what is read when no command is given: stdin, or a
// file refused before a run is written for it if it cannot be read.
func (r *recording) openInput(ctx context.Context) (closeFn func(), err error) {
	opts := r.opts
	if len(opts.Command) > 0 {
		return func() {}, nil
	}
	switch opts.Input {
	case "", "-":
		r.input = cmdutil.StdinInput(ctx, r.f.IOStreams)
		return func() {}, nil
	}
	// A directory, a device (/dev/zero never ends), a named pipe (open
	// would block; a stream goes to stdin, where a line longer than
	// capture.MaxLineBytes ends the reading) are refused.
	file, err := regfile.Open(opts.Input)
	if err != nil {
		return nil, cmdutil.PathInputError(opts.Input, err)
	}
	r.input = file
	return func() { file.Close() }, nil
}

// loadPlugin opens the plugin runtime. The provider's plugin compiles and
// instantiates in the background (most of a warm start) while the run and
// the step begin; the step waits for it before it reads anything. A
// provider no plugin serves is refused here, before a run is written. A
// --plugin is loaded first: a file that does not load is bad input, and
// nothing is written for it (RATIONALE.md, "Why does record begin the run
// while its plugin loads?").
func (r *recording) loadPlugin(ctx context.Context) error {
	opts := r.opts
	var preload []string
	if opts.Plugins.Plugin == "" {
		preload = []string{opts.Provider}
	}
	rt, err := plugload.Open(ctx, r.f, opts.Plugins, preload...)
	if err != nil {
		return err
	}
	r.rt, r.provider = rt, opts.Provider
	if opts.Plugins.Plugin != "" {
		if r.plugin, err = plugload.Resolve(ctx, rt, opts.Plugins, opts.Provider); err != nil {
			rt.Close(context.WithoutCancel(ctx))
			return err
		}
		if r.provider == "" {
			r.provider = r.plugin.Info().Manifest.Providers[0]
		}
	}
	return nil
}

// begin starts the run, or attaches to the run --run-id names; a run that
// cannot take a step is input the user must fix (exit 2).
func (r *recording) begin(ctx context.Context) error {
	opts, f, ios := r.opts, r.f, r.f.IOStreams
	policy, _ := fsyncPolicy(opts.Fsync)
	recOpts := recorder.Options{Fsync: policy, Logger: f.Logger(), LockTimeout: opts.LockTimeout}
	if opts.Redact {
		r.red = redact.New()
		r.masker = r.red
		recOpts.Mask = r.red.Mask
	}
	store := f.Store()
	runOpts := lifecycle.RunOptions{Name: opts.Name, Producer: f.Producer(), Recorder: recOpts, Logger: f.Logger()}
	if runOpts.Name == "" {
		runOpts.Name = "record " + r.provider
	}
	if opts.Live {
		color := ios.ErrColorEnabled()
		runOpts.Observe = func(rec *recorder.Recorder) {
			// The run id first, while the agent runs, so that another
			// terminal can follow or open it now, not after the end.
			id := strings.TrimSuffix(filepath.Base(rec.Path()), ".jsonl")
			fmt.Fprintf(ios.ErrOut, "twasm: recording run %s (twasm tail -f %s follows it from elsewhere)\n", id, views.ShortID(id))
			events, _ := rec.Subscribe() // the feed ends when the run's recorder closes
			r.live.Add(1)
			go func() {
				defer r.live.Done()
				for ev := range events {
					fmt.Fprintln(ios.ErrOut, views.Compact(&ev, color))
				}
			}()
		}
	}
	var err error
	r.attached = opts.RunID != ""
	if !r.attached {
		r.run, err = lifecycle.Start(ctx, store, runOpts)
		return err
	}
	r.run, err = lifecycle.Attach(ctx, store, opts.RunID, runOpts)
	if errors.Is(err, recorder.ErrInvalidRunID) {
		return cmdutil.FlagErrorf("--run-id: %v", err)
	}
	switch {
	case errors.Is(err, recorder.ErrRunFinished):
		return &cmdutil.InputError{Path: "--run-id " + opts.RunID, Err: errors.New("the run has finished (its transcript ends with run.completed): nothing may be added; begin a new run")}
	case errors.Is(err, fs.ErrNotExist):
		return &cmdutil.InputError{Path: "--run-id " + opts.RunID, Err: fmt.Errorf("no such run in %s", store.Root)}
	case errors.Is(err, lifecycle.ErrNotARun), errors.Is(err, regfile.ErrNotRegular), errors.Is(err, recorder.ErrRunMismatch):
		return &cmdutil.InputError{Path: "--run-id " + opts.RunID, Err: err}
	}
	return err
}

// capture is the agent step: the prompt, then the agent's output (a
// command run, or saved output read) through the one capture pipeline,
// and the step's result.
func (r *recording) capture(ctx context.Context, s *lifecycle.Step) error {
	opts := r.opts
	if opts.Prompt != "" || opts.System != "" {
		if err := s.UserMessage(ctx, opts.Prompt, opts.System); err != nil {
			return err
		}
	}
	// A signal leaves the agent's output to be recorded, but a plugin
	// busy with it must not hold twasm up: its calls stop shortly after
	// the signal (plugload.SignalGrace). A preloaded plugin is waited for
	// once the raw capture is open, before anything is read or the agent
	// starts.
	cplugin := plugload.CaptureUntil(r.plugin, ctx)
	if r.plugin == nil {
		cplugin = plugload.CaptureLoading(func(ctx context.Context) (*host.Plugin, error) {
			p, err := plugload.Resolve(ctx, r.rt, opts.Plugins, r.provider)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", errPluginLoad, err)
			}
			return p, nil
		}, r.provider, ctx)
	}
	// The raw capture's entries are synced while the plugin loads
	// (capture.Options.EarlyEntries), off the path to the step's end.
	copts := capture.Options{
		Provider: r.provider, Format: opts.Format, Store: r.f.Store(),
		Plugin: cplugin, Logger: r.f.Logger(), EarlyEntries: true,
	}
	if r.red != nil {
		copts.Mask, copts.Masked, copts.Split = r.red.MaskBytes, r.red.Counts, redact.NewStream()
	}
	if len(opts.Command) == 0 {
		// Saved output: the pipeline import and renormalize use too.
		res, err := capture.Run(ctx, s, capture.Source{Stdout: r.input}, copts)
		if res != nil {
			r.res, r.silent = res.AgentResult, res
		}
		if errors.Is(err, capture.ErrRead) {
			err = &cmdutil.InputError{Err: err}
		}
		return err
	}
	agent, err := capture.Start(ctx, s, copts)
	if err != nil {
		return err
	}
	var exitCode *int
	var feedErr error
	r.procRes, feedErr = runAgent(ctx, opts, agent)
	if feedErr == nil || !errors.Is(feedErr, agentproc.ErrStart) {
		exitCode = &r.procRes.ExitCode
	}
	r.silent, err = agent.Finish(context.WithoutCancel(ctx), exitCode)
	if r.silent != nil {
		r.res = r.silent.AgentResult
	}
	if err == nil && r.res != nil {
		err = s.SetResult(cmdutil.WithInvocation(r.res, opts.Command, r.masker))
	}
	if feedErr != nil {
		return errors.Join(feedErr, err)
	}
	if err != nil {
		return err
	}
	if r.procRes.Signaled != nil {
		return fmt.Errorf("interrupted by %v: %w", r.procRes.Signaled, context.Canceled)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return capture.ResultError(r.res)
}

// end ends the run (or detaches from a run begun elsewhere), waits for the
// live feed, creates the search index where there is none, and sends the
// run to OTLP when asked. It returns the step's own error and the end's.
func (r *recording) end(ctx context.Context, stepErr error) (error, error) {
	f := r.f
	var endErr error
	if r.attached {
		endErr = r.run.Detach()
	} else {
		endErr = r.run.Finish(ctx, stepErr) // the end's result: written with the step
		stepErr = stepOwn(stepErr, endErr)
	}
	r.live.Wait()
	// The plugin is done with: its instances' memory (a mapping of its
	// own, the claude plugin's 14 MB resident) goes back before the
	// index below takes SQLite's. Creating the index of a new storage
	// after a record of 128 MiB of claude logs added 8 MB to the peak
	// RSS, which was then set there. Run's deferred Close does nothing
	// more.
	if err := r.rt.Close(context.WithoutCancel(ctx)); err != nil {
		f.Logger().Warn("closing the plugins", "err", err)
	}
	// The index is not brought up to date here: search, ls and stats
	// check every transcript against it first and read the runs it lacks,
	// so a record does not pay for SQLite (opening it, a transaction,
	// a checkpoint: several fsyncs). Only a storage without an index gets
	// one, so that the next ls does not report it missing as for a
	// storage written without twasm (RATIONALE.md, "Who keeps the search
	// index current?").
	if _, err := os.Stat(index.File(f.StorageRoot())); errors.Is(err, fs.ErrNotExist) {
		if err := searchcmd.RefreshRuns(context.WithoutCancel(ctx), f, []string{r.run.RunID()}); err != nil {
			f.Logger().Warn("search index not created (twasm search builds it)", "err", err)
		}
	}
	if r.opts.OTLP {
		sendOTLP(context.WithoutCancel(ctx), r.opts, r.run.Recorder().Path(), r.attached)
	}
	return stepErr, endErr
}

// outcome says what was recorded and returns the command's error, which
// chooses the exit code: bad input, a recording that failed, the agent's
// interruption or exit code, the agent's own failure.
func (r *recording) outcome(stepErr, endErr error) error {
	opts, f, ios, run, res := r.opts, r.f, r.f.IOStreams, r.run, r.res
	var outcomeErr error
	failed := recordingFailure(stepErr, endErr)
	if res != nil {
		fmt.Fprintf(ios.ErrOut, "transcript: %s\n", run.Recorder().Path())
		if failed == nil {
			// After a failure the result describes what was recorded,
			// not what the agent did: reportFailure says that instead.
			outcomeErr = cmdutil.ReportStep(ios.ErrOut, "", f.StorageRoot(), run.Recorder().Path(), res)
		}
		if opts.Redact {
			fmt.Fprintf(ios.ErrOut, "redacted: %s\n", cmdutil.RedactedSummary(res.Redacted))
		}
		if opts.JSON {
			if err := printSummary(ios.Out, run, opts.Path, res, r.silent); err != nil {
				return err
			}
		}
	}
	if errors.Is(stepErr, agentproc.ErrStart) {
		return &cmdutil.InputError{Err: stepErr}
	}
	if failed != nil {
		if errors.Is(stepErr, errPluginLoad) && endErr == nil {
			what := "no input was read"
			if len(opts.Command) > 0 {
				what = "the agent was not started"
			}
			fmt.Fprintf(ios.ErrOut, "twasm: the step is recorded as failed in %s: its plugin did not load, so %s\n", run.Recorder().Path(), what)
			return failed
		}
		reportFailure(ios.ErrOut, run, r.attached, isWriteFailure(stepErr), res)
		return failed
	}
	if len(opts.Command) > 0 && res != nil {
		if sig, ok := r.procRes.Signaled.(syscall.Signal); ok {
			// The user stopped the agent: whatever it exited with (a
			// SIGPIPE it would have got if twasm had stopped reading, its
			// own code), twasm reports the interruption, as a shell does.
			return &InterruptedError{Signal: sig, AgentExit: r.procRes.ExitCode}
		}
		if r.procRes.ExitCode != 0 {
			return &ExitError{Code: r.procRes.ExitCode}
		}
		return outcomeErr
	}
	if stepErr != nil && !errors.Is(stepErr, capture.ErrAgent) {
		return stepErr
	}
	return outcomeErr
}

// errPluginLoad marks a step that failed because its plugin, loading
// while the run began, did not load: nothing was read for it.
var errPluginLoad = errors.New("the plugin did not load")

// recordingFailure is the error of a recording that failed part way (a
// full disk, an I/O error, a run ended by another process meanwhile), or
// nil: the agent's own status, an interruption and bad input are not
// failures of the recording.
// stepOwn returns the step's error without the end's failure, which
// StepAt joins to it when the step's completion and run.completed were one
// write (lifecycle.StepOptions.EndRun): the two are reported apart.
func stepOwn(stepErr, endErr error) error {
	j, ok := stepErr.(interface{ Unwrap() []error })
	if endErr == nil || !ok {
		return stepErr
	}
	var own []error
	for _, e := range j.Unwrap() {
		if e != endErr {
			own = append(own, e)
		}
	}
	if len(own) == len(j.Unwrap()) {
		return stepErr
	}
	if len(own) == 1 {
		return own[0]
	}
	return errors.Join(own...)
}

func recordingFailure(stepErr, endErr error) error {
	if endErr != nil {
		return errors.Join(stepErr, endErr)
	}
	var ie *cmdutil.InputError
	switch {
	case stepErr == nil:
		return nil
	case isWriteFailure(stepErr):
		return stepErr
	case errors.Is(stepErr, capture.ErrAgent), errors.As(stepErr, &ie), errors.Is(stepErr, context.Canceled):
		return nil
	}
	return stepErr
}

// isWriteFailure reports errors of the storage.
func isWriteFailure(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.EFBIG, recorder.ErrNotDurable, recorder.ErrRunFinished} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// reportFailure says on stderr what the transcript holds and what it
// lacks after a recording failed part way, so that nobody takes the file
// for the whole story.
func reportFailure(w io.Writer, run *lifecycle.Run, attached, stepFailed bool, res *transcript.AgentResult) {
	st := run.Recorder().State()
	fmt.Fprintf(w, "recorded: %s: events up to seq %d", run.Recorder().Path(), st.LastSeq)
	if st.Finished {
		fmt.Fprint(w, " (the run is ended)")
	}
	fmt.Fprintln(w)
	var missing []string
	if stepFailed {
		missing = append(missing, "the agent's output from the failure on (the step, if it could be closed, says error)")
	}
	for _, b := range st.Open {
		if b.Type == transcript.StepStarted {
			missing = append(missing, fmt.Sprintf("step.completed of step %q (the step's result)", b.Path))
		} else {
			missing = append(missing, fmt.Sprintf("step.call_workflow.completed of sub-run %s", b.ChildRunID))
		}
	}
	if !st.Finished && !attached {
		missing = append(missing, "run.completed")
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "not recorded: %s\n", strings.Join(missing, ", "))
	}
	if res != nil && res.Raw != nil {
		fmt.Fprintf(w, "raw capture: %d bytes kept in %s\n", res.Raw.Bytes, res.Raw.Path)
	}
	if !st.Finished && len(missing) > 0 {
		fmt.Fprintf(w, "when there is room again: twasm run end %s --cancel-open --error \"recording failed\"\n", run.RunID())
	}
}

// InterruptedError is the outcome of `record -- CMD` stopped by SIGINT,
// SIGTERM or SIGHUP: twasm forwarded the signal to the agent, recorded
// everything it printed until it exited, and exits 128 + the signal
// number.
type InterruptedError struct {
	Signal    syscall.Signal
	AgentExit int
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted by %v (the agent exited with code %d); the run is recorded as cancelled", e.Signal, e.AgentExit)
}

// ExitStatus is 128 + the signal number: 130 for SIGINT.
func (e *InterruptedError) ExitStatus() int { return 128 + int(e.Signal) }

// runAgent runs the agent CLI of `record -- CMD` and feeds its output to
// the capture. The agent runs in a process group of its own, so a Ctrl-C
// reaches it once, forwarded by agentproc; and it is read to the end
// whatever happens to twasm meanwhile: everything it prints before it
// exits is normalized (a signal cancels ctx, not the feed), a failure to
// record stops the feeding but not the reading (the agent is never cut off
// with SIGPIPE for twasm's trouble), and a closed stdout of twasm's own
// stops the pass-through, not the recording.
func runAgent(ctx context.Context, opts *Options, agent *capture.Agent) (agentproc.Result, error) {
	ios, log := opts.F.IOStreams, opts.F.Logger()
	// Writing the pass-through to a closed pipe must fail with EPIPE, not
	// kill twasm with SIGPIPE before the run is closed. Notify, not
	// Ignore: an ignored signal would be inherited by the agent.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	fctx := context.WithoutCancel(ctx)
	pass := !opts.Quiet && !opts.JSON
	var feedErr error
	res, err := agentproc.Run(fctx, agentproc.Options{
		Args:  opts.Command,
		Stdin: nil,
		Stdout: func(p []byte) error {
			if pass {
				if _, err := ios.Out.Write(p); err != nil {
					pass = false
					log.Warn("record: stopped passing the agent's output through: twasm's stdout is closed; still recording", "err", err)
				}
			}
			if feedErr == nil {
				if feedErr = agent.Feed(fctx, p); feedErr != nil {
					log.Warn("record: recording the agent's output failed; the agent keeps running and its output is no longer recorded", "err", feedErr)
				}
			}
			return nil
		},
		Stderr: func(p []byte) {
			// Always shown, --quiet included: it is where an
			// agent says why it failed.
			_, _ = ios.ErrOut.Write(p)
			_ = agent.FeedStderr(p)
		},
	})
	if res.OutputLeftOpen {
		log.Warn("record: a process the agent started kept its output open after the agent exited; stopped reading it",
			"after", agentproc.DefaultWaitDelay.String())
	}
	if err != nil {
		return res, err
	}
	return res, feedErr
}

// sendOTLP exports what this record wrote: the whole run when it began
// the run, else the step from its start (with the run's span only if the
// run has ended). A failed export is said on stderr, with how to send the
// run again; the recording itself stands, and so does the exit code.
func sendOTLP(ctx context.Context, opts *Options, path string, attached bool) {
	f := opts.F
	var from uint64
	if attached {
		seq, err := export.LastStepStart(ctx, path, opts.Path, opts.Iter)
		if err != nil {
			fmt.Fprintf(f.IOStreams.ErrOut, "otlp: not sent: %v\n", err)
			return
		}
		from = seq
	}
	p, err := exportcmd.NewPipeline(ctx, &opts.OTLPFlags, f.Getenv, f.Logger())
	if err == nil {
		_, err = p.Export(ctx, export.Run{Path: path, Dir: filepath.Dir(path)}, export.OTLPOptions{FromSeq: from})
		if _, cerr := p.Close(ctx); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "otlp: not sent: %v; the run is recorded, and 'twasm export otlp %s' sends it again\n", err,
			strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	}
}

func printSummary(w io.Writer, run *lifecycle.Run, path string, res *transcript.AgentResult, acct *capture.Result) error {
	s := Summary{
		RunID: run.RunID(), Transcript: run.Recorder().Path(), Path: path, Status: res.Status, Error: res.Error,
		ExitCode: res.ExitCode, Provider: res.Provider, Session: res.SessionID, Model: res.Model,
		Usage: res.Usage, CostUSD: res.CostUSD, Tools: map[string]int{}, Unmapped: res.Unmapped,
		Dangling: res.Dangling, Redacted: res.Redacted, Warnings: res.Warnings, Raw: res.Raw, Plugin: res.Plugin,
		Errors: res.Errors,
	}
	if acct != nil {
		s.SilentLines, s.SilentFirst = acct.Silent, acct.SilentLines
	}
	if err := countTools(run.Recorder().Path(), s.Tools); err != nil {
		return err
	}
	if t, err := subRuns(run.Recorder().Path(), path); err != nil {
		return err
	} else if t != nil {
		s.SubRunUsage, s.SubRunTools = t.Usage, t.Tools
		if !t.Usage.IsZero() {
			s.UsageInAll = &transcript.Usage{}
			s.UsageInAll.Add(res.Usage)
			s.UsageInAll.Add(t.Usage)
		}
	}
	return cmdutil.WriteJSON(w, s)
}

// subRuns sums the child runs linked from the last agent step at path in
// the run file (the one this record wrote), theirs included; nil when it
// has none.
func subRuns(runFile, path string) (*views.Totals, error) {
	run, err := views.LoadFile(runFile)
	if err != nil {
		return nil, err
	}
	tree := views.BuildTree(views.Loader{Dir: filepath.Dir(runFile)}, run)
	var step *views.StepNode
	tree.Walk(func(s *views.StepNode, _ int) bool {
		if s.Path == path && s.Kind == string(transcript.KindAgent) {
			step = s
		}
		return true
	})
	if step == nil {
		return nil, nil
	}
	var t *views.Totals
	var walk func([]*views.StepNode)
	walk = func(ss []*views.StepNode) {
		for _, s := range ss {
			if s.Child != nil {
				c := s.Child.Totals()
				if t == nil {
					t = &views.Totals{}
				}
				t.Runs += c.Runs
				t.Tools += c.Tools
				if !c.Usage.IsZero() {
					if t.Usage == nil {
						t.Usage = &transcript.Usage{}
					}
					t.Usage.Add(c.Usage)
				}
			}
			walk(s.Steps)
		}
	}
	walk(step.Steps)
	return t, nil
}

// countTools counts tool.call events by name in the run file (this
// process's step and any other: the file is the truth).
func countTools(path string, into map[string]int) error {
	f, err := regfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := transcript.NewReader(f)
	for r.Next() {
		if ev := r.Event(); ev != nil && ev.Type == transcript.ToolCall {
			if tp := ev.Tool(); tp != nil {
				into[tp.Name]++
			}
		}
	}
	return r.Err()
}
