package runctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// ValidStepPath checks a step path as given from outside (`twasm record
// --path`, `twasm run begin --path`; see vocab.StepPath). The error wraps
// lifecycle.ErrInvalidName and says what is wrong.
func ValidStepPath(path string) error {
	if why := vocab.StepPath(path); why != "" {
		return fmt.Errorf("%w: %s", lifecycle.ErrInvalidName, why)
	}
	return nil
}

// BeginChild starts a run linked to an existing, unfinished parent run:
// the parent gets step.call_workflow.started at path (and iteration) with
// the new run's id as child_run_id, and every line of the child carries
// parent_run_id. [End] on the child writes the parent's
// step.call_workflow.completed. A negative iteration is the next free
// one at path: one more than the highest open there (0 when none), for a
// caller that does not know how many children the parent has.
func BeginChild(ctx context.Context, store recorder.Store, parentID, path string, iteration int, opts lifecycle.RunOptions) (*lifecycle.Run, error) {
	return BeginChildAt(ctx, store, Link{ParentID: parentID, Path: path, Iteration: iteration}, opts)
}

// Link is where [BeginChildAt] links a child run in its parent.
type Link struct {
	// ParentID is the parent run; Path and Iteration the link step's.
	ParentID  string
	Path      string
	Iteration int
	// Title names the link step for people (empty: the path's last
	// segment).
	Title string
	// Supersedes, when set, is an earlier child run of the parent that
	// the new run holds again (lifecycle.SupersedesField): readers that
	// count or search across runs leave that one out.
	Supersedes string
}

// BeginChildAt is [BeginChild] with the link's title and the child run
// it supersedes.
func BeginChildAt(ctx context.Context, store recorder.Store, l Link, opts lifecycle.RunOptions) (*lifecycle.Run, error) {
	parentID, path, iteration := l.ParentID, l.Path, l.Iteration
	if l.Supersedes != "" {
		if err := runid.Valid(l.Supersedes); err != nil {
			return nil, fmt.Errorf("lifecycle: begin child %q superseding %q: %w", opts.Name, l.Supersedes, err)
		}
	}
	if err := ValidStepPath(path); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		return nil, fmt.Errorf("%w: empty run name", lifecycle.ErrInvalidName)
	}
	if opts.RunID == "" {
		opts.RunID = runid.New()
	} else if err := runid.Valid(opts.RunID); err != nil {
		return nil, fmt.Errorf("lifecycle: begin child %q: %w", opts.Name, err)
	}
	parent, err := lifecycle.Attach(ctx, store, parentID, opts)
	if err != nil {
		return nil, err
	}
	if iteration < 0 {
		iteration = 0
		for _, b := range parent.Recorder().State().Open {
			if b.Path == path && b.Iteration >= iteration {
				iteration = b.Iteration + 1
			}
		}
	}
	name := path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		name = path[i+1:]
	}
	if l.Title != "" {
		name = l.Title
	}
	link := &transcript.Event{
		Type: transcript.StepCallWorkflowStarted, RunID: parentID, ParentRunID: parent.Recorder().State().ParentRunID,
		ChildRunID: opts.RunID, Path: path, Iteration: iteration,
		Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindCallWorkflow},
	}
	if l.Supersedes != "" {
		b, _ := json.Marshal(l.Supersedes)
		link.Step().Extra = map[string]json.RawMessage{lifecycle.SupersedesField: b}
	}
	if err := parent.Recorder().Record(context.WithoutCancel(ctx), link); err != nil {
		return nil, errors.Join(fmt.Errorf("lifecycle: record %s: %w", link.Type, err), parent.Detach())
	}
	if err := parent.Detach(); err != nil {
		return nil, err
	}
	opts.ParentRunID = parentID
	return lifecycle.Start(ctx, store, opts)
}

// EndOptions configures [End].
type EndOptions struct {
	lifecycle.RunOptions
	// CancelOpen closes the run's open steps and sub-runs first, as
	// cancelled (each sub-run is ended in turn, with its own open steps
	// and sub-runs), instead of refusing to end the run with a
	// *runstate.OpenError.
	CancelOpen bool
	// SupersededBy, when set, names the run that holds again what this
	// one holds: its run.completed says so (lifecycle.SupersededByField),
	// and the index leaves the run, and its sub-runs, out of searches.
	SupersededBy string
}

