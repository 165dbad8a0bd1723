package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func TestRunBracket(t *testing.T) {
	boom := errors.New("boom")
	killed := errors.New("killed")
	tests := []struct {
		name       string
		ctx        func() context.Context
		body       StepFunc
		wantErr    error
		wantPanic  bool
		wantStatus string
		wantText   string
	}{
		{
			name:       "ok",
			body:       func(ctx context.Context, r *Step) error { return r.Step(ctx, "a", transcript.KindOperation, nil) },
			wantStatus: transcript.StatusOK,
		},
		{
			name:       "error",
			body:       func(context.Context, *Step) error { return boom },
			wantErr:    boom,
			wantStatus: transcript.StatusError,
			wantText:   "boom",
		},
		{
			name: "step error",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "a", transcript.KindCommand, func(context.Context, *Step) error { return boom })
			},
			wantErr:    boom,
			wantStatus: transcript.StatusError,
			wantText:   "step a: boom",
		},
		{
			name:       "panic",
			body:       func(context.Context, *Step) error { panic("kaput") },
			wantPanic:  true,
			wantStatus: transcript.StatusError,
			wantText:   "panic: kaput",
		},
		{
			name: "panic in step",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "a", transcript.KindOperation, func(context.Context, *Step) error { panic("kaput") })
			},
			wantPanic:  true,
			wantStatus: transcript.StatusError,
			wantText:   "panic: kaput",
		},
		{
			name: "cancelled before start",
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "a", transcript.KindOperation, func(context.Context, *Step) error {
					t.Error("a step must not run under a done context")
					return nil
				})
			},
			wantErr:    context.Canceled,
			wantStatus: transcript.StatusCancelled,
			wantText:   "step a: context canceled",
		},
		{
			name: "plain error under a live context",
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				return ctx
			},
			body: func(ctx context.Context, r *Step) error {
				return killed
			},
			wantErr:    killed,
			wantStatus: transcript.StatusError,
			wantText:   "killed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newStore(t)
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			id := runid.New()
			var err error
			func() {
				defer func() {
					p := recover()
					eq(t, tc.wantPanic, p != nil, "panic: %v", p)
				}()
				err = Do(ctx, store, RunOptions{Name: "wf", RunID: id}, tc.body)
			}()
			if tc.wantErr != nil {
				errIs(t, err, tc.wantErr)
			} else if !tc.wantPanic {
				noErr(t, err)
			}
			evs := readRun(t, store, id)
			status, text := runStatus(evs)
			eq(t, tc.wantStatus, status)
			eq(t, tc.wantText, text)
			eq(t, "wf", evs[0].Step().Name)
			eq(t, transcript.KindWorkflow, evs[0].Step().Kind)
		})
	}
}

func TestCancelledDuringIsCancelled(t *testing.T) {
	store := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	id := runid.New()
	err := Do(ctx, store, RunOptions{Name: "wf", RunID: id}, func(ctx context.Context, r *Step) error {
		return r.Step(ctx, "wait", transcript.KindCommand, func(ctx context.Context, s *Step) error {
			cancel()
			<-ctx.Done()
			return errors.New("signal: killed")
		})
	})
	isErr(t, err)
	evs := readRun(t, store, id)
	status, _ := runStatus(evs)
	eq(t, transcript.StatusCancelled, status)
	eq(t, transcript.StatusCancelled, find(evs, sc, "wait")[0].Step().Status)
}

func TestGoexitStillCompletes(t *testing.T) {
	store := newStore(t)
	id := runid.New()
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = Do(context.Background(), store, RunOptions{Name: "wf", RunID: id}, func(ctx context.Context, r *Step) error {
			return r.Step(ctx, "exit", transcript.KindOperation, func(context.Context, *Step) error {
				runtime.Goexit()
				return nil
			})
		})
	})
	wg.Wait()
	evs := readRun(t, store, id)
	status, text := runStatus(evs)
	eq(t, transcript.StatusError, status)
	contains(t, text, "Goexit")
	eq(t, transcript.StatusError, find(evs, sc, "exit")[0].Step().Status)
}

