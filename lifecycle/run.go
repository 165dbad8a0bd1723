package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// producerName is the producer name written into run.started.
const producerName = "twasm"

// modulePath is how this module shows up in build info, to find the
// version of twasm compiled into the embedding program.
const modulePath = "github.com/twasm/twasm"

// RunOptions configures a run. Only Name is required; the zero value of
// every other field is the default.
type RunOptions struct {
	// Name is the workflow name, written as run.started's name.
	Name string
	// RunID is the run id (a UUID v4, validated). Empty means a new one.
	RunID string
	// ParentRunID makes the run a child of a run in another process
	// (`twasm run begin --parent`): every line carries it as
	// parent_run_id. The parent must already hold the
	// step.call_workflow.started that names this run as its child, which
	// twasm's command line writes first. A child run started in this
	// process ([Step.CallWorkflow], [Step.SubRun]) is linked without it.
	ParentRunID string
	// Producer overrides the producer written into run.started. The
	// default is {"twasm", <version of this module in the build>}.
	Producer transcript.Producer
	// Recorder configures the recorder of the run's file; child runs
	// (call_workflow, sub-runs) inherit it.
	Recorder recorder.Options
	// Logger receives diagnostics that cannot be returned (a failed write
	// of run.completed from End). Nil means slog.Default().
	Logger *slog.Logger
	// Observe, when set, is called with the run's recorder right after
	// its file is opened and before run.started is written, so that a
	// live view can subscribe without missing the first event. Child
	// runs do not inherit it.
	Observe func(rec *recorder.Recorder)
}

// Run is one workflow run: one transcript file, bracketed by run.started
// and run.completed. Create it with [Start] or [Do].
//
// A Run is safe for concurrent use. Steps are started from its root
// scope, [Run.Root]: the [Step] that [Do] and [Step.CallWorkflow] hand to
// their function.
type Run struct {
	store    recorder.Store
	opts     RunOptions
	rec      *recorder.Recorder
	id       string
	parentID string
	log      *slog.Logger
	// ctxErr is Err of the context the run was started with, so that End,
	// which takes no context, can still tell a cancellation from a failure.
	ctxErr func() error
	root   *Step

	// mu orders emits against the end: emits hold it shared, finish takes
	// it exclusively to set ended, so that no event lands after
	// run.completed.
	mu    sync.RWMutex
	ended bool

	once      sync.Once
	finishErr error

	subMu     sync.Mutex
	subRuns   map[*Run]struct{}
	subClosed bool // set once the run starts ending: no new sub-runs
	// onFinish, set on sub-runs, writes the parent side of the link.
	onFinish func(c *Run, err, ctxErr error)
}

// Start opens the run's transcript in store and writes run.started. The
// caller must end the run with [Run.End] or [Run.Finish]; [Do] does it for
// you. Start records even when ctx is already cancelled, so that a
// cancelled run still leaves a bracketed file; ctx is otherwise only used
// to tell cancellation from failure when the run ends.
func Start(ctx context.Context, store recorder.Store, opts RunOptions) (*Run, error) {
	return start(ctx, store, opts, opts.ParentRunID)
}

// Do runs fn as a whole run: run.started is written before fn is called and
// run.completed after it returns, fails or panics (the panic is recorded
// and then continues). fn receives the run's root scope ([Run.Root]):
// the steps it starts are top-level steps. The returned error is fn's, or the error of
// writing the bracket when fn succeeded.
func Do(ctx context.Context, store recorder.Store, opts RunOptions, fn StepFunc) error {
	r, err := Start(ctx, store, opts)
	if err != nil {
		return err
	}
	return runFn(ctx, r, fn)
}

func start(ctx context.Context, store recorder.Store, opts RunOptions, parentID string) (*Run, error) {
	if opts.Name == "" {
		return nil, fmt.Errorf("%w: empty run name", ErrInvalidName)
	}
	id := opts.RunID
	if id == "" {
		id = runid.New()
	} else if err := runid.Valid(id); err != nil {
		return nil, fmt.Errorf("lifecycle: start run %q: %w", opts.Name, err)
	}
	if opts.Producer.Name == "" {
		opts.Producer = transcript.Producer{Name: producerName, Version: moduleVersion()}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	// The bracket must be written even for a run that starts cancelled.
	wctx := context.WithoutCancel(ctx)
	rec, err := store.Open(wctx, id, opts.Recorder)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: open run %s (%s): %w", id, opts.Name, err)
	}
	r := &Run{
		store:    store,
		opts:     opts,
		rec:      rec,
		id:       id,
		parentID: parentID,
		log:      log.With("run_id", id),
		ctxErr:   ctx.Err,
	}
	r.root = &Step{run: r}
	if opts.Observe != nil {
		opts.Observe(rec)
	}
	producer := opts.Producer
	ev := &transcript.Event{
		Type: transcript.RunStarted,
		Payload: &transcript.StepPayload{
			Name:     opts.Name,
			Kind:     transcript.KindWorkflow,
			Schema:   transcript.Schema,
			Producer: &producer,
		},
	}
	if err := r.emit(wctx, ev); err != nil {
		return nil, errors.Join(fmt.Errorf("lifecycle: start run %s: %w", id, err), closeErr(rec))
	}
	return r, nil
}

