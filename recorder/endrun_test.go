package recorder_test

import (
	"context"
	"errors"
	"testing"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// TestEndRunNotDurable: a step with lifecycle's EndRun whose batch (its
// completion and run.completed) is written but whose fsync fails reports
// that as ErrNotDurable, from the step and from Finish, and not as a run
// that another writer had finished: both lines are in the file, the
// step's with its own status.
func TestEndRunNotDurable(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	eio := errors.New("injected EIO")
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "w", Observe: func(r *recorder.Recorder) {
		recorder.FailFileSyncs(r, 1, eio)
	}})
	if err != nil {
		t.Fatal(err)
	}
	stepErr := run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(context.Context, *lifecycle.Step) error { return nil }, lifecycle.StepOptions{EndRun: true})
	if !errors.Is(stepErr, recorder.ErrNotDurable) || !errors.Is(stepErr, eio) {
		t.Fatalf("step error %v, want ErrNotDurable", stepErr)
	}
	finishErr := run.Finish(ctx, nil)
	for _, err := range []error{stepErr, finishErr} {
		if errors.Is(err, recorder.ErrRunFinished) {
			t.Fatalf("a write that was not synced is reported as a run finished by another writer: %v", err)
		}
	}
	if !errors.Is(finishErr, recorder.ErrNotDurable) {
		t.Fatalf("Finish returns %v, want the end's ErrNotDurable", finishErr)
	}
	path, err := store.TranscriptPath(run.RunID())
	if err != nil {
		t.Fatal(err)
	}
	evs := recorder.CheckFile(t, path, run.RunID())
	var types []transcript.EventType
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if len(evs) != 4 || evs[2].Type != transcript.StepCompleted || evs[2].Step().Status != transcript.StatusOK || evs[3].Type != transcript.RunCompleted {
		t.Fatalf("events %v", types)
	}
	if st := evs[3].Step(); st == nil || st.Status != transcript.StatusOK {
		t.Fatalf("run.completed %+v", evs[3].Payload)
	}
}
