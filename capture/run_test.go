package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/rawfile"
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

// batchSizes is the test plugin with every batch the stream sends it
// counted by size.
type batchSizes struct{ sizes []int }

func (p *batchSizes) Identity() transcript.PluginRef { return transcript.PluginRef{Name: "test"} }

func (p *batchSizes) NewInstance(context.Context) (normalize.Instance, error) {
	return sizedInstance{normalize.NativeInstance(testPlugin), p}, nil
}

type sizedInstance struct {
	normalize.Instance
	p *batchSizes
}

func (s sizedInstance) Feed(ctx context.Context, batch []byte) ([]byte, error) {
	s.p.sizes = append(s.p.sizes, len(batch))
	return s.Instance.Feed(ctx, batch)
}

// TestRunReadsFrames: Run reads a file a frame at a time, so its raw
// capture holds frames of rawfile.FrameBytes (the file a writer fed
// whole frames makes), smaller than frames of 256 KiB, while the plugin
// is sent the batches that reads of 256 KiB gave it before, and the
// transcript holds the same events. Feed is not re-cut.
func TestRunReadsFrames(t *testing.T) {
	in := bytes.NewBuffer(framesInput())
	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, in.Bytes(), 0o600))

	record := func(feed func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error)) recorded {
		return recordInput(t, in.Bytes(), nil, feed)
	}
	read := record(func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error) {
		f, err := os.Open(input)
		require.NoError(t, err)
		defer f.Close()
		return Run(ctx, s, Source{Stdout: f}, opts)
	})
	fed := record(func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error) {
		a, err := Start(ctx, s, opts)
		require.NoError(t, err)
		require.NoError(t, feedPieces(ctx, a, in.Bytes(), false))
		return a.Finish(ctx, nil)
	})
	assert.Equal(t, fed.batches, read.batches, "the batches of 256 KiB reads")
	// Feed (the archive's, a live agent's) hands the stream what it is
	// given: fed whole, the input makes other batches.
	whole := record(func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error) {
		a, err := Start(ctx, s, opts)
		require.NoError(t, err)
		require.NoError(t, a.Feed(ctx, in.Bytes()))
		return a.Finish(ctx, nil)
	})
	assert.NotEqual(t, fed.batches, whole.batches, "Feed re-cut into 256 KiB pieces")
	assert.Equal(t, fed.types, whole.types, "the same events")
	assert.Equal(t, fed.types, read.types, "the same events")
	assert.Greater(t, len(read.types), 1000)

	want := wholeFrames(t, in.Bytes())
	assert.True(t, bytes.Equal(want, read.raw), "raw capture of %d bytes, not the %d of frames of a MiB", len(read.raw), len(want))
	assert.Less(t, len(read.raw), len(fed.raw), "frames of a MiB take less than frames of 256 KiB")
}

// recorded is what a step that captured an input left: the batches the
// plugin was sent (their sizes), the raw capture's file and the types of
// the transcript's events.
type recorded struct {
	batches []int
	raw     []byte
	types   []transcript.EventType
}

// recordInput runs feed in a step of a new storage (mask, when set,
// masks the input) and checks that the raw capture holds in.
func recordInput(t *testing.T, in []byte, mask func([]byte) []byte, feed func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error)) recorded {
	t.Helper()
	store := recorder.NewStore(t.TempDir())
	p := &batchSizes{}
	var res *Result
	var runID string
	require.NoError(t, inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		runID = s.Run().RunID()
		var err error
		res, err = feed(ctx, s, Options{Provider: "test", Store: store, Plugin: p, Mask: mask})
		return err
	}))
	rawPath := filepath.Join(store.Root, filepath.FromSlash(res.Raw.Path))
	back, err := rawfile.ReadFile(rawPath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(in, back), "the raw capture holds the input")
	raw, err := os.ReadFile(rawPath)
	require.NoError(t, err)
	path, err := store.TranscriptPath(runID)
	require.NoError(t, err)
	var types []transcript.EventType
	for _, ev := range readEvents(t, path) {
		types = append(types, ev.Type)
	}
	return recorded{p.sizes, raw, types}
}

// framesInput is 2.3 MiB of the test plugin's lines.
func framesInput() []byte {
	var in bytes.Buffer
	for i := 0; in.Len() < 2*rawfile.FrameBytes+rawfile.FrameBytes/3; i++ {
		fmt.Fprintf(&in, `{"t":"text","v":"%d %s"}`+"\n", i, strings.Repeat(strconv.Itoa(i*7919), 300))
	}
	in.WriteString(`{"t":"end"}` + "\n")
	return in.Bytes()
}

// wholeFrames is the framed raw capture of in written at once: frames of
// rawfile.FrameBytes.
func wholeFrames(t *testing.T, in []byte) []byte {
	t.Helper()
	frames := filepath.Join(t.TempDir(), "frames.raw.zst")
	w, err := rawfile.Create(frames)
	require.NoError(t, err)
	_, err = w.Write(in)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	want, err := os.ReadFile(frames)
	require.NoError(t, err)
	return want
}

