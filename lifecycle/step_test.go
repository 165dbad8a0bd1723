package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// doRun runs body as a run in a fresh store and returns its events.
func doRun(t *testing.T, body StepFunc) ([]*transcript.Event, error) {
	t.Helper()
	store := newStore(t)
	id := runid.New()
	err := Do(context.Background(), store, RunOptions{Name: "wf", RunID: id}, body)
	return readRun(t, store, id), err
}

func TestPathIteration(t *testing.T) {
	op := transcript.KindOperation
	flaky := func(failures int) StepFunc {
		return func(_ context.Context, s *Step) error {
			if s.Attempt() < failures {
				return fmt.Errorf("attempt %d failed", s.Attempt())
			}
			return nil
		}
	}
	tests := []struct {
		name string
		body StepFunc
		want []stepLine
	}{
		{
			name: "nested steps",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "review", transcript.KindAgent, func(ctx context.Context, s *Step) error {
					return s.Step(ctx, "lint", op, nil)
				})
			},
			want: []stepLine{
				sl(ss, "review", 0, 0, ""), sl(ss, "review.lint", 0, 0, ""),
				sl(sc, "review.lint", 0, 0, "ok"), sl(sc, "review", 0, 0, "ok"),
			},
		},
		{
			name: "nested loops: innermost index wins",
			body: func(ctx context.Context, r *Step) error {
				return r.ForEach(ctx, "outer", 2, func(ctx context.Context, i int, o *Step) error {
					return o.While(ctx, "inner", func(_ context.Context, j int) (bool, error) { return j < 2, nil },
						func(ctx context.Context, j int, in *Step) error {
							return in.Step(ctx, "leaf", op, nil)
						})
				})
			},
			want: []stepLine{
				sl(ss, "outer", 0, 0, ""),
				sl(ss, "outer.inner", 0, 0, ""),
				sl(ss, "outer.inner.leaf", 0, 0, ""), sl(sc, "outer.inner.leaf", 0, 0, "ok"),
				sl(ss, "outer.inner.leaf", 1, 0, ""), sl(sc, "outer.inner.leaf", 1, 0, "ok"),
				sl(sc, "outer.inner", 0, 0, "ok"),
				sl(ss, "outer.inner", 1, 0, ""),
				sl(ss, "outer.inner.leaf", 0, 0, ""), sl(sc, "outer.inner.leaf", 0, 0, "ok"),
				sl(ss, "outer.inner.leaf", 1, 0, ""), sl(sc, "outer.inner.leaf", 1, 0, "ok"),
				sl(sc, "outer.inner", 1, 0, "ok"),
				sl(sc, "outer", 0, 0, "ok"),
			},
		},
		{
			name: "retry outside loops: attempt is the iteration, inherited by children",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "fetch", op, func(ctx context.Context, s *Step) error {
					if err := s.Step(ctx, "child", op, nil); err != nil {
						return err
					}
					return flaky(2)(ctx, s)
				}, StepOptions{Retries: 3})
			},
			want: []stepLine{
				sl(ss, "fetch", 0, 0, ""), sl(ss, "fetch.child", 0, 0, ""), sl(sc, "fetch.child", 0, 0, "ok"), sl(sc, "fetch", 0, 0, "error"),
				sl(ss, "fetch", 1, 1, ""), sl(ss, "fetch.child", 1, 0, ""), sl(sc, "fetch.child", 1, 0, "ok"), sl(sc, "fetch", 1, 1, "error"),
				sl(ss, "fetch", 2, 2, ""), sl(ss, "fetch.child", 2, 0, ""), sl(sc, "fetch.child", 2, 0, "ok"), sl(sc, "fetch", 2, 2, "ok"),
			},
		},
		{
			name: "retry inside a loop: loop index wins, attempt tells retries apart",
			body: func(ctx context.Context, r *Step) error {
				return r.ForEach(ctx, "per_file", 2, func(ctx context.Context, i int, b *Step) error {
					return b.Step(ctx, "lint", op, flaky(1-i), StepOptions{Retries: 1})
				})
			},
			want: []stepLine{
				sl(ss, "per_file", 0, 0, ""),
				sl(ss, "per_file.lint", 0, 0, ""), sl(sc, "per_file.lint", 0, 0, "error"),
				sl(ss, "per_file.lint", 0, 1, ""), sl(sc, "per_file.lint", 0, 1, "ok"),
				sl(ss, "per_file.lint", 1, 0, ""), sl(sc, "per_file.lint", 1, 0, "ok"),
				sl(sc, "per_file", 0, 0, "ok"),
			},
		},
		{
			name: "loop inside a retried step: loop index wins",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "job", op, func(ctx context.Context, s *Step) error {
					return s.ForEach(ctx, "each", 1, func(ctx context.Context, i int, b *Step) error {
						return b.Step(ctx, "x", op, nil)
					})
				}, StepOptions{Retries: 1})
			},
			want: []stepLine{
				sl(ss, "job", 0, 0, ""), sl(ss, "job.each", 0, 0, ""),
				sl(ss, "job.each.x", 0, 0, ""), sl(sc, "job.each.x", 0, 0, "ok"),
				sl(sc, "job.each", 0, 0, "ok"), sl(sc, "job", 0, 0, "ok"),
			},
		},
		{
			name: "retry exhausted",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "s", op, flaky(5), StepOptions{Retries: 1})
			},
			want: []stepLine{
				sl(ss, "s", 0, 0, ""), sl(sc, "s", 0, 0, "error"),
				sl(ss, "s", 1, 1, ""), sl(sc, "s", 1, 1, "error"),
			},
		},
		{
			name: "RetryIf refuses",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "s", op, flaky(5), StepOptions{Retries: 3, RetryIf: func(error) bool { return false }})
			},
			want: []stepLine{sl(ss, "s", 0, 0, ""), sl(sc, "s", 0, 0, "error")},
		},
		{
			name: "retry with delay",
			body: func(ctx context.Context, r *Step) error {
				return r.Step(ctx, "s", op, flaky(1), StepOptions{Retries: 1, RetryDelay: time.Millisecond})
			},
			want: []stepLine{
				sl(ss, "s", 0, 0, ""), sl(sc, "s", 0, 0, "error"),
				sl(ss, "s", 1, 1, ""), sl(sc, "s", 1, 1, "ok"),
			},
		},
		{
			name: "terminal steps",
			body: func(ctx context.Context, r *Step) error {
				if err := r.Step(ctx, "done", transcript.KindTerminal, nil); err != nil {
					return err
				}
				return r.Step(ctx, "s", op, func(ctx context.Context, s *Step) error {
					_ = s.Step(ctx, "failed", transcript.KindTerminal, func(context.Context, *Step) error { return errors.New("tests failed") })
					return nil
				})
			},
			want: []stepLine{
				sl(ss, "done", 0, 0, ""), sl(sc, "done", 0, 0, "ok"),
				sl(ss, "s", 0, 0, ""), sl(ss, "s.failed", 0, 0, ""), sl(sc, "s.failed", 0, 0, "error"), sl(sc, "s", 0, 0, "ok"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, _ := doRun(t, tc.body)
			eq(t, tc.want, stepLines(evs))
		})
	}
}

