package tail

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func opts(env *cmdtest.Env, run string) *Options {
	return &Options{IO: env.IO, Resolve: env.F.ResolveRun, Logger: env.F.Logger, Run: run, Lines: -1, Interval: 5 * time.Millisecond}
}

func TestNewCmdTail(t *testing.T) {
	env := cmdtest.New(t)
	var got *Options
	if err := cmdtest.Parse(NewCmdTail(env.F, func(_ context.Context, o *Options) error { got = o; return nil }), "-f --json -n 3 --interval 1s r.jsonl"); err != nil {
		t.Fatal(err)
	}
	if !got.Follow || !got.JSON || got.Lines != 3 || got.Interval != time.Second || got.Run != "r.jsonl" {
		t.Fatalf("got %+v", got)
	}
	if err := cmdtest.Parse(NewCmdTail(env.F, nil), "--interval 0s r.jsonl"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("err = %v", err)
	}
}

func TestRunTail(t *testing.T) {
	tests := []struct {
		name  string
		run   string
		json  bool
		lines int
		code  int
		want  []string
		lack  []string
		count int // stdout lines
	}{
		{"compact", viewstest.Root, false, -1, 0, []string{
			"#1 run  run.started  \"review-wf\" twasm 0.1.0", "#5 review  tool.call  Bash $ ls -la id=c1",
			"#8 review  agent.heartbeat  (unknown type)", "#13 run  run.completed  ok"}, nil, 13},
		{"raw json", viewstest.Child, true, -1, 0, []string{`{"seq":1,"run_id":"` + viewstest.Child}, nil, 7},
		{"last two", viewstest.Root, false, 2, 0, []string{"#12 delegate", "#13 run"}, []string{"#11"}, 2},
		{"none", viewstest.Root, false, 0, 0, nil, nil, 0},
		{"missing", viewstest.Other, false, -1, cmdutil.ExitUsage, nil, nil, 0},
		{"bad id", "x", false, -1, cmdutil.ExitUsage, nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			o := opts(env, tc.run)
			o.JSON, o.Lines = tc.json, tc.lines
			err := runTail(context.Background(), o)
			if cmdutil.ExitCode(err) != tc.code {
				t.Fatalf("err = %v", err)
			}
			out := env.Out.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q", w)
				}
			}
			if n := strings.Count(out, "\n"); n != tc.count {
				t.Errorf("%d lines, want %d:\n%s", n, tc.count, out)
			}
			if tc.name == "compact" && !strings.Contains(env.ErrOut.String(), "not a transcript event") {
				t.Errorf("malformed line not reported on stderr: %q", env.ErrOut)
			}
		})
	}
}

func TestRunTailTornTailWithoutFollow(t *testing.T) {
	env := cmdtest.New(t)
	b := viewstest.ChildRun(t)
	p := filepath.Join(t.TempDir(), "run.jsonl")
	data := append(b.Line(t, 0), b.Line(t, 1)[:10]...)
	viewstest.WriteFile(t, p, data)
	if err := runTail(context.Background(), opts(env, p)); err != nil {
		t.Fatal(err)
	}
	if strings.Count(env.Out.String(), "\n") != 1 || !strings.Contains(env.ErrOut.String(), "incomplete") {
		t.Fatalf("stdout %q stderr %q", env.Out, env.ErrOut)
	}
}

// TestRunTailFollow follows a transcript that another goroutine writes,
// with a torn line completed later and a torn line repaired (cut and
// rewritten) as the recorder does, until run.completed.
func TestRunTailFollow(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(map[bool]string{false: "compact", true: "json"}[raw], func(t *testing.T) {
			env := cmdtest.New(t)
			b := viewstest.ChildRun(t)
			p := filepath.Join(t.TempDir(), viewstest.Child+".jsonl")
			// Bounds a follow that never ends, however busy the machine
			// (the writer's steps alone take a second under load).
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				step := func(f func() error) bool {
					time.Sleep(20 * time.Millisecond)
					if err := f(); err != nil {
						t.Error(err)
						return false
					}
					return true
				}
				app := func(data []byte) func() error {
					return func() error {
						fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
						if err != nil {
							return err
						}
						defer fh.Close()
						_, err = fh.Write(data)
						return err
					}
				}
				l := func(i int) []byte { return b.Line(t, i) }
				ok := step(app(l(0))) &&
					step(app(l(1)[:7])) && step(app(l(1)[7:])) && // torn, completed later
					step(app([]byte(`{"seq":3,"run_id":"tor`))) && // torn, then repaired
					step(func() error {
						st, err := os.Stat(p)
						if err != nil {
							return err
						}
						return os.Truncate(p, st.Size()-22)
					})
				for i := 2; ok && i < b.Len(); i++ {
					ok = step(app(l(i)))
				}
				// Lines after run.completed are not waited for.
			}()
			o := opts(env, p)
			o.Follow, o.JSON = true, raw
			err := runTail(ctx, o)
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			out := env.Out.String()
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != b.Len() {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), b.Len(), out)
			}
			for i, line := range lines {
				if raw {
					ev, err := transcript.DecodeEvent([]byte(line))
					if err != nil || ev.Seq != uint64(i+1) {
						t.Fatalf("line %d: %v %q", i, err, line)
					}
				} else if !strings.HasPrefix(line, "#"+strconv.Itoa(i+1)+" ") {
					t.Fatalf("line %d: %q", i, line)
				}
			}
			if strings.Contains(out, "tor") && !raw {
				t.Fatalf("a torn line leaked: %s", out)
			}
		})
	}
}

func TestRunTailFollowCancelled(t *testing.T) {
	env := cmdtest.New(t)
	o := opts(env, filepath.Join(t.TempDir(), viewstest.Other+".jsonl"))
	o.Follow = true
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	err := runTail(ctx, o)
	if !errors.Is(err, context.Canceled) || cmdutil.ExitCode(err) != cmdutil.ExitCancelled {
		t.Fatalf("err = %v", err)
	}
}

// tail -f of an archived session that is open (no run.completed: the
// session may grow) says what it waits for: more of the session found by
// sync; a run being recorded says nothing of the kind.
func TestRunTailFollowArchivedSession(t *testing.T) {
	const id = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	for _, archived := range []bool{true, false} {
		t.Run(map[bool]string{true: "archived", false: "recorded"}[archived], func(t *testing.T) {
			env := cmdtest.New(t)
			started := viewstest.Started("claude session")
			if archived {
				started.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{
					"source": json.RawMessage(`{"provider":"claude","path":"/home/me/.claude/projects/p/a.jsonl","head":"abc"}`)}
			}
			b := viewstest.NewBuilder(id, "").Add(started).
				Add(viewstest.Step(transcript.StepStarted, "part-1", 0, &transcript.StepPayload{Name: "part-1", Kind: transcript.KindAgent})).
				Add(viewstest.Step(transcript.StepCompleted, "part-1", 0, &transcript.StepPayload{Name: "part-1", Kind: transcript.KindAgent, Status: transcript.StatusOK}))
			p := filepath.Join(t.TempDir(), id+".jsonl")
			viewstest.WriteFile(t, p, b.Bytes(t))
			o := opts(env, p)
			o.Follow = true
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the note comes before the follow waits
			if err := runTail(ctx, o); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			note := "twasm: " + id + " is an archived session (claude /home/me/.claude/projects/p/a.jsonl): it grows when `twasm sync`"
			if got := strings.Contains(env.ErrOut.String(), note); got != archived {
				t.Fatalf("note shown %v, want %v: %q", got, archived, env.ErrOut)
			}
		})
	}
}