func closeErr(rec *recorder.Recorder) error {
	if err := rec.Close(); err != nil {
		return fmt.Errorf("lifecycle: close recorder: %w", err)
	}
	return nil
}

// RunID returns the run id (the file name without .jsonl).
func (r *Run) RunID() string { return r.id }

// Recorder returns the recorder writing the run's file: its path, its
// state as last seen (after a failure, what the transcript holds), and a
// live subscription to the events this process writes
// into the file (not those of its child runs), closed when the run ends
// or detaches.
func (r *Run) Recorder() *recorder.Recorder { return r.rec }

// End writes run.completed and closes the file; it is meant to be
// deferred right after [Start]:
//
//	run, err := lifecycle.Start(ctx, store, opts)
//	if err != nil { return err }
//	defer run.End(&err)
//
// The status comes from *errp (ok, error, or cancelled when the error is a
// context error or the start context is done). When called while the
// function is panicking, End records the panic as the run's error and
// panics again with the same value. If *errp is nil and ending fails, the
// failure is stored in *errp. errp may be nil. End is idempotent, and a
// no-op after [Run.Finish].
func (r *Run) End(errp *error) {
	if p := recover(); p != nil {
		_ = r.finish(panicErr(p), nil)
		panic(p)
	}
	var err error
	if errp != nil {
		err = *errp
	}
	if ferr := r.finish(err, r.ctxErr()); ferr != nil && errp != nil && *errp == nil {
		*errp = ferr
	}
}

// Finish writes run.completed with the status of err and closes the file.
// A non-nil err while ctx is done records "cancelled". Only the first call
// (of Finish or End) writes; later ones return the first result. ctx does
// not stop the write.
func (r *Run) Finish(ctx context.Context, err error) error {
	return r.finish(err, ctx.Err())
}

// finish ends the run: forgotten sub-runs first, then, in one critical
// section of the recorder, the completions of the steps and sub-run links
// still open in the file (cancelled) and run.completed. A run already
// finished (by another process) is refused there, so run.completed is
// written once.
func (r *Run) finish(err, ctxErr error) error {
	_, _, ferr := r.end(err, ctxErr, nil)
	return ferr
}

// end is finish, with, when not nil, the completion of the step the run
// ends with ([StepOptions].EndRun) written first in the same batch.
// ended says whether this call ended the run (and wrote with, or failed
// to: withErr); a run ended before writes nothing more. The error is the
// end's, which Finish returns from then on.
func (r *Run) end(err, ctxErr error, with *transcript.Event) (ended bool, withErr, _ error) {
	r.once.Do(func() {
		ended = true
		// Forgotten sub-runs are ended first, so that every file the run
		// created is complete when the run is.
		for _, c := range r.takeSubRuns() {
			if cerr := c.finish(errParentEnded, nil); cerr != nil {
				r.log.Warn("lifecycle: end forgotten sub-run", "child_run_id", c.id, "err", cerr)
			}
		}
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
		status, text := runstate.Outcome(err, ctxErr)
		var errs []error
		decide := func(with *transcript.Event) func(st runstate.State) ([]*transcript.Event, error) {
			return func(st runstate.State) ([]*transcript.Event, error) {
				if st.Finished {
					return nil, fmt.Errorf("lifecycle: end run %s: %w (run.completed at seq %d)", r.id, recorder.ErrRunFinished, st.LastSeq)
				}
				var evs []*transcript.Event
				if with != nil {
					with.RunID, with.ParentRunID = r.id, r.parentID
					h := runstate.HeadOf(with)
					st.Apply(&h) // its bracket is closed, not cancelled
					evs = append(evs, with)
				}
				end, err := runstate.End(st, r.id, r.parentID, r.opts.Name, status, text, true)
				return append(evs, end...), err
			}
		}
		rerr := r.rec.RecordFunc(context.Background(), decide(with))
		if rerr != nil && with != nil && !errors.Is(rerr, recorder.ErrRunFinished) && !errors.Is(rerr, recorder.ErrNotDurable) {
			// The step's completion could not be written (an invalid
			// result, a full disk): the run is still ended without it, as
			// Finish after a failed completion would (the step is closed
			// as cancelled). Not after ErrNotDurable: both lines are
			// written, only their fsync failed, which is the end's error.
			withErr = fmt.Errorf("lifecycle: complete step %s: %w", with.Path, rerr)
			rerr = r.rec.RecordFunc(context.Background(), decide(nil))
		}
		if rerr != nil {
			if errors.Is(rerr, recorder.ErrRunFinished) {
				errs = append(errs, rerr)
			} else {
				errs = append(errs, fmt.Errorf("lifecycle: write run.completed of %s: %w", r.id, rerr))
			}
		}
		if cerr := r.rec.Close(); cerr != nil {
			errs = append(errs, fmt.Errorf("lifecycle: close run %s: %w", r.id, cerr))
		}
		r.finishErr = errors.Join(errs...)
		if r.finishErr != nil && !errors.Is(r.finishErr, recorder.ErrRunFinished) {
			// Refusals are for the caller to report; failures may have
			// no caller to see them (a deferred End).
			r.log.Warn("lifecycle: end run", "err", r.finishErr)
		}
		if r.onFinish != nil {
			r.onFinish(r, err, ctxErr)
		}
	})
	return ended, withErr, r.finishErr
}