func TestStepKindsAndResults(t *testing.T) {
	kinds := []transcript.StepKind{
		transcript.KindAgent, transcript.KindCommand, transcript.KindOperation, transcript.KindTerminal,
		"custom", "webhook", "my-plugin.step",
	}
	evs, err := doRun(t, func(ctx context.Context, r *Step) error {
		for i, k := range kinds {
			if err := r.Step(ctx, fmt.Sprintf("s%d", i), k, func(ctx context.Context, s *Step) error {
				eq(t, k, s.kind)
				eq(t, fmt.Sprintf("s%d", i), s.name)
				eq(t, r.Run(), s.Run())
				eq(t, 0, s.Iteration())
				eq(t, 0, s.Attempt())
				return s.SetResult(map[string]int{"n": i})
			}); err != nil {
				return err
			}
		}
		return nil
	})
	noErr(t, err)
	done := find(evs, sc, "")
	hasLen(t, done, len(kinds))
	for i, ev := range done {
		eq(t, kinds[i], ev.Step().Kind)
		eq(t, fmt.Sprintf(`{"n":%d}`, i), string(ev.Step().Result))
	}
}

func TestStepMisuse(t *testing.T) {
	op := transcript.KindOperation
	tests := []struct {
		name string
		call func(ctx context.Context, r *Step) error
		is   error
	}{
		{"empty name", func(ctx context.Context, r *Step) error { return r.Step(ctx, "", op, nil) }, ErrInvalidName},
		{"dotted name", func(ctx context.Context, r *Step) error { return r.Step(ctx, "a.b", op, nil) }, ErrInvalidName},
		{"space in name", func(ctx context.Context, r *Step) error { return r.Step(ctx, "a b", op, nil) }, ErrInvalidName},
		{"empty kind", func(ctx context.Context, r *Step) error { return r.Step(ctx, "a", "", nil) }, ErrInvalidKind},
		{"workflow kind", func(ctx context.Context, r *Step) error { return r.Step(ctx, "a", transcript.KindWorkflow, nil) }, ErrInvalidKind},
		{"bad custom kind", func(ctx context.Context, r *Step) error { return r.Step(ctx, "a", "Bad Kind", nil) }, ErrInvalidKind},
		{"negative count", func(ctx context.Context, r *Step) error {
			return r.ForEach(ctx, "a", -1, nil)
		}, nil},
		{"duplicate branch", func(ctx context.Context, r *Step) error {
			return r.Parallel(ctx, "p", []Branch{{Name: "x", Kind: op}, {Name: "x", Kind: op}})
		}, ErrInvalidName},
		{"bad sub-run name", func(ctx context.Context, r *Step) error {
			_, err := r.SubRun(ctx, "a.b")
			return err
		}, ErrInvalidName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := doRun(t, tc.call)
			isErr(t, err)
			if tc.is != nil {
				errIs(t, err, tc.is)
			}
			hasLen(t, evs, 2, "nothing recorded but the bracket")
		})
	}
}