func TestStartEnd(t *testing.T) {
	t.Run("defer End records the named error", func(t *testing.T) {
		store := newStore(t)
		var id string
		f := func() (err error) {
			r, err := Start(context.Background(), store, RunOptions{Name: "wf"})
			noErr(t, err)
			id = r.RunID()
			defer r.End(&err)
			return errors.New("bad")
		}
		eqErr(t, f(), "bad")
		status, text := runStatus(readRun(t, store, id))
		eq(t, transcript.StatusError, status)
		eq(t, "bad", text)
	})
	t.Run("defer End records a panic", func(t *testing.T) {
		store := newStore(t)
		var id string
		f := func() (err error) {
			r, err := Start(context.Background(), store, RunOptions{Name: "wf"})
			noErr(t, err)
			id = r.RunID()
			defer r.End(&err)
			panic(errors.New("oops"))
		}
		panics(t, func() { _ = f() })
		status, text := runStatus(readRun(t, store, id))
		eq(t, transcript.StatusError, status)
		eq(t, "panic: oops", text)
	})
	t.Run("idempotent", func(t *testing.T) {
		store := newStore(t)
		r, err := Start(context.Background(), store, RunOptions{Name: "wf", Producer: transcript.Producer{Name: "twasm", Version: "v9"}})
		noErr(t, err)
		noErr(t, r.Finish(context.Background(), nil))
		noErr(t, r.Finish(context.Background(), errors.New("late")))
		r.End(nil)
		var e error
		r.End(&e)
		noErr(t, e)
		evs := readRun(t, store, r.RunID())
		hasLen(t, evs, 2)
		eq(t, "v9", evs[0].Step().Producer.Version)
		status, _ := runStatus(evs)
		eq(t, transcript.StatusOK, status)
		eq(t, "wf", r.Recorder().State().Name)
		empty(t, r.Recorder().State().ParentRunID)
		fileExists(t, r.Recorder().Path())

		err = r.Root().Step(context.Background(), "late", transcript.KindOperation, nil)
		errIs(t, err, ErrEnded)
		_, err = r.Root().SubRun(context.Background(), "late")
		errIs(t, err, ErrEnded)
	})
	t.Run("cancelled Finish", func(t *testing.T) {
		store := newStore(t)
		r, err := Start(context.Background(), store, RunOptions{Name: "wf"})
		noErr(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		noErr(t, r.Finish(ctx, errors.New("interrupted")))
		status, _ := runStatus(readRun(t, store, r.RunID()))
		eq(t, transcript.StatusCancelled, status)
	})
}

func TestStartErrors(t *testing.T) {
	blocked := t.TempDir()
	// A file where the transcripts directory should be makes opening fail.
	noErr(t, os.WriteFile(filepath.Join(blocked, "transcripts"), nil, 0o600))
	tests := []struct {
		name  string
		store recorder.Store
		opts  RunOptions
		is    error
	}{
		{name: "empty name", store: newStore(t), opts: RunOptions{}, is: ErrInvalidName},
		{name: "bad run id", store: newStore(t), opts: RunOptions{Name: "wf", RunID: "../../etc/passwd"}},
		{name: "unwritable store", store: recorder.NewStore(blocked), opts: RunOptions{Name: "wf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Start(context.Background(), tc.store, tc.opts)
			isErr(t, err)
			isNil(t, r)
			if tc.is != nil {
				errIs(t, err, tc.is)
			}
			err = Do(context.Background(), tc.store, tc.opts, func(context.Context, *Step) error {
				t.Error("body must not run")
				return nil
			})
			isErr(t, err)
		})
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		err, ctxErr error
		status      string
	}{
		{nil, nil, transcript.StatusOK},
		{nil, context.Canceled, transcript.StatusOK},
		{errors.New("x"), nil, transcript.StatusError},
		{errors.New("x"), context.Canceled, transcript.StatusCancelled},
		{context.DeadlineExceeded, nil, transcript.StatusCancelled},
		{&StepError{Path: "a", Err: context.Canceled}, nil, transcript.StatusCancelled},
		{&StepError{Path: "a", Err: testStatusErr(transcript.StatusIncomplete)}, nil, transcript.StatusIncomplete},
		{fmt.Errorf("w: %w", testStatusErr(transcript.StatusCancelled)), nil, transcript.StatusCancelled},
		{testStatusErr(transcript.StatusIncomplete), context.Canceled, transcript.StatusCancelled},
		{testStatusErr(transcript.StatusError), nil, transcript.StatusError},
		{testStatusErr("meh"), nil, transcript.StatusError},
		{testStatusErr(transcript.StatusOK), nil, transcript.StatusError}, // an error is never ok
	}
	for _, tc := range tests {
		status, _ := runstate.Outcome(tc.err, tc.ctxErr)
		eq(t, tc.status, status, "%v / %v", tc.err, tc.ctxErr)
	}
}

func TestErrorTypes(t *testing.T) {
	base := errors.New("x")
	eq(t, "step a: x", (&StepError{Path: "a", Err: base}).Error())
	eq(t, "step a.b (iteration 2): x", (&StepError{Path: "a.b", Iteration: 2, Err: base}).Error())
	eq(t, "step a (iteration 0, attempt 1): x", (&StepError{Path: "a", Attempt: 1, Err: base}).Error())
	pe := &PanicError{Value: base}
	errIs(t, pe, base)
	isNil(t, (&PanicError{Value: 3}).Unwrap())
	eq(t, "panic: 3", (&PanicError{Value: 3}).Error())
	// An inner step's wrapping is kept as is.
	inner := wrapStep(base, "a.b", 0, 0)
	isTrue(t, inner == wrapStep(inner, "a", 0, 0))
	isTrue(t, pe == wrapStep(pe, "a", 0, 0).(*PanicError))
	isNil(t, wrapStep(nil, "a", 0, 0))
	notEmpty(t, moduleVersion())
}

// testStatusErr is an error stating the status of what it ended.
type testStatusErr string

func (e testStatusErr) Error() string  { return "ended " + string(e) }
func (e testStatusErr) Status() string { return string(e) }
