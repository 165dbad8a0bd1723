package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// endLine is what TestEndRunWritesWhatFinishWould compares of each line.
type endLine struct {
	Type             transcript.EventType
	Path             string
	Iteration        int
	Attempt          int
	Status, Error    string
	Child, HasResult bool
}

func endLines(evs []*transcript.Event) []endLine {
	var out []endLine
	for _, ev := range evs {
		l := endLine{Type: ev.Type, Path: ev.Path, Iteration: ev.Iteration, Child: ev.ChildRunID != ""}
		if p := ev.Step(); p != nil {
			l.Attempt, l.Status, l.Error, l.HasResult = p.Attempt, p.Status, p.Error, p.Result != nil
		}
		out = append(out, l)
	}
	return out
}

// TestEndRunWritesWhatFinishWould: a step with EndRun leaves the same
// transcript, and returns the same errors, as the step without it
// followed by Finish with the step's error under the same context;
// afterwards Finish writes nothing and returns what the end returned.
func TestEndRunWritesWhatFinishWould(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		opts StepOptions
		// step runs in the step; attempt counts the calls
		step func(ctx context.Context, cancel context.CancelFunc, s *Step, attempt int) error
	}{
		{"ok", StepOptions{}, func(ctx context.Context, _ context.CancelFunc, s *Step, _ int) error {
			noErr(t, s.SetResult(map[string]int{"n": 1}))
			return s.UserMessage(ctx, "hi", "")
		}},
		{"error", StepOptions{}, func(context.Context, context.CancelFunc, *Step, int) error { return boom }},
		{"incomplete", StepOptions{}, func(context.Context, context.CancelFunc, *Step, int) error {
			return testStatusErr(transcript.StatusIncomplete)
		}},
		{"cancelled", StepOptions{}, func(ctx context.Context, cancel context.CancelFunc, _ *Step, _ int) error {
			cancel()
			return errors.New("signal: killed")
		}},
		{"retried until it succeeds", StepOptions{Retries: 3}, func(_ context.Context, _ context.CancelFunc, _ *Step, attempt int) error {
			if attempt < 2 {
				return boom
			}
			return nil
		}},
		{"retries exhausted", StepOptions{Retries: 1}, func(context.Context, context.CancelFunc, *Step, int) error { return boom }},
		{"nested in an open step", StepOptions{}, nil}, // see below
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			record := func(endRun bool) (lines []endLine, stepErr, finishErr error) {
				store := newStore(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				run, err := Start(ctx, store, RunOptions{Name: "w"})
				noErr(t, err)
				opts := tt.opts
				opts.EndRun = endRun
				attempt := 0
				fn := func(ctx context.Context, s *Step) error {
					attempt++
					return tt.step(ctx, cancel, s, attempt-1)
				}
				if tt.step == nil {
					// EndRun on a step inside another: the run ends with
					// the outer step open, which is closed as cancelled,
					// as Finish from inside it does.
					stepErr = run.Root().Step(ctx, "outer", transcript.KindAgent, func(ctx context.Context, outer *Step) error {
						err := outer.Step(ctx, "inner", transcript.KindAgent, func(context.Context, *Step) error { return boom }, opts)
						if !endRun {
							noErr(t, run.Finish(ctx, err) /* what EndRun does */)
						}
						return err
					})
				} else {
					stepErr = run.StepAt(ctx, "agent", 0, transcript.KindAgent, fn, opts)
				}
				if endRun {
					evs := readEvents(t, store, run.RunID())
					eq(t, transcript.RunCompleted, evs[len(evs)-1].Type, "the run ended with the step")
				}
				finishErr = run.Finish(ctx, stepErr)
				if endRun {
					n := len(readEvents(t, store, run.RunID()))
					eq(t, finishErr, run.Finish(ctx, boom), "Finish again returns the first result")
					eq(t, n, len(readEvents(t, store, run.RunID())), "nothing written after the end")
				}
				return endLines(readRun(t, store, run.RunID())), stepErr, finishErr
			}
			want, wantStep, wantFinish := record(false)
			got, gotStep, gotFinish := record(true)
			eq(t, want, got)
			if tt.step == nil {
				// Without EndRun the outer step's completion is refused
				// (the run has ended); with it, too.
				errIs(t, wantStep, ErrEnded)
				errIs(t, gotStep, ErrEnded)
				return
			}
			eq(t, errText(wantStep), errText(gotStep))
			eq(t, wantFinish, gotFinish)
			_, wantSE := wantStep.(*StepError)
			_, gotSE := gotStep.(*StepError)
			eq(t, wantSE, gotSE, "a *StepError either way")
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestEndRunClosesForgottenSubRuns: a sub-run the step left open is ended
// before the step's completion, so its link lies inside the step.
func TestEndRunClosesForgottenSubRuns(t *testing.T) {
	store := newStore(t)
	ctx := context.Background()
	run, err := Start(ctx, store, RunOptions{Name: "w"})
	noErr(t, err)
	var child string
	err = run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(ctx context.Context, s *Step) error {
		c, err := s.SubRun(ctx, "helper")
		child = c.RunID()
		return err
	}, StepOptions{EndRun: true})
	noErr(t, err)
	noErr(t, run.Finish(ctx, nil))
	eq(t, []stepLine{
		{transcript.StepStarted, "agent", 0, 0, ""},
		{transcript.StepCallWorkflowStarted, "agent.helper", 0, 0, ""},
		{transcript.StepCallWorkflowCompleted, "agent.helper", 0, 0, transcript.StatusError},
		{transcript.StepCompleted, "agent", 0, 0, transcript.StatusOK},
	}, stepLines(readRun(t, store, run.RunID())))
	evs := readRun(t, store, child)
	st, _ := runStatus(evs)
	eq(t, transcript.StatusError, st)
}

// TestEndRunAfterTheRunEnded: a run ended inside the step (here by
// Finish) refuses the completion, as it does without EndRun.
func TestEndRunAfterTheRunEnded(t *testing.T) {
	store := newStore(t)
	ctx := context.Background()
	run, err := Start(ctx, store, RunOptions{Name: "w"})
	noErr(t, err)
	err = run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(ctx context.Context, s *Step) error {
		return run.Finish(ctx, nil)
	}, StepOptions{EndRun: true})
	errIs(t, err, ErrEnded)
	evs := readRun(t, store, run.RunID())
	eq(t, transcript.StepCompleted, evs[len(evs)-2].Type, "the end closed the step as cancelled")
	eq(t, transcript.StatusCancelled, evs[len(evs)-2].Step().Status)
}