func TestWhileConditionError(t *testing.T) {
	bad := errors.New("cannot evaluate")
	evs, err := doRun(t, func(ctx context.Context, r *Step) error {
		return r.While(ctx, "poll", func(_ context.Context, i int) (bool, error) {
			if i == 1 {
				return false, bad
			}
			return true, nil
		}, func(context.Context, int, *Step) error { return nil })
	})
	errIs(t, err, bad)
	var se *StepError
	isTrue(t, errors.As(err, &se))
	eq(t, "poll", se.Path)
	eq(t, 1, se.Iteration)
	eq(t, "step poll (iteration 1): condition: cannot evaluate", find(evs, sc, "poll")[0].Step().Error)
}

func TestLoopStopsOnError(t *testing.T) {
	var ran []int
	evs, err := doRun(t, func(ctx context.Context, r *Step) error {
		return r.ForEach(ctx, "each", 5, func(_ context.Context, i int, _ *Step) error {
			ran = append(ran, i)
			if i == 2 {
				return errors.New("stop")
			}
			return nil
		})
	})
	eqErr(t, err, "step each (iteration 2): stop")
	eq(t, []int{0, 1, 2}, ran)
	eq(t, transcript.StatusError, find(evs, sc, "each")[0].Step().Status)
}

func TestLoopCancelled(t *testing.T) {
	store := newStore(t)
	id := runid.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := Do(ctx, store, RunOptions{Name: "wf", RunID: id}, func(ctx context.Context, r *Step) error {
		return r.While(ctx, "forever", func(context.Context, int) (bool, error) { return true, nil },
			func(_ context.Context, i int, _ *Step) error {
				if i == 3 {
					cancel()
				}
				return nil
			}, StepOptions{Retries: 2})
	})
	errIs(t, err, context.Canceled)
	evs := readRun(t, store, id)
	// Cancellation is not retried.
	eq(t, []stepLine{sl(ss, "forever", 0, 0, ""), sl(sc, "forever", 0, 0, "cancelled")}, stepLines(evs))
}

func TestRetryDelayCancelled(t *testing.T) {
	store := newStore(t)
	id := runid.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := Do(ctx, store, RunOptions{Name: "wf", RunID: id}, func(ctx context.Context, r *Step) error {
		return r.Step(ctx, "s", transcript.KindOperation, func(context.Context, *Step) error {
			cancel()
			return errors.New("fail")
		}, StepOptions{Retries: 5, RetryDelay: time.Hour})
	})
	isErr(t, err)
	hasLen(t, stepLines(readRun(t, store, id)), 2)
}

