package tail

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// Options are the inputs of runTail.
type Options struct {
	IO       *iostreams.IOStreams
	Resolve  func(arg string) (cmdutil.RunRef, error)
	Logger   func() *slog.Logger
	Run      string
	Follow   bool
	JSON     bool
	Lines    int
	Interval time.Duration
}

// NewCmdTail returns the tail command.
func NewCmdTail(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Resolve: f.ResolveRun, Logger: f.Logger}
	cmd := &cobra.Command{
		Use:   "tail [-f] RUN",
		Short: "Print the events of a run, and follow it as it is written",
		Long: `Print the events of a run, one compact line per event
("#12 review  message.assistant  text: ..."), or the raw JSONL lines with
--json.

With -f, keep watching the transcript while another process writes it and
print each event as its line completes, until run.completed arrives (exit
0) or the command is interrupted (exit 130). A run that has not started yet
is waited for. A line is printed only once its LF is written: a torn last
line left by a killed writer is never shown, and when the recorder repairs
it the follow goes on with the repaired file.`,
		Example: `  twasm tail 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm tail -f -n 20 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm tail -f --json run.jsonl | jq -c 'select(.type == "tool.call")'`,
		Args:              cmdutil.ExactArgs(1, "RUN"),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if opts.Interval <= 0 {
				return cmdutil.FlagErrorf("--interval must be positive")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runTail(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing events as they are written, until run.completed")
	fl.BoolVar(&opts.JSON, "json", false, "print the raw transcript lines (JSONL)")
	fl.IntVarP(&opts.Lines, "lines", "n", -1, "print only the last N events already written (-1: all)")
	fl.DurationVar(&opts.Interval, "interval", views.DefaultPollInterval, "how often -f polls the file")
	return cmd
}

// printer writes events and remembers where it is, so that a re-read after
// the file was replaced does not print events twice.
type printer struct {
	opts    *Options
	log     *slog.Logger
	line    int
	lastSeq uint64
	skipTo  uint64 // after a reset: events up to this seq were printed
	done    bool
	// session is the source an archived agent session names in its
	// run.started (sync, import): such a run grows only when sync finds
	// more of the session.
	session, runID string
	// held collects the initial lines when -n limits them.
	held  [][]byte
	limit int
}

func (p *printer) handle(raw []byte) (bool, error) {
	p.line++
	ev, err := transcript.DecodeEvent(raw)
	if ev == nil {
		p.log.Warn("tail: skipping a line that is not a transcript event", "line", p.line, "err", err)
		return false, nil
	}
	if p.skipTo > 0 {
		if ev.Seq != 0 && ev.Seq <= p.skipTo {
			return false, nil
		}
		p.skipTo = 0
	}
	p.lastSeq = max(p.lastSeq, ev.Seq)
	if ev.Type == transcript.RunStarted {
		if sp := ev.Step(); sp != nil && sp.Extra[views.SessionSourceField] != nil {
			// {"provider": ..., "path": ..., "head": ...}
			var src struct{ Provider, Path string }
			_ = json.Unmarshal(sp.Extra[views.SessionSourceField], &src)
			p.session = strings.TrimSpace(cmp.Or(src.Provider, "an agent") + " " + src.Path)
			p.runID = ev.RunID
		}
	}
	if ev.Type == transcript.RunCompleted {
		p.done = true
	}
	if p.limit >= 0 {
		if p.limit > 0 {
			if len(p.held) == p.limit {
				p.held = p.held[1:]
			}
			p.held = append(p.held, append([]byte(nil), raw...))
		}
		return false, nil
	}
	return p.done, p.print(raw, ev)
}

func (p *printer) print(raw []byte, ev *transcript.Event) error {
	var err error
	if p.opts.JSON {
		_, err = fmt.Fprintf(p.opts.IO.Out, "%s\n", raw)
	} else {
		_, err = fmt.Fprintln(p.opts.IO.Out, views.Compact(ev, p.opts.IO.ColorEnabled()))
	}
	if err != nil {
		return fmt.Errorf("tail: write: %w", err)
	}
	return nil
}

// flushHeld prints the last N lines gathered by the first read.
func (p *printer) flushHeld() error {
	for _, raw := range p.held {
		ev, _ := transcript.DecodeEvent(raw)
		if err := p.print(raw, ev); err != nil {
			return err
		}
	}
	p.held, p.limit = nil, -1
	return nil
}

func runTail(ctx context.Context, opts *Options) error {
	ref, err := opts.Resolve(opts.Run)
	if err != nil {
		return err
	}
	log := opts.Logger()
	if !opts.Follow {
		if _, err := os.Stat(ref.Path); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return &cmdutil.InputError{Path: ref.Path, Err: err}
		}
	}
	p := &printer{opts: opts, log: log, limit: opts.Lines}
	fo := views.FollowOptions{Interval: opts.Interval, OnReset: func(reason string) {
		log.Warn("tail: reading the transcript again", "reason", reason)
		p.skipTo, p.line = p.lastSeq, 0
	}}
	fw := views.NewFollower(ref.Path, fo)
	defer fw.Close()
	if _, err := fw.Poll(p.handle); err != nil {
		return err
	}
	if !fw.Opened() {
		log.Info("tail: waiting for the transcript to appear", "path", ref.Path)
	}
	if err := p.flushHeld(); err != nil {
		return err
	}
	if !opts.Follow || p.done {
		if n := fw.Pending(); n > 0 && !p.done {
			log.Warn("tail: the last line is incomplete (no LF yet) and is not shown", "bytes", n)
		}
		return nil
	}
	if p.session != "" {
		fmt.Fprintf(opts.IO.ErrOut, "twasm: %s is an archived session (%s): it grows when `twasm sync` (or sync --watch) finds more of it; following until then (Ctrl-C to stop)\n", p.runID, p.session)
	}
	return fw.Run(ctx, p.handle)
}