// emit records ev in the run's file, stamping the run's ids. It refuses
// once the run has ended.
func (r *Run) emit(ctx context.Context, ev *transcript.Event) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ended {
		return fmt.Errorf("%w: run %s: cannot record %s", ErrEnded, r.id, ev.Type)
	}
	ev.RunID = r.id
	ev.ParentRunID = r.parentID
	if err := r.rec.Record(ctx, ev); err != nil {
		return fmt.Errorf("lifecycle: record %s: %w", ev.Type, err)
	}
	return nil
}

// emitBatch records evs in one critical section of the recorder, stamping
// the run's ids. It refuses once the run has ended.
func (r *Run) emitBatch(ctx context.Context, evs []*transcript.Event) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ended {
		return fmt.Errorf("%w: run %s: cannot record %d events", ErrEnded, r.id, len(evs))
	}
	for _, ev := range evs {
		ev.RunID, ev.ParentRunID = r.id, r.parentID
	}
	if err := r.rec.RecordBatch(ctx, evs); err != nil {
		return fmt.Errorf("lifecycle: record %d events: %w", len(evs), err)
	}
	return nil
}

// child starts a run linked to r: every line of it carries r's id as
// parent_run_id.
func (r *Run) child(ctx context.Context, name, runID string) (*Run, error) {
	opts := r.opts
	opts.Name = name
	opts.RunID = runID
	opts.Observe = nil
	return start(ctx, r.store, opts, r.id)
}

// addSubRun registers c as an open sub-run of r whose link node is node:
// when c ends, node's completion is written into r, and r's own end waits
// for (or performs) c's.
func (r *Run) addSubRun(c *Run, node *Step) error {
	c.onFinish = func(c *Run, err, ctxErr error) {
		if cerr := node.complete(context.Background(), transcript.StepCallWorkflowCompleted, err, ctxErr); cerr != nil {
			r.log.Warn("lifecycle: write the end of a sub-run", "child_run_id", c.id, "err", cerr)
		}
		r.subMu.Lock()
		delete(r.subRuns, c)
		r.subMu.Unlock()
	}
	r.subMu.Lock()
	defer r.subMu.Unlock()
	if r.subClosed {
		return fmt.Errorf("%w: run %s: cannot start a sub-run", ErrEnded, r.id)
	}
	if r.subRuns == nil {
		r.subRuns = make(map[*Run]struct{})
	}
	r.subRuns[c] = struct{}{}
	return nil
}

func (r *Run) takeSubRuns() []*Run {
	r.subMu.Lock()
	defer r.subMu.Unlock()
	out := make([]*Run, 0, len(r.subRuns))
	for c := range r.subRuns {
		out = append(out, c)
	}
	r.subRuns = nil
	r.subClosed = true
	return out
}

// Root returns the run's root scope: a [Step] with path "" and iteration
// 0 that is never recorded itself. The steps started from it are the
// run's top-level steps, and the events recorded through it belong to no
// step (the shape of a sub-agent's child run, whose messages and tool
// calls belong to no workflow step). Its [Step.SetResult] fails: a run
// has no result. [Do] and [Step.CallWorkflow] pass it to their function.
func (r *Run) Root() *Step { return r.root }

// panicErr turns a recovered value into the error recorded for it.
func panicErr(p any) error {
	if pe, ok := p.(*PanicError); ok {
		return pe
	}
	return &PanicError{Value: p}
}

// moduleVersion is the version of this module inside the running binary:
// the main module's when twasm itself is being run, else the dependency's.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if bi.Main.Path == modulePath && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath && d.Version != "" {
			return d.Version
		}
	}
	return "(devel)"
}
