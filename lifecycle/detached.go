package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Runs driven from a shell script live across processes: `twasm run begin`
// starts one ([Start], [Run.Detach]) and exits, each `twasm record
// --run-id` adds a step ([Attach], [Run.StepAt], [Run.Detach]), and
// `twasm run end` closes it (internal/runctl, which also begins child
// runs). The bracket is still written exactly once, and the recorder
// keeps one seq series across the processes.

// ErrNotARun is returned when a transcript does not start with run.started.
var ErrNotARun = errors.New("not a run transcript")

// Attach opens an existing, unfinished run to record more of it, from this
// or another process. It writes no run.started. End the attachment with
// [Run.Detach] (the run stays open) or [Run.Finish] (writes run.completed).
// opts.Name and opts.RunID are ignored: both come from the transcript.
// Attaching reads the run's checkpoint and what follows it, not the whole
// file (see package recorder), and creates nothing: a run that does not
// exist is an error matching fs.ErrNotExist.
func Attach(ctx context.Context, store recorder.Store, runID string, opts RunOptions) (*Run, error) {
	if err := runid.Valid(runID); err != nil {
		return nil, fmt.Errorf("lifecycle: attach: %w", err)
	}
	ropts := opts.Recorder
	ropts.MustExist = true
	rec, err := store.Open(context.WithoutCancel(ctx), runID, ropts)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: attach %s: %w", runID, err)
	}
	st := rec.State()
	var bad error
	switch {
	case st.First == "":
		bad = fmt.Errorf("lifecycle: %s: %w (empty transcript)", runID, ErrNotARun)
	case st.First != transcript.RunStarted:
		bad = fmt.Errorf("lifecycle: %s: %w (first event is %s)", runID, ErrNotARun, st.First)
	case st.Finished:
		bad = fmt.Errorf("lifecycle: attach %s: %w (run.completed at seq %d)", runID, recorder.ErrRunFinished, st.LastSeq)
	}
	if bad != nil {
		if cerr := closeErr(rec); cerr != nil {
			bad = errors.Join(bad, cerr)
		}
		return nil, bad
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	opts.Name, opts.RunID = st.Name, runID
	r := &Run{store: store, opts: opts, rec: rec, id: runID, parentID: st.ParentRunID, log: log.With("run_id", runID), ctxErr: ctx.Err}
	r.root = &Step{run: r}
	if opts.Observe != nil {
		opts.Observe(rec)
	}
	r.opts.Observe = nil
	return r, nil
}

// Detach closes the run's file without writing run.completed, so that
// another process can add to it or end it. Sub-runs still open are ended
// with [errParentEnded]. Detach, Finish and End are mutually exclusive:
// only the first has an effect.
func (r *Run) Detach() error {
	r.once.Do(func() {
		for _, c := range r.takeSubRuns() {
			if cerr := c.finish(errParentEnded, nil); cerr != nil {
				r.log.Warn("lifecycle: end sub-run on detach", "child_run_id", c.id, "err", cerr)
			}
		}
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
		if err := r.rec.Close(); err != nil {
			r.finishErr = fmt.Errorf("lifecycle: detach run %s: %w", r.id, err)
		}
	})
	return r.finishErr
}

// StepAt runs fn as a step at an explicit dot path and iteration, as a
// shell script gives them (`twasm record --path review.lint --iteration
// 2`). It behaves as [Step.Step] otherwise.
func (r *Run) StepAt(ctx context.Context, path string, iteration int, kind transcript.StepKind, fn StepFunc, opts ...StepOptions) error {
	if err := validStepPath(path); err != nil {
		return err
	}
	if iteration < 0 {
		return fmt.Errorf("%w: negative iteration %d", ErrInvalidName, iteration)
	}
	dir, name := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		dir, name = path[:i], path[i+1:]
	}
	// A loop-like parent keeps the given iteration on retries; the attempt
	// tells them apart.
	parent := &Step{run: r, path: dir, iteration: iteration, inLoop: true}
	return parent.runChild(ctx, name, kind, false, configure(opts), fn)
}