// End writes run.completed for a run begun in another process (status
// from runErr: nil ok, a context error cancelled, else error) and, when
// it is a child, the parent's step.call_workflow.completed at the path of
// the link BeginChild wrote. The decision is made under the transcript's
// lock, against everything in the file: a run already finished is
// refused (recorder.ErrRunFinished) so run.completed is written once
// however many processes end the run at the same time, and a run with
// open steps or sub-runs is refused with a *runstate.OpenError naming
// them unless opts.CancelOpen closes them (cancelled) first, in the same
// critical section as run.completed. Open sub-runs are ended before, each
// in its own file and lock, never while holding the parent's.
func End(ctx context.Context, store recorder.Store, runID string, runErr error, opts EndOptions) error {
	r, err := lifecycle.Attach(ctx, store, runID, opts.RunOptions)
	if err != nil {
		return err
	}
	var errs []error
	if opts.CancelOpen {
		// A sub-run that had ended before (its end was written and a
		// kill came before the link's completion) is linked back as it
		// ended, not as cancelled.
		ended := map[string]*transcript.StepPayload{}
		for _, b := range r.Recorder().State().Open {
			if b.Type != transcript.StepCallWorkflowStarted || runid.Valid(b.ChildRunID) != nil {
				continue
			}
			copts := opts
			copts.SupersededBy = ""
			cerr := End(ctx, store, b.ChildRunID, fmt.Errorf("%w: the parent run %s was ended", context.Canceled, runID), copts)
			if errors.Is(cerr, recorder.ErrRunFinished) {
				if p := endedAs(store, b.ChildRunID); p != nil {
					ended[b.ChildRunID] = p
				}
			}
			if cerr != nil && !errors.Is(cerr, recorder.ErrRunFinished) && !errors.Is(cerr, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("lifecycle: end sub-run %s: %w", b.ChildRunID, cerr))
			}
		}
		if len(ended) > 0 {
			lerr := r.Recorder().RecordFunc(context.WithoutCancel(ctx), func(st runstate.State) ([]*transcript.Event, error) {
				if st.Finished {
					return nil, nil
				}
				var evs []*transcript.Event
				for _, b := range st.Open {
					if p := ended[b.ChildRunID]; p != nil && b.Type == transcript.StepCallWorkflowStarted {
						ev := b.Completion(p.Status, p.Error)
						ev.ParentRunID = st.ParentRunID
						evs = append(evs, ev)
					}
				}
				return evs, nil
			})
			if lerr != nil {
				errs = append(errs, fmt.Errorf("lifecycle: link back the ended sub-runs of %s: %w", runID, lerr))
			}
		}
	}
	status, text := runstate.Outcome(runErr, ctx.Err())
	var parentID string
	rerr := r.Recorder().RecordFunc(context.Background(), func(st runstate.State) ([]*transcript.Event, error) {
		if st.Finished {
			return nil, fmt.Errorf("lifecycle: end run %s: %w (run.completed at seq %d)", runID, recorder.ErrRunFinished, st.LastSeq)
		}
		parentID = st.ParentRunID
		evs, err := runstate.End(st, runID, st.ParentRunID, st.Name, status, text, opts.CancelOpen)
		if err == nil && opts.SupersededBy != "" {
			b, _ := json.Marshal(opts.SupersededBy)
			evs[len(evs)-1].Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{lifecycle.SupersededByField: b}
		}
		return evs, err
	})
	var endErr error
	if rerr != nil {
		if errors.As(rerr, new(*runstate.OpenError)) || errors.Is(rerr, recorder.ErrRunFinished) {
			endErr = rerr
		} else {
			endErr = fmt.Errorf("lifecycle: write run.completed of %s: %w", runID, rerr)
		}
	}
	endErr = errors.Join(endErr, r.Detach())
	if endErr != nil {
		if !errors.As(endErr, new(*runstate.OpenError)) && !errors.Is(endErr, recorder.ErrRunFinished) {
			log := opts.Logger
			if log == nil {
				log = slog.Default()
			}
			log.Warn("lifecycle: end run", "run_id", runID, "err", endErr)
		}
		return errors.Join(append(errs, endErr)...)
	}
	if parentID == "" {
		return errors.Join(errs...)
	}
	p, err := lifecycle.Attach(ctx, store, parentID, opts.RunOptions)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("lifecycle: end %s: parent: %w", runID, err))...)
	}
	lerr := p.Recorder().RecordFunc(context.WithoutCancel(ctx), func(st runstate.State) ([]*transcript.Event, error) {
		if st.Finished {
			return nil, fmt.Errorf("lifecycle: end %s: parent %s: %w", runID, parentID, recorder.ErrRunFinished)
		}
		for _, b := range st.Open {
			if b.Type == transcript.StepCallWorkflowStarted && b.ChildRunID == runID {
				ev := b.Completion(status, text)
				ev.ParentRunID = st.ParentRunID
				return []*transcript.Event{ev}, nil
			}
		}
		return nil, nil // already linked back
	})
	return errors.Join(append(errs, lerr, p.Detach())...)
}

// endedAs is the run.completed payload of a run that has ended (its
// transcript's last line), nil when it cannot be read.
func endedAs(store recorder.Store, runID string) *transcript.StepPayload {
	path, err := store.TranscriptPath(runID)
	if err != nil {
		return nil
	}
	f, err := regfile.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	n := min(st.Size(), 1<<20)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, st.Size()-n); err != nil {
		return nil
	}
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	ev, err := transcript.DecodeEvent(b)
	if err != nil || ev.Type != transcript.RunCompleted || ev.Step() == nil {
		return nil
	}
	return ev.Step()
}