func TestParallel(t *testing.T) {
	op := transcript.KindOperation
	t.Run("branches run concurrently", func(t *testing.T) {
		const n = 4
		var arrived sync.WaitGroup
		arrived.Add(n)
		branches := make([]Branch, n)
		for i := range branches {
			branches[i] = Branch{Name: fmt.Sprintf("b%d", i), Kind: transcript.KindAgent, Fn: func(ctx context.Context, s *Step) error {
				// Every branch waits for all the others: this only ends if
				// they all run at once.
				arrived.Done()
				arrived.Wait()
				for j := range 20 {
					if err := s.UserMessage(ctx, fmt.Sprintf("%s %d", s.Path(), j), ""); err != nil {
						return err
					}
				}
				return nil
			}}
		}
		evs, err := doRun(t, func(ctx context.Context, r *Step) error {
			return r.Step(ctx, "outer", op, func(ctx context.Context, s *Step) error {
				return s.Parallel(ctx, "fanout", branches)
			})
		})
		noErr(t, err)
		for i := range n {
			path := fmt.Sprintf("outer.fanout.b%d", i)
			msgs := find(evs, transcript.MessageUser, path)
			hasLen(t, msgs, 20)
			for j, m := range msgs {
				eq(t, fmt.Sprintf("%s %d", path, j), m.Message().Blocks[0].Text, "per-branch order")
			}
			hasLen(t, find(evs, sc, path), 1)
		}
	})
	t.Run("errors joined, all branches run", func(t *testing.T) {
		var ran atomic.Int32
		evs, err := doRun(t, func(ctx context.Context, r *Step) error {
			return r.Parallel(ctx, "p", []Branch{
				{Name: "a", Kind: op, Fn: func(context.Context, *Step) error { ran.Add(1); return errors.New("a failed") }},
				{Name: "b", Kind: op, Fn: func(context.Context, *Step) error { ran.Add(1); return errors.New("b failed") }},
				{Name: "c", Kind: op, Fn: func(context.Context, *Step) error { ran.Add(1); return nil }},
			})
		})
		eq(t, int32(3), ran.Load())
		contains(t, err.Error(), "step p.a: a failed")
		contains(t, err.Error(), "step p.b: b failed")
		eq(t, transcript.StatusOK, find(evs, sc, "p.c")[0].Step().Status)
		eq(t, transcript.StatusError, find(evs, sc, "p")[0].Step().Status)
	})
	t.Run("fail fast cancels siblings", func(t *testing.T) {
		evs, err := doRun(t, func(ctx context.Context, r *Step) error {
			return r.Parallel(ctx, "p", []Branch{
				{Name: "fails", Kind: op, Fn: func(context.Context, *Step) error { return errors.New("bad") }},
				{Name: "waits", Kind: op, Fn: func(ctx context.Context, _ *Step) error {
					<-ctx.Done()
					return context.Cause(ctx)
				}},
			}, StepOptions{FailFast: true})
		})
		isErr(t, err)
		eq(t, transcript.StatusCancelled, find(evs, sc, "p.waits")[0].Step().Status)
		eq(t, transcript.StatusError, find(evs, sc, "p.fails")[0].Step().Status)
	})
	t.Run("panic in a branch is recorded and raised in the caller", func(t *testing.T) {
		store := newStore(t)
		id := runid.New()
		v := panics(t, func() {
			_ = Do(context.Background(), store, RunOptions{Name: "wf", RunID: id}, func(ctx context.Context, r *Step) error {
				return r.Parallel(ctx, "p", []Branch{
					{Name: "ok", Kind: op},
					{Name: "bad", Kind: op, Fn: func(context.Context, *Step) error { panic("branch exploded") }},
				})
			})
		})
		pe, ok := v.(*PanicError)
		isTrue(t, ok, "got %T", v)
		eq(t, "branch exploded", pe.Value)
		contains(t, string(pe.Stack), "step_test.go")
		evs := readRun(t, store, id)
		eq(t, "panic: branch exploded", find(evs, sc, "p.bad")[0].Step().Error)
		eq(t, "panic: branch exploded", find(evs, sc, "p")[0].Step().Error)
		_, text := runStatus(evs)
		eq(t, "panic: branch exploded", text)
	})
	t.Run("Goexit in a branch", func(t *testing.T) {
		evs, err := doRun(t, func(ctx context.Context, r *Step) error {
			return r.Parallel(ctx, "p", []Branch{{Name: "x", Kind: op, Fn: func(context.Context, *Step) error {
				runtime.Goexit()
				return nil
			}}})
		})
		errIs(t, err, errGoexit)
		eq(t, transcript.StatusError, find(evs, sc, "p.x")[0].Step().Status)
	})
}