// TestEndRunPanic: a panicking step ends as usual; the run ends with End.
func TestEndRunPanic(t *testing.T) {
	store := newStore(t)
	ctx := context.Background()
	var id string
	func() {
		defer func() { eq(t, "boom", recover()) }()
		run, err := Start(ctx, store, RunOptions{Name: "w"})
		noErr(t, err)
		id = run.RunID()
		defer run.End(nil)
		_ = run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(context.Context, *Step) error { panic("boom") }, StepOptions{EndRun: true})
	}()
	evs := readRun(t, store, id)
	eq(t, []stepLine{
		{transcript.StepStarted, "agent", 0, 0, ""},
		{transcript.StepCompleted, "agent", 0, 0, transcript.StatusError},
	}, stepLines(evs))
	st, text := runStatus(evs)
	eq(t, transcript.StatusError, st)
	eq(t, "panic: boom", text)
}

// TestEndRunCompletionFails: a step's completion that cannot be written
// (here the recorder's masker breaks it) does not keep the run from
// ending: the run ends without it, the step closed as cancelled, as
// Finish after the failed completion does without EndRun.
func TestEndRunCompletionFails(t *testing.T) {
	record := func(endRun bool) ([]endLine, error) {
		store := newStore(t)
		ctx := context.Background()
		mask := func(ev *transcript.Event) {
			if ev.Type == transcript.StepCompleted && ev.Step().Status == transcript.StatusOK {
				ev.RunID = "not-this-run"
			}
		}
		run, err := Start(ctx, store, RunOptions{Name: "w", Recorder: recorder.Options{Mask: mask}})
		noErr(t, err)
		stepErr := run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(context.Context, *Step) error { return nil }, StepOptions{EndRun: endRun})
		errIs(t, stepErr, recorder.ErrRunMismatch)
		noErr(t, run.Finish(ctx, nil), "the run ends")
		return endLines(readRun(t, store, run.RunID())), stepErr
	}
	want, _ := record(false)
	got, err := record(true)
	eq(t, want, got)
	isTrue(t, strings.Contains(err.Error(), "complete step agent"), "%v", err)
	eq(t, transcript.StatusCancelled, got[len(got)-2].Status)
}

// TestEndRunNoAttemptAfterTheEnd: once a step with EndRun has ended the
// run, no attempt follows, whatever its RetryIf says of the error the
// end returned: a completion that could not be written (here the masker
// breaks it; a full disk in life) is the step's error, not the refusal
// of an attempt that could not start.
func TestEndRunNoAttemptAfterTheEnd(t *testing.T) {
	for _, tt := range []struct {
		name    string
		fnErr   error
		retryIf func(error) bool
	}{
		{"ok, any error retried", nil, nil},
		{"error not retried, completion's failure retried", errors.New("fatal"), func(err error) bool { return errors.Is(err, recorder.ErrRunMismatch) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t)
			ctx := context.Background()
			mask := func(ev *transcript.Event) {
				if ev.Type == transcript.StepCompleted && ev.Step().Status != transcript.StatusCancelled {
					ev.RunID = "not-this-run" // the step's own completion, not the end's
				}
			}
			run, err := Start(ctx, store, RunOptions{Name: "w", Recorder: recorder.Options{Mask: mask}})
			noErr(t, err)
			calls := 0
			stepErr := run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(context.Context, *Step) error {
				calls++
				return tt.fnErr
			}, StepOptions{EndRun: true, Retries: 2, RetryIf: tt.retryIf})
			eq(t, 1, calls, "attempts")
			errIs(t, stepErr, recorder.ErrRunMismatch)
			if tt.fnErr != nil {
				errIs(t, stepErr, tt.fnErr)
			}
			isTrue(t, !errors.Is(stepErr, ErrEnded), "%v", stepErr)
			noErr(t, run.Finish(ctx, nil), "the run ended")
			evs := readRun(t, store, run.RunID())
			eq(t, transcript.RunCompleted, evs[len(evs)-1].Type)
		})
	}
}