// feedPieces feeds in to a 256 KiB at a time, each frame's bytes
// written first with Ahead when ahead is set.
func feedPieces(ctx context.Context, a *Agent, in []byte, ahead bool) error {
	for f := 0; f < len(in); f += rawfile.FrameBytes {
		frame := in[f:min(len(in), f+rawfile.FrameBytes)]
		if ahead {
			if err := a.Ahead(frame); err != nil {
				return err
			}
		}
		for b := frame; len(b) > 0; b = b[min(len(b), 256<<10):] {
			if err := a.Feed(ctx, b[:min(len(b), 256<<10)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestAheadWholeFrames: a caller that writes each frame it reads with
// Ahead and feeds it 256 KiB at a time (the archive) gets the raw capture
// of whole frames, as Run's, smaller than the one Feed alone makes (a
// frame per piece: the events of a piece flush it), and the plugin the
// batches and the events of Feed alone. With a Mask, Ahead writes
// nothing: Feed writes each line as masked.
func TestAheadWholeFrames(t *testing.T) {
	in := framesInput()
	run := func(ahead bool, mask func([]byte) []byte) recorded {
		return recordInput(t, in, mask, func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error) {
			a, err := Start(ctx, s, opts)
			require.NoError(t, err)
			require.NoError(t, feedPieces(ctx, a, in, ahead))
			return a.Finish(ctx, nil)
		})
	}
	fed, ahead := run(false, nil), run(true, nil)
	assert.Equal(t, fed.batches, ahead.batches, "the batches of the pieces")
	assert.Equal(t, fed.types, ahead.types, "the same events")
	assert.Greater(t, len(ahead.types), 1000)
	want := wholeFrames(t, in)
	assert.True(t, bytes.Equal(want, ahead.raw), "raw capture of %d bytes, not the %d of whole frames", len(ahead.raw), len(want))
	assert.Less(t, len(ahead.raw), len(fed.raw), "whole frames take less than a frame per piece")

	same := func(b []byte) []byte { return b }
	masked, maskedAhead := run(false, same), run(true, same)
	assert.Equal(t, masked.raw, maskedAhead.raw, "with a Mask, Ahead writes nothing")
	assert.Equal(t, masked.types, maskedAhead.types)
}

// TestRunSmallFileSmallBuffer: Run reads a file smaller than a frame into
// a buffer of its size, not a frame's: a record of a few lines allocated
// a MiB (about 300 page faults and 2 ms of CPU of a record of the bundled
// example's 8 lines).
func TestRunSmallFileSmallBuffer(t *testing.T) {
	in := []byte(`{"t":"text","v":"hello"}` + "\n" + `{"t":"end"}` + "\n")
	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, in, 0o600))
	var allocated uint64
	recordInput(t, in, nil, func(ctx context.Context, s *lifecycle.Step, opts Options) (*Result, error) {
		f, err := os.Open(input)
		require.NoError(t, err)
		defer f.Close()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(ctx, s, Source{Stdout: f}, opts)
		runtime.ReadMemStats(&after)
		allocated = after.TotalAlloc - before.TotalAlloc
		return res, err
	})
	t.Logf("Run of %d bytes allocated %d bytes", len(in), allocated)
	assert.Less(t, allocated, uint64(rawfile.FrameBytes/2), "Run of a %d-byte file allocated %d bytes", len(in), allocated)
}

// TestRunLastReadNotCopied: Run writes the last read of a file, shorter
// than a frame, as a frame encoded from the read itself, as it does each
// whole frame: besides the read buffer (a frame) and the stream's batch
// buffer (grown to the 256 KiB batch limit, about a MiB allocated on the
// way), nothing the size of that read (0.75 of a frame) is allocated for
// it. The plugin reports nothing, so that the allocations are the
// capture's own; a first Run sets up the zstd encoder, which a process
// does once.
func TestRunLastReadNotCopied(t *testing.T) {
	var in bytes.Buffer
	for i := 0; in.Len() < rawfile.FrameBytes+rawfile.FrameBytes*3/4; i++ {
		fmt.Fprintf(&in, `{"t":"text","v":"%d %s"}`+"\n", i, strings.Repeat(strconv.Itoa(i*7919), 3000))
	}
	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, in.Bytes(), 0o600))
	store := recorder.NewStore(t.TempDir())
	run := func() uint64 {
		var allocated uint64
		var res *Result
		err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
			f, err := os.Open(input)
			require.NoError(t, err)
			defer f.Close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err = Run(ctx, s, Source{Stdout: f}, Options{Provider: "test", Store: store, Plugin: silentPlugin{}})
			runtime.ReadMemStats(&after)
			allocated = after.TotalAlloc - before.TotalAlloc
			return err
		})
		require.ErrorIs(t, err, ErrAgent, "nothing reported: incomplete")
		back, err := rawfile.ReadFile(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Path)))
		require.NoError(t, err)
		require.True(t, bytes.Equal(in.Bytes(), back), "the raw capture holds the input")
		return allocated
	}
	run()
	allocated := run()
	t.Logf("Run of %d bytes allocated %d bytes", in.Len(), allocated)
	assert.Less(t, allocated, uint64(2*rawfile.FrameBytes+rawfile.FrameBytes/4), "Run of %d bytes allocated %d bytes", in.Len(), allocated)
}

// silentPlugin's instances report nothing about any line.
type silentPlugin struct{}

func (silentPlugin) Identity() transcript.PluginRef { return transcript.PluginRef{Name: "silent"} }

func (silentPlugin) NewInstance(context.Context) (normalize.Instance, error) {
	return silentInstance{normalize.NativeInstance(testPlugin)}, nil
}

type silentInstance struct{ normalize.Instance }

func (silentInstance) Feed(context.Context, []byte) ([]byte, error) { return nil, nil }
