package runctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func readDetached(t *testing.T, store recorder.Store, id string) []*transcript.Event {
	t.Helper()
	path, err := store.TranscriptPath(id)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, warns, err := transcript.ReadAll(f)
	if err != nil || len(warns) > 0 {
		t.Fatalf("read %s: %v %v", id, err, warns)
	}
	return evs
}

func validateRun(t *testing.T, store recorder.Store, id string) *transcript.Report {
	t.Helper()
	dir := filepath.Join(store.Root, "transcripts")
	rep, err := transcript.ValidateFile(os.DirFS(dir), id+".jsonl", transcript.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestDetachedRunAcrossAttachments(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())

	// `twasm run begin`
	r, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "script"})
	if err != nil {
		t.Fatal(err)
	}
	id := r.RunID()
	if err := r.Detach(); err != nil {
		t.Fatal(err)
	}
	if err := r.Detach(); err != nil {
		t.Fatalf("second detach: %v", err)
	}

	// Two `twasm record --run-id` invocations at explicit paths.
	for i, path := range []string{"review", "per_file.lint"} {
		a, err := lifecycle.Attach(ctx, store, id, lifecycle.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name := a.Recorder().State().Name; name != "script" {
			t.Fatalf("attached name %q", name)
		}
		err = a.StepAt(ctx, path, i, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
			return s.AssistantMessage(ctx, transcript.TextBlock("hi from "+path))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Detach(); err != nil {
			t.Fatal(err)
		}
	}

	// A child begun from the shell, under the parent's step "sub".
	child, err := BeginChild(ctx, store, id, "fanout.sub", 1, lifecycle.RunOptions{Name: "child"})
	if err != nil {
		t.Fatal(err)
	}
	cid := child.RunID()
	if err := child.Detach(); err != nil {
		t.Fatal(err)
	}
	if err := End(ctx, store, cid, errors.New("child broke"), EndOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := End(ctx, store, id, nil, EndOptions{}); err != nil {
		t.Fatal(err)
	}

	evs := readDetached(t, store, id)
	var types []string
	for _, ev := range evs {
		types = append(types, string(ev.Type)+"@"+ev.Path)
	}
	want := []string{
		"run.started@", "step.started@review", "message.assistant@review", "step.completed@review",
		"step.started@per_file.lint", "message.assistant@per_file.lint", "step.completed@per_file.lint",
		"step.call_workflow.started@fanout.sub", "step.call_workflow.completed@fanout.sub", "run.completed@",
	}
	if len(types) != len(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("event %d: %s, want %s (all: %v)", i, types[i], want[i], types)
		}
	}
	if evs[5].Iteration != 1 || evs[7].Iteration != 1 {
		t.Fatalf("iterations not kept: %d %d", evs[5].Iteration, evs[7].Iteration)
	}
	if got := evs[8].Step().Status; got != transcript.StatusError {
		t.Fatalf("link status %q", got)
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("seq %d at line %d", ev.Seq, i+1)
		}
	}
	for _, ev := range readDetached(t, store, cid) {
		if ev.ParentRunID != id {
			t.Fatalf("child line without parent_run_id: %+v", ev)
		}
	}
	for _, run := range []string{id, cid} {
		if rep := validateRun(t, store, run); !rep.OK() {
			t.Fatalf("validate %s: %+v", run, rep.Errors)
		}
	}

	// A finished run cannot be attached to or ended again.
	if _, err := lifecycle.Attach(ctx, store, id, lifecycle.RunOptions{}); !errors.Is(err, recorder.ErrRunFinished) {
		t.Fatalf("attach finished: %v", err)
	}
	if err := End(ctx, store, id, nil, EndOptions{}); !errors.Is(err, recorder.ErrRunFinished) {
		t.Fatalf("end finished: %v", err)
	}
}

func TestBeginChildErrors(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	r, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.End(nil)
	if _, err := BeginChild(ctx, store, r.RunID(), "", 0, lifecycle.RunOptions{Name: "c"}); !errors.Is(err, lifecycle.ErrInvalidName) {
		t.Fatalf("BeginChild empty path: %v", err)
	}
	if _, err := BeginChild(ctx, store, r.RunID(), "p", 0, lifecycle.RunOptions{}); !errors.Is(err, lifecycle.ErrInvalidName) {
		t.Fatalf("BeginChild no name: %v", err)
	}
	if _, err := BeginChild(ctx, store, r.RunID(), "p", 0, lifecycle.RunOptions{Name: "c", RunID: "nope"}); !errors.Is(err, recorder.ErrInvalidRunID) {
		t.Fatalf("BeginChild bad id: %v", err)
	}
}
