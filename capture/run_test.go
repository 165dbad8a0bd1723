package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		stdout   string
		stderr   string
		exit     *int
		status   string
		agentErr bool
		silent   []int
	}{
		{name: "ok", stdout: `{"t":"text","v":"hi"}` + "\n" + `{"t":"end"}` + "\n", status: "ok"},
		{name: "no terminal event", stdout: `{"t":"text","v":"hi"}` + "\n", status: "incomplete", agentErr: true},
		{name: "no terminal event, non-zero exit", stdout: `{"t":"text","v":"hi"}` + "\n", exit: new(3), status: "error", agentErr: true},
		{name: "terminal event over exit code", stdout: `{"t":"end"}` + "\n", exit: new(1), status: "ok"},
		{name: "stderr kept", stdout: `{"t":"end"}` + "\n", stderr: "warning: x\n", status: "ok"},
		{name: "silent lines", stdout: `{"t":"quiet"}` + "\n" + `{"t":"other"}` + "\n" + `{"t":"quiet"}` + "\n" + `{"t":"end"}` + "\n", status: "ok", silent: []int{1, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := recorder.NewStore(t.TempDir())
			var r *Result
			var runID string
			src := Source{Stdout: strings.NewReader(tc.stdout), ExitCode: tc.exit}
			if tc.stderr != "" {
				src.Stderr = strings.NewReader(tc.stderr)
			}
			err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
				var err error
				runID = s.Run().RunID()
				r, err = Run(ctx, s, src, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
				if tc.agentErr {
					require.ErrorIs(t, err, ErrAgent)
					assert.Equal(t, "agent "+tc.status, strings.SplitN(err.Error(), ":", 2)[0])
				} else {
					require.NoError(t, err)
				}
				return err
			})
			assert.Equal(t, tc.agentErr, err != nil, "the step fails when the agent did: %v", err)
			require.NotNil(t, r)
			assert.Equal(t, tc.status, r.Status)
			// The step, and the run it ends, record the agent's status
			// (spec 6.7: without a terminal event it is incomplete, not
			// failed).
			path, err := store.TranscriptPath(runID)
			require.NoError(t, err)
			for _, ev := range readEvents(t, path) {
				if ev.Type == transcript.StepCompleted || ev.Type == transcript.RunCompleted {
					assert.Equal(t, tc.status, ev.Step().Status, "%s status", ev.Type)
				}
			}
			assert.Equal(t, tc.exit, r.ExitCode)
			assert.Equal(t, len(tc.silent), r.Silent)
			assert.Equal(t, tc.silent, r.SilentLines)
			if tc.stderr != "" {
				require.NotEmpty(t, r.Raw.Stderr)
				b, err := os.ReadFile(filepath.Join(store.Root, filepath.FromSlash(r.Raw.Stderr)))
				require.NoError(t, err)
				assert.Equal(t, tc.stderr, string(b))
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	store := recorder.NewStore(t.TempDir())
	err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		_, err := Run(ctx, s, Source{}, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
		return err
	})
	assert.ErrorContains(t, err, "no output")

	err = inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		r, err := Run(ctx, s, Source{Stdout: failingReader{}}, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
		require.NotNil(t, r, "the step still gets a result")
		assert.NotErrorIs(t, err, ErrAgent)
		return err
	})
	assert.ErrorIs(t, err, ErrRead)

	err = inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		_, err := Run(ctx, s, Source{Stdout: strings.NewReader("x\n"), Stderr: failingReader{}}, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
		return err
	})
	assert.ErrorContains(t, err, "read stderr")
}

// closingPlugin hands out native instances that count how they are
// closed: with a context (as host instances are) or without.
type closingPlugin struct {
	withCtx bool
	closed  int
}

func (p *closingPlugin) Identity() transcript.PluginRef { return transcript.PluginRef{Name: "closing"} }

func (p *closingPlugin) NewInstance(context.Context) (normalize.Instance, error) {
	in := normalize.NativeInstance(testPlugin)
	if p.withCtx {
		return ctxCloser{in, p}, nil
	}
	return plainCloser{in, p}, nil
}

type ctxCloser struct {
	normalize.Instance
	p *closingPlugin
}

func (c ctxCloser) Close(context.Context) error { c.p.closed++; return errors.New("pool gone") }

type plainCloser struct {
	normalize.Instance
	p *closingPlugin
}

func (c plainCloser) Close() error { c.p.closed++; return nil }

// TestInstanceClosed checks that a capture ends the instance it made,
// whichever Close it has (a host instance goes back to its pool), and
// reports a failure to close it.
func TestInstanceClosed(t *testing.T) {
	for _, withCtx := range []bool{true, false} {
		store := recorder.NewStore(t.TempDir())
		p := &closingPlugin{withCtx: withCtx}
		err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
			_, err := Run(ctx, s, Source{Stdout: strings.NewReader(`{"t":"end"}` + "\n")}, Options{Provider: "test", Store: store, Plugin: p})
			return err
		})
		assert.Equal(t, 1, p.closed, "closed once (with context: %v)", withCtx)
		if withCtx {
			assert.ErrorContains(t, err, "close plugin instance: pool gone")
		} else {
			assert.NoError(t, err)
		}
	}
}
