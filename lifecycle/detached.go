package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Runs driven from a shell script live across processes: `twasm run begin`
// starts one and exits, each `twasm record --run-id` adds a step, and
// `twasm run end` closes it. These functions are that life cycle: the
// bracket is still written exactly once, by Begin/BeginChild and
// EndDetached, and the recorder keeps one seq series across the processes.

// ErrNotARun is returned when a transcript does not start with run.started.
var ErrNotARun = errors.New("not a run transcript")

// OpenError refuses to end a run whose steps or sub-runs are still open
// (their step.completed or step.call_workflow.completed is not in the
// file): another process may still be recording them, or was killed
// before it could close them. It names each of them.
type OpenError struct {
	RunID string
	Open  []runstate.Bracket
}

func (e *OpenError) Error() string {
	parts := make([]string, 0, len(e.Open))
	for _, b := range e.Open {
		it := ""
		if b.Iteration != 0 {
			it = fmt.Sprintf(" iteration %d", b.Iteration)
		}
		if b.Type == transcript.StepCallWorkflowStarted {
			parts = append(parts, fmt.Sprintf("sub-run %s at %q%s (seq %d)", b.ChildRunID, b.Path, it, b.Seq))
		} else {
			parts = append(parts, fmt.Sprintf("step %q%s (seq %d)", b.Path, it, b.Seq))
		}
	}
	return fmt.Sprintf("run %s still has %d open: %s", e.RunID, len(e.Open), strings.Join(parts, ", "))
}

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
	if err := ValidStepPath(path); err != nil {
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

// BeginChild starts a run linked to an existing, unfinished parent run:
// the parent gets step.call_workflow.started at path (and iteration) with
// the new run's id as child_run_id, and every line of the child carries
// parent_run_id. [EndDetached] on the child writes the parent's
// step.call_workflow.completed.
func BeginChild(ctx context.Context, store recorder.Store, parentID, path string, iteration int, opts RunOptions) (*Run, error) {
	if err := ValidStepPath(path); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		return nil, fmt.Errorf("%w: empty run name", ErrInvalidName)
	}
	if opts.RunID == "" {
		opts.RunID = runid.New()
	} else if err := runid.Valid(opts.RunID); err != nil {
		return nil, fmt.Errorf("lifecycle: begin child %q: %w", opts.Name, err)
	}
	parent, err := Attach(ctx, store, parentID, opts)
	if err != nil {
		return nil, err
	}
	name := path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		name = path[i+1:]
	}
	link := &transcript.Event{
		Type: transcript.StepCallWorkflowStarted, ChildRunID: opts.RunID, Path: path, Iteration: iteration,
		Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindCallWorkflow},
	}
	if err := parent.emit(context.WithoutCancel(ctx), link); err != nil {
		return nil, errors.Join(err, parent.Detach())
	}
	if err := parent.Detach(); err != nil {
		return nil, err
	}
	return start(ctx, store, opts, parentID)
}

// EndOptions configures [EndDetached].
type EndOptions struct {
	RunOptions
	// CancelOpen closes the run's open steps and sub-runs first, as
	// cancelled (each sub-run is ended in turn, with its own open steps
	// and sub-runs), instead of refusing to end the run with an
	// [*OpenError].
	CancelOpen bool
}

// EndDetached writes run.completed for a run begun in another process
// (status from runErr: nil ok, a context error cancelled, else error) and,
// when it is a child, the parent's step.call_workflow.completed at the
// path of the link BeginChild wrote. The decision is made under the
// transcript's lock, against everything in the file: a run already
// finished is refused ([recorder.ErrRunFinished]) so run.completed is written once
// however many processes end the run at the same time, and a run with
// open steps or sub-runs is refused with an [*OpenError] naming them
// unless opts.CancelOpen closes them (cancelled) first, in the same
// critical section as run.completed.
func EndDetached(ctx context.Context, store recorder.Store, runID string, runErr error, opts EndOptions) error {
	r, err := Attach(ctx, store, runID, opts.RunOptions)
	if err != nil {
		return err
	}
	var errs []error
	if opts.CancelOpen {
		// Sub-runs are separate files with their own locks: end them
		// before taking this run's lock, never while holding it.
		for _, b := range r.rec.State().Open {
			if b.Type != transcript.StepCallWorkflowStarted || runid.Valid(b.ChildRunID) != nil {
				continue
			}
			cerr := EndDetached(ctx, store, b.ChildRunID, fmt.Errorf("%w: the parent run %s was ended", context.Canceled, runID), opts)
			if cerr != nil && !errors.Is(cerr, recorder.ErrRunFinished) && !errors.Is(cerr, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("lifecycle: end sub-run %s: %w", b.ChildRunID, cerr))
			}
		}
	}
	if err := r.finishWith(runErr, ctx.Err(), opts.CancelOpen); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if r.parentID == "" {
		return errors.Join(errs...)
	}
	p, err := Attach(ctx, store, r.parentID, opts.RunOptions)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("lifecycle: end %s: parent: %w", runID, err))...)
	}
	status, text := outcome(runErr, ctx.Err())
	lerr := p.rec.RecordFunc(context.WithoutCancel(ctx), func(st runstate.State) ([]*transcript.Event, error) {
		if st.Finished {
			return nil, fmt.Errorf("lifecycle: end %s: parent %s: %w", runID, r.parentID, recorder.ErrRunFinished)
		}
		for _, b := range st.Open {
			if b.Type == transcript.StepCallWorkflowStarted && b.ChildRunID == runID {
				ev := b.Completion(status, text)
				ev.ParentRunID = p.parentID
				return []*transcript.Event{ev}, nil
			}
		}
		return nil, nil // already linked back
	})
	return errors.Join(append(errs, lerr, p.Detach())...)
}
