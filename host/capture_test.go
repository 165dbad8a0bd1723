package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

// TestCaptureReturnsInstances checks that a capture through a host plugin
// gives the instance it took back to the plugin's pool, whether the
// capture succeeded, its input failed, or its caller fed it by hand: a
// pool that leaked would hold no idle instance after each capture, and
// every capture would instantiate a new module.
func TestCaptureReturnsInstances(t *testing.T) {
	ctx := context.Background()
	wasm, err := echoWasm()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(ctx, host.Options{Bundled: []host.Bundled{}, PluginPath: []string{}, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	p, err := rt.Load(ctx, wasm, host.Source{Path: "echo.wasm"})
	if err != nil {
		t.Fatal(err)
	}
	store := recorder.NewStore(t.TempDir())
	opts := capture.Options{Provider: "echo", Store: store, Plugin: p}
	line := `{"text":"hi"}` + "\n"
	captures := []struct {
		name    string
		capture func(ctx context.Context, s *lifecycle.Step) error
		wantErr error
	}{
		{"run", func(ctx context.Context, s *lifecycle.Step) error {
			_, err := capture.Run(ctx, s, capture.Source{Stdout: strings.NewReader(line)}, opts)
			return err
		}, nil},
		{"run with a failing input", func(ctx context.Context, s *lifecycle.Step) error {
			_, err := capture.Run(ctx, s, capture.Source{Stdout: failingReader{}}, opts)
			return err
		}, capture.ErrRead},
		{"start, feed, finish", func(ctx context.Context, s *lifecycle.Step) error {
			a, err := capture.Start(ctx, s, opts)
			if err != nil {
				return err
			}
			ferr := a.Feed(ctx, []byte(line))
			res, err := a.Finish(ctx, nil)
			return errors.Join(ferr, err, capture.ResultError(res.AgentResult))
		}, nil},
	}
	for i, c := range captures {
		err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: c.name}, func(ctx context.Context, run *lifecycle.Step) error {
			return run.Step(ctx, "echo", transcript.KindAgent, c.capture)
		})
		if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
			t.Fatalf("%s: err = %v, want %v", c.name, err, c.wantErr)
		}
		if n := host.IdleInstances(p); n != 1 {
			t.Fatalf("after capture %d (%s): %d idle instances in the pool, want the one the captures share", i, c.name, n)
		}
	}
}
