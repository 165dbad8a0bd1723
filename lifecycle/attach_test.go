package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// TestAttachStepAtDetach: a run begun and detached is continued by an
// attachment that records a step at an explicit path and iteration, as
// `twasm record --run-id --path --iteration` does, and ended by another
// one; a run started with ParentRunID carries it on every line.
func TestAttachStepAtDetach(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	r, err := Start(ctx, store, RunOptions{Name: "script"})
	noErr(t, err)
	id := r.RunID()
	noErr(t, r.Detach())
	a, err := Attach(ctx, store, id, RunOptions{})
	noErr(t, err)
	eq(t, "script", a.Recorder().State().Name)
	noErr(t, a.StepAt(ctx, "review.lint", 2, transcript.KindAgent, func(ctx context.Context, s *Step) error {
		eq(t, "review.lint", s.Path())
		eq(t, 2, s.Iteration())
		return s.UserMessage(ctx, "lint it", "")
	}))
	noErr(t, a.Detach())
	noErr(t, a.Detach()) // only the first has an effect
	b, err := Attach(ctx, store, id, RunOptions{})
	noErr(t, err)
	noErr(t, b.Finish(ctx, nil))
	evs := readEvents(t, store, id)
	got := ""
	for _, ev := range evs {
		got += fmt.Sprintf("%s@%s[%d] ", ev.Type, ev.Path, ev.Iteration)
	}
	eq(t, "run.started@[0] step.started@review.lint[2] message.user@review.lint[2] step.completed@review.lint[2] run.completed@[0] ", got)
	_, err = Attach(ctx, store, id, RunOptions{})
	errIs(t, err, recorder.ErrRunFinished)
	_, err = Attach(ctx, store, runid.New(), RunOptions{})
	errIs(t, err, fs.ErrNotExist)

	c, err := Start(ctx, store, RunOptions{Name: "child", ParentRunID: id})
	noErr(t, err)
	noErr(t, c.Finish(ctx, nil))
	for _, ev := range readEvents(t, store, c.RunID()) {
		eq(t, id, ev.ParentRunID)
	}
}

func TestAttachErrors(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	if _, err := Attach(ctx, store, "../etc/passwd", RunOptions{}); !errors.Is(err, recorder.ErrInvalidRunID) {
		t.Fatalf("bad id: %v", err)
	}
	id := runid.New()
	if _, err := Attach(ctx, store, id, RunOptions{}); err == nil {
		t.Fatal("attach to a missing run succeeded")
	}
	path, _ := store.TranscriptPath(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ev := &transcript.Event{Seq: 1, RunID: id, Type: transcript.MessageUser, Payload: &transcript.MessagePayload{Role: "user"}}
	line, _ := transcript.AppendEvent(nil, ev)
	if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(ctx, store, id, RunOptions{}); !errors.Is(err, ErrNotARun) {
		t.Fatalf("not a run: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(ctx, store, id, RunOptions{}); !errors.Is(err, ErrNotARun) {
		t.Fatalf("empty: %v", err)
	}
	r, err := Start(ctx, store, RunOptions{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.End(nil)
	for _, bad := range []string{"", "a..b", "a b"} {
		if err := r.StepAt(ctx, bad, 0, transcript.KindAgent, nil); !errors.Is(err, ErrInvalidName) {
			t.Fatalf("StepAt(%q): %v", bad, err)
		}
	}
	if err := r.StepAt(ctx, "a", -1, transcript.KindAgent, nil); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("negative iteration: %v", err)
	}
}