func TestCallWorkflowDepth2(t *testing.T) {
	store := newStore(t)
	id := runid.New()
	var childID, grandID string
	err := Do(context.Background(), store, RunOptions{Name: "parent", RunID: id}, func(ctx context.Context, r *Step) error {
		return r.ForEach(ctx, "each", 2, func(ctx context.Context, i int, b *Step) error {
			if i == 0 {
				return nil
			}
			return b.CallWorkflow(ctx, "call_child", func(ctx context.Context, child *Step) error {
				childID = child.Run().RunID()
				eq(t, id, child.Run().Recorder().State().ParentRunID)
				eq(t, "child", child.Run().Recorder().State().Name)
				return child.Step(ctx, "work", transcript.KindOperation, func(ctx context.Context, s *Step) error {
					return s.CallWorkflow(ctx, "grandchild", func(ctx context.Context, g *Step) error {
						grandID = g.Run().RunID()
						return g.Step(ctx, "leaf", transcript.KindAgent, func(ctx context.Context, s *Step) error {
							return s.UserMessage(ctx, "hi", "")
						})
					})
				})
			}, StepOptions{Workflow: "child"})
		})
	})
	noErr(t, err)

	parent := readRun(t, store, id)
	child := readRun(t, store, childID)
	grand := readRun(t, store, grandID)

	calls := append(find(parent, transcript.StepCallWorkflowStarted, ""), find(parent, transcript.StepCallWorkflowCompleted, "")...)
	hasLen(t, calls, 2)
	for _, ev := range calls {
		eq(t, "each.call_child", ev.Path)
		eq(t, 1, ev.Iteration)
		eq(t, childID, ev.ChildRunID)
		eq(t, transcript.KindCallWorkflow, ev.Step().Kind)
		empty(t, ev.ParentRunID)
	}
	eq(t, transcript.StatusOK, calls[1].Step().Status)
	for _, ev := range child {
		eq(t, id, ev.ParentRunID)
	}
	eq(t, "child", child[0].Step().Name)
	inner := find(child, transcript.StepCallWorkflowStarted, "work.grandchild")
	hasLen(t, inner, 1)
	eq(t, grandID, inner[0].ChildRunID)
	for _, ev := range grand {
		eq(t, childID, ev.ParentRunID)
	}
	eq(t, "grandchild", grand[0].Step().Name)
	hasLen(t, find(grand, transcript.MessageUser, "leaf"), 1)
}

func TestCallWorkflowFailures(t *testing.T) {
	t.Run("child error", func(t *testing.T) {
		store := newStore(t)
		id := runid.New()
		var childID string
		err := Do(context.Background(), store, RunOptions{Name: "p", RunID: id}, func(ctx context.Context, r *Step) error {
			return r.CallWorkflow(ctx, "c", func(ctx context.Context, child *Step) error {
				childID = child.Run().RunID()
				return errors.New("child failed")
			})
		})
		eqErr(t, err, "step c: child failed")
		parent := readRun(t, store, id)
		done := find(parent, transcript.StepCallWorkflowCompleted, "c")[0]
		eq(t, transcript.StatusError, done.Step().Status)
		eq(t, "child failed", done.Step().Error)
		status, text := runStatus(readRun(t, store, childID))
		eq(t, transcript.StatusError, status)
		eq(t, "child failed", text)
	})
	t.Run("child panic", func(t *testing.T) {
		store := newStore(t)
		id := runid.New()
		var childID string
		panics(t, func() {
			_ = Do(context.Background(), store, RunOptions{Name: "p", RunID: id}, func(ctx context.Context, r *Step) error {
				return r.CallWorkflow(ctx, "c", func(ctx context.Context, child *Step) error {
					childID = child.Run().RunID()
					panic("deep")
				})
			})
		})
		status, text := runStatus(readRun(t, store, childID))
		eq(t, transcript.StatusError, status)
		eq(t, "panic: deep", text)
		eq(t, "panic: deep", find(readRun(t, store, id), transcript.StepCallWorkflowCompleted, "c")[0].Step().Error)
	})
	t.Run("child goexit", func(t *testing.T) {
		store := newStore(t)
		id := runid.New()
		var childID string
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = Do(context.Background(), store, RunOptions{Name: "p", RunID: id}, func(ctx context.Context, r *Step) error {
				return r.CallWorkflow(ctx, "c", func(ctx context.Context, child *Step) error {
					childID = child.Run().RunID()
					runtime.Goexit()
					return nil
				})
			})
		})
		wg.Wait()
		_, text := runStatus(readRun(t, store, childID))
		contains(t, text, "Goexit")
		readRun(t, store, id)
	})
	t.Run("retried call makes a new child per attempt", func(t *testing.T) {
		store := newStore(t)
		id := runid.New()
		var ids []string
		err := Do(context.Background(), store, RunOptions{Name: "p", RunID: id}, func(ctx context.Context, r *Step) error {
			return r.CallWorkflow(ctx, "c", func(ctx context.Context, child *Step) error {
				ids = append(ids, child.Run().RunID())
				if len(ids) == 1 {
					return errors.New("first")
				}
				return nil
			}, StepOptions{Retries: 1})
		})
		noErr(t, err)
		hasLen(t, ids, 2)
		isTrue(t, ids[0] != ids[1])
		starts := find(readRun(t, store, id), transcript.StepCallWorkflowStarted, "c")
		eq(t, ids[0], starts[0].ChildRunID)
		eq(t, ids[1], starts[1].ChildRunID)
		eq(t, 1, starts[1].Step().Attempt)
		for _, c := range ids {
			readRun(t, store, c)
		}
	})
}

