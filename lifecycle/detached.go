package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Runs driven from a shell script live across processes: `twasm run begin`
// starts one and exits, each `twasm record --run-id` adds a step, and
// `twasm run end` closes it. These functions are that life cycle: the
// bracket is still written exactly once, by Begin/BeginChild and
// EndDetached, and the recorder keeps one seq series across the processes.

// ErrRunFinished is returned when attaching to a run whose transcript
// already ends with run.completed.
var ErrRunFinished = errors.New("run already finished")

// ErrNotARun is returned when a transcript does not start with run.started.
var ErrNotARun = errors.New("not a run transcript")

// runHead is what Attach needs from an existing transcript.
type runHead struct {
	name, parentID string
	finished       bool
	links          []*transcript.Event // step.call_workflow.* events
}

func readHead(store recorder.Store, runID string) (*runHead, error) {
	path, err := store.TranscriptPath(runID)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: open run %s: %w", runID, err)
	}
	defer f.Close()
	r := transcript.NewReader(f)
	h := &runHead{}
	first := true
	for r.Next() {
		if r.LineErr() != nil {
			continue
		}
		ev := r.Event()
		if first {
			first = false
			if ev.Type != transcript.RunStarted {
				return nil, fmt.Errorf("lifecycle: %s: %w (first event is %s)", runID, ErrNotARun, ev.Type)
			}
			h.parentID = ev.ParentRunID
			if p := ev.Step(); p != nil {
				h.name = p.Name
			}
		}
		h.finished = ev.Type == transcript.RunCompleted
		if ev.Type == transcript.StepCallWorkflowStarted || ev.Type == transcript.StepCallWorkflowCompleted {
			h.links = append(h.links, ev)
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("lifecycle: read run %s: %w", runID, err)
	}
	if first {
		return nil, fmt.Errorf("lifecycle: %s: %w (empty transcript)", runID, ErrNotARun)
	}
	return h, nil
}

// Attach opens an existing, unfinished run to record more of it, from this
// or another process. It writes no run.started. End the attachment with
// [Run.Detach] (the run stays open) or [Run.Finish] (writes run.completed).
// opts.Name and opts.RunID are ignored: both come from the transcript.
func Attach(ctx context.Context, store recorder.Store, runID string, opts RunOptions) (*Run, error) {
	if err := recorder.ValidRunID(runID); err != nil {
		return nil, fmt.Errorf("lifecycle: attach: %w", err)
	}
	h, err := readHead(store, runID)
	if err != nil {
		return nil, err
	}
	if h.finished {
		return nil, fmt.Errorf("lifecycle: attach %s: %w", runID, ErrRunFinished)
	}
	rec, err := store.Open(context.WithoutCancel(ctx), runID, opts.Recorder...)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: attach %s: %w", runID, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	opts.Name, opts.RunID = h.name, runID
	r := &Run{store: store, opts: opts, rec: rec, id: runID, parentID: h.parentID, log: log.With("run_id", runID), ctxErr: ctx.Err}
	r.root = &Step{run: r}
	if opts.Observe != nil {
		opts.Observe(rec)
	}
	r.opts.Observe = nil
	return r, nil
}

// Detach closes the run's file without writing run.completed, so that
// another process can add to it or end it. Sub-runs still open are ended
// with [ErrParentEnded]. Detach, Finish and End are mutually exclusive:
// only the first has an effect.
func (r *Run) Detach() error {
	r.once.Do(func() {
		for _, c := range r.takeSubRuns() {
			if cerr := c.finish(ErrParentEnded, nil); cerr != nil {
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
func (r *Run) StepAt(ctx context.Context, path string, iteration int, kind transcript.StepKind, fn StepFunc, opts ...StepOption) error {
	if path == "" || !transcript.ValidPath(path) {
		return fmt.Errorf("%w: step path %q", ErrInvalidName, path)
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
	if path == "" || !transcript.ValidPath(path) {
		return nil, fmt.Errorf("%w: step path %q", ErrInvalidName, path)
	}
	if opts.Name == "" {
		return nil, fmt.Errorf("%w: empty run name", ErrInvalidName)
	}
	if opts.RunID == "" {
		opts.RunID = recorder.NewRunID()
	} else if err := recorder.ValidRunID(opts.RunID); err != nil {
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

// EndDetached writes run.completed for a run begun in another process
// (status from runErr: nil ok, a context error cancelled, else error) and,
// when it is a child, the parent's step.call_workflow.completed at the
// path of the link BeginChild wrote.
func EndDetached(ctx context.Context, store recorder.Store, runID string, runErr error, opts RunOptions) error {
	r, err := Attach(ctx, store, runID, opts)
	if err != nil {
		return err
	}
	if err := r.Finish(ctx, runErr); err != nil {
		return err
	}
	if r.parentID == "" {
		return nil
	}
	h, err := readHead(store, r.parentID)
	if err != nil {
		return fmt.Errorf("lifecycle: end %s: parent: %w", runID, err)
	}
	var started *transcript.Event
	for _, ev := range h.links {
		if ev.ChildRunID != runID {
			continue
		}
		if ev.Type == transcript.StepCallWorkflowCompleted {
			return nil // already linked back
		}
		started = ev
	}
	if started == nil {
		return fmt.Errorf("lifecycle: end %s: parent %s has no step.call_workflow.started for it", runID, r.parentID)
	}
	if h.finished {
		return fmt.Errorf("lifecycle: end %s: parent %s: %w", runID, r.parentID, ErrRunFinished)
	}
	p, err := Attach(ctx, store, r.parentID, opts)
	if err != nil {
		return err
	}
	status, text := outcome(runErr, ctx.Err())
	name := ""
	if sp := started.Step(); sp != nil {
		name = sp.Name
	}
	link := &transcript.Event{
		Type: transcript.StepCallWorkflowCompleted, ChildRunID: runID, Path: started.Path, Iteration: started.Iteration,
		Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindCallWorkflow, Status: status, Error: text},
	}
	return errors.Join(p.emit(context.WithoutCancel(ctx), link), p.Detach())
}
