package runctl

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// crashedStep leaves a step.started without its step.completed in the run,
// as a `twasm record --run-id` killed mid-step does.
func crashedStep(t *testing.T, store recorder.Store, id, parent, path string) {
	t.Helper()
	rec, err := store.Open(context.Background(), id, recorder.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	ev := &transcript.Event{Type: transcript.StepStarted, Path: path, ParentRunID: parent, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}}
	if err := rec.Record(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

func begin(t *testing.T, store recorder.Store, name string) string {
	t.Helper()
	r, err := lifecycle.Start(context.Background(), store, lifecycle.RunOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Detach(); err != nil {
		t.Fatal(err)
	}
	return r.RunID()
}

func types(evs []*transcript.Event) string {
	var s []string
	for _, ev := range evs {
		st := ""
		if p := ev.Step(); p != nil && p.Status != "" {
			st = "/" + p.Status
		}
		s = append(s, string(ev.Type)+"@"+ev.Path+st)
	}
	return strings.Join(s, " ")
}

// TestEndRefusesOpenSteps: ending a run with a step still open is refused
// with the step's name, and nothing is written; with CancelOpen the step
// is closed as cancelled, then the run ends.
func TestEndRefusesOpenSteps(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	id := begin(t, store, "script")
	crashedStep(t, store, id, "", "plan")
	err := End(ctx, store, id, nil, EndOptions{})
	var oe *runstate.OpenError
	if !errors.As(err, &oe) || len(oe.Open) != 1 || !strings.Contains(err.Error(), `step "plan" (seq 2)`) {
		t.Fatalf("end with an open step: %v", err)
	}
	if got := types(readDetached(t, store, id)); got != "run.started@ step.started@plan" {
		t.Fatalf("a refused end wrote: %s", got)
	}
	if err := End(ctx, store, id, nil, EndOptions{CancelOpen: true}); err != nil {
		t.Fatal(err)
	}
	if got := types(readDetached(t, store, id)); got != "run.started@ step.started@plan step.completed@plan/cancelled run.completed@/ok" {
		t.Fatalf("events: %s", got)
	}
	if rep := validateRun(t, store, id); !rep.OK() {
		t.Fatalf("%+v", rep.Errors)
	}
}

// TestEndRefusesOpenSubRun: a sub-run begun and not ended blocks its
// parent's end, named; CancelOpen ends the sub-run (cancelled, with its own
// open step) and links it back before ending the parent.
func TestEndRefusesOpenSubRun(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	id := begin(t, store, "release")
	child, err := BeginChild(ctx, store, id, "fixes", 0, lifecycle.RunOptions{Name: "fixes"})
	if err != nil {
		t.Fatal(err)
	}
	cid := child.RunID()
	if err := child.Detach(); err != nil {
		t.Fatal(err)
	}
	crashedStep(t, store, cid, id, "fix")
	err = End(ctx, store, id, nil, EndOptions{})
	if !errors.As(err, new(*runstate.OpenError)) || !strings.Contains(err.Error(), "sub-run "+cid+` at "fixes"`) {
		t.Fatalf("end with an open sub-run: %v", err)
	}
	if err := End(ctx, store, id, nil, EndOptions{CancelOpen: true}); err != nil {
		t.Fatal(err)
	}
	if got := types(readDetached(t, store, cid)); got != "run.started@ step.started@fix step.completed@fix/cancelled run.completed@/cancelled" {
		t.Fatalf("child: %s", got)
	}
	if got := types(readDetached(t, store, id)); got != "run.started@ step.call_workflow.started@fixes step.call_workflow.completed@fixes/cancelled run.completed@/ok" {
		t.Fatalf("parent: %s", got)
	}
	for _, run := range []string{id, cid} {
		if rep := validateRun(t, store, run); !rep.OK() {
			t.Fatalf("validate %s: %+v", run, rep.Errors)
		}
	}
}

// TestConcurrentEnds: eight ends at once write one run.completed; the
// others are told the run is finished.
func TestConcurrentEnds(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	id := begin(t, store, "script")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = End(ctx, store, id, nil, EndOptions{}) }()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, recorder.ErrRunFinished) {
			t.Fatal(err)
		}
	}
	if got := types(readDetached(t, store, id)); ok != 1 || got != "run.started@ run.completed@/ok" {
		t.Fatalf("%d ends succeeded: %s", ok, got)
	}
}

// TestAttachedRunEndedElsewhere: a run attached to (record --run-id) and
// ended by another process meanwhile refuses the attachment's next event.
func TestAttachedRunEndedElsewhere(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	id := begin(t, store, "script")
	a, err := lifecycle.Attach(ctx, store, id, lifecycle.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Detach()
	if err := End(ctx, store, id, nil, EndOptions{}); err != nil {
		t.Fatal(err)
	}
	err = a.StepAt(ctx, "late", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error { return nil })
	if !errors.Is(err, recorder.ErrRunFinished) {
		t.Fatalf("step on a run ended elsewhere: %v", err)
	}
	if got := types(readDetached(t, store, id)); got != "run.started@ run.completed@/ok" {
		t.Fatalf("events: %s", got)
	}
}

func TestValidStepPath(t *testing.T) {
	for _, p := range []string{"a", "a.b", "per_file.lint", "ünï"} {
		if err := ValidStepPath(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "a/b", `a\b`, "a..b", ".a", "a.", "a b", "a\x00"} {
		if err := ValidStepPath(p); !errors.Is(err, lifecycle.ErrInvalidName) {
			t.Errorf("%q accepted", p)
		}
	}
}

// TestEndLinksBackEndedSubRun: a sub-run whose run.completed was written
// and whose link in the parent was not completed (a kill between the
// two writes of End) is linked back, when CancelOpen ends the parent,
// with the status and error it ended with, not as cancelled: the
// parent's transcript must not say a sub-agent that failed (or
// succeeded) was cancelled.
func TestEndLinksBackEndedSubRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runErr error
		want   string
	}{
		{"ok", nil, "ok"},
		{"failed", errors.New("the sub-agent's tool failed"), "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			id := begin(t, store, "session")
			child, err := BeginChild(ctx, store, id, "agent.sub", 0, lifecycle.RunOptions{Name: "sub"})
			if err != nil {
				t.Fatal(err)
			}
			cid := child.RunID()
			if err := child.Detach(); err != nil {
				t.Fatal(err)
			}
			path, _ := store.TranscriptPath(id)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := End(ctx, store, cid, tc.runErr, EndOptions{}); err != nil {
				t.Fatal(err)
			}
			// The kill: the parent's link completion never written.
			if err := os.WriteFile(path, before, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := End(ctx, store, id, nil, EndOptions{CancelOpen: true}); err != nil {
				t.Fatal(err)
			}
			evs := readDetached(t, store, id)
			if got, want := types(evs), "run.started@ step.call_workflow.started@agent.sub step.call_workflow.completed@agent.sub/"+tc.want+" run.completed@/ok"; got != want {
				t.Fatalf("parent: %s\nwant %s", got, want)
			}
			if tc.runErr != nil && !strings.Contains(evs[2].Step().Error, tc.runErr.Error()) {
				t.Errorf("the link's error %q, want the sub-run's %q", evs[2].Step().Error, tc.runErr)
			}
			for _, run := range []string{id, cid} {
				if rep := validateRun(t, store, run); !rep.OK() {
					t.Fatalf("validate %s: %+v", run, rep.Errors)
				}
			}
		})
	}
}