func TestSubRun(t *testing.T) {
	store := newStore(t)
	id := runid.New()
	var ended, forgotten, failed *Run
	err := Do(context.Background(), store, RunOptions{Name: "p", RunID: id}, func(ctx context.Context, r *Step) error {
		return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *Step) error {
			var err error
			if ended, err = s.SubRun(ctx, "sub_ok"); err != nil {
				return err
			}
			if err := ended.Root().Step(ctx, "inside", transcript.KindOperation, nil); err != nil {
				return err
			}
			noErr(t, ended.Finish(ctx, nil))
			if failed, err = s.SubRun(ctx, "sub_bad"); err != nil {
				return err
			}
			noErr(t, failed.Finish(ctx, errors.New("sub-agent failed")))
			forgotten, err = s.SubRun(ctx, "sub_forgotten")
			return err
		})
	})
	noErr(t, err)
	parent := readRun(t, store, id)
	for _, c := range []struct {
		run    *Run
		path   string
		status string
	}{
		{ended, "agent.sub_ok", transcript.StatusOK},
		{failed, "agent.sub_bad", transcript.StatusError},
		{forgotten, "agent.sub_forgotten", transcript.StatusError},
	} {
		evs := readRun(t, store, c.run.RunID())
		for _, ev := range evs {
			eq(t, id, ev.ParentRunID)
		}
		status, _ := runStatus(evs)
		eq(t, c.status, status, c.path)
		st := find(parent, transcript.StepCallWorkflowStarted, c.path)
		done := find(parent, transcript.StepCallWorkflowCompleted, c.path)
		hasLen(t, st, 1)
		hasLen(t, done, 1)
		eq(t, c.run.RunID(), st[0].ChildRunID)
		eq(t, c.run.RunID(), done[0].ChildRunID)
		eq(t, c.status, done[0].Step().Status)
	}
	_, text := runStatus(readRun(t, store, forgotten.RunID()))
	eq(t, errParentEnded.Error(), text)
}

func TestSubRunOpenFailure(t *testing.T) {
	// A run id that the store accepts once: the child cannot be created
	// where its parent's file is, so use a store whose directory vanishes.
	store := newStore(t)
	id := runid.New()
	err := Do(context.Background(), store, RunOptions{Name: "p", RunID: id}, func(ctx context.Context, r *Step) error {
		return r.Step(ctx, "s", transcript.KindOperation, func(ctx context.Context, s *Step) error {
			s.run.store = recorder.NewStore(strings.Repeat("x", 5000)) // a path too long to create
			_, err := s.SubRun(ctx, "sub")
			isErr(t, err)
			err = s.CallWorkflow(ctx, "call", func(context.Context, *Step) error {
				t.Error("must not run")
				return nil
			})
			isErr(t, err)
			return nil
		})
	})
	noErr(t, err)
	// The links name children whose files could not be created: the
	// validator says so, and nothing else is wrong.
	for _, is := range validate(t, store, id).Errors {
		eq(t, "child_missing", is.Code, is.String())
	}
	parent := readEvents(t, store, id)
	eq(t, transcript.StatusError, find(parent, transcript.StepCallWorkflowCompleted, "s.sub")[0].Step().Status)
	eq(t, transcript.StatusError, find(parent, transcript.StepCallWorkflowCompleted, "s.call")[0].Step().Status)
}

func TestEndedStepRefusesEvents(t *testing.T) {
	var kept *Step
	evs, err := doRun(t, func(ctx context.Context, r *Step) error {
		if err := r.Step(ctx, "s", transcript.KindOperation, func(_ context.Context, s *Step) error {
			kept = s
			return nil
		}); err != nil {
			return err
		}
		errIs(t, kept.UserMessage(ctx, "late", ""), ErrEnded)
		errIs(t, kept.Step(ctx, "child", transcript.KindOperation, nil), ErrEnded)
		errIs(t, kept.SetResult(1), ErrEnded)
		_, err := kept.SubRun(ctx, "x")
		errIs(t, err, ErrEnded)
		return nil
	})
	noErr(t, err)
	hasLen(t, evs, 4)
}

// TestStepRecordBatch: a batch lands inside the step's bracket as
// consecutive seqs, stamped with the step's path; reserved types and
// ended steps are refused.
func TestStepRecordBatch(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	var kept *Step
	err := Do(ctx, store, RunOptions{Name: "batch"}, func(ctx context.Context, run *Step) error {
		return run.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *Step) error {
			kept = s
			msg := func(text string) *transcript.Event {
				return &transcript.Event{Type: transcript.MessageAssistant, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock(text)}}}
			}
			evs := []*transcript.Event{msg("a"), msg("b"), msg("c")}
			if err := s.RecordBatch(ctx, evs); err != nil {
				return err
			}
			if evs[0].Seq != 0 || evs[0].Path != "" {
				t.Error("the caller's events were modified")
			}
			if err := s.RecordBatch(ctx, []*transcript.Event{msg("d"), {Type: transcript.StepStarted}}); !errors.Is(err, ErrReservedType) {
				t.Errorf("reserved type in a batch: %v", err)
			}
			return s.RecordBatch(ctx, nil)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := kept.RecordBatch(ctx, []*transcript.Event{{Type: transcript.MessageUser, Payload: &transcript.MessagePayload{Role: "user"}}}); !errors.Is(err, ErrEnded) {
		t.Fatalf("batch after the step ended: %v", err)
	}
	runs, _ := filepath.Glob(filepath.Join(store.Root, "transcripts", "*.jsonl"))
	if len(runs) != 1 {
		t.Fatalf("transcripts %v, want one", runs)
	}
	id := strings.TrimSuffix(filepath.Base(runs[0]), ".jsonl")
	got := ""
	for _, ev := range readEvents(t, store, id) {
		got += fmt.Sprintf("%s@%s ", ev.Type, ev.Path)
	}
	if got != "run.started@ step.started@agent message.assistant@agent message.assistant@agent message.assistant@agent step.completed@agent run.completed@ " {
		t.Fatalf("events: %s", got)
	}
}

// A sub-run's title names the link step and the child run for people;
// the path keeps the segment.
func TestSubRunTitle(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	var childID, parentID string
	err := Do(ctx, store, RunOptions{Name: "parent"}, func(ctx context.Context, r *Step) error {
		parentID = r.Run().RunID()
		return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *Step) error {
			sub, err := s.SubRun(ctx, "Explore_code_toolu_1", SubRunOptions{Title: "Explore the code"})
			if err != nil {
				return err
			}
			childID = sub.RunID()
			return sub.Finish(ctx, nil)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	parent, child := readRun(t, store, parentID), readRun(t, store, childID)
	if got := child[0].Step().Name; got != "Explore the code" {
		t.Fatalf("child run name %q", got)
	}
	links := 0
	for _, ev := range parent {
		if ev.Type == transcript.StepCallWorkflowStarted || ev.Type == transcript.StepCallWorkflowCompleted {
			links++
			if ev.Path != "agent.Explore_code_toolu_1" || ev.Step().Name != "Explore the code" {
				t.Fatalf("link %s at %q named %q", ev.Type, ev.Path, ev.Step().Name)
			}
		}
	}
	if links != 2 {
		t.Fatalf("%d link events", links)
	}
}
