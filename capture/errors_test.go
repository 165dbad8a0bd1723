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
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

type failingPlugin struct{}

func (failingPlugin) Identity() transcript.PluginRef { return transcript.PluginRef{Name: "broken"} }
func (failingPlugin) NewInstance(context.Context) (normalize.Instance, error) {
	return nil, errors.New("no instance today")
}

// inStep runs fn inside an agent step of a fresh run.
func inStep(t *testing.T, store recorder.Store, fn func(ctx context.Context, s *lifecycle.Step) error) error {
	t.Helper()
	return lifecycle.Do(context.Background(), store, lifecycle.RunOptions{Name: "t"}, func(ctx context.Context, r *lifecycle.Step) error {
		return r.Step(ctx, "agent", transcript.KindAgent, fn)
	})
}

func TestCaptureMisuseAndFailures(t *testing.T) {
	store := recorder.NewStore(t.TempDir())
	t.Run("no plugin", func(t *testing.T) {
		err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
			_, err := Start(ctx, s, Options{Store: store})
			return err
		})
		assert.ErrorContains(t, err, "no plugin")
	})
	t.Run("instance fails", func(t *testing.T) {
		var raw string
		err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
			raw = filepath.Join(store.Root, "raw", s.Run().RunID())
			_, err := Start(ctx, s, Options{Store: store, Plugin: failingPlugin{}})
			return err
		})
		assert.ErrorContains(t, err, "no instance today")
		left, _ := os.ReadDir(raw)
		assert.Empty(t, left, "no empty raw capture is left behind")
	})
	t.Run("feed and finish after finish", func(t *testing.T) {
		err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
			a, err := Start(ctx, s, Options{Store: store, Plugin: NativePlugin(testPlugin)})
			require.NoError(t, err)
			require.NoError(t, a.FeedStderr(nil))
			require.NoError(t, a.FeedStderr([]byte("plain stderr\n")))
			res, err := a.Finish(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, transcript.StatusIncomplete, res.Status, "no terminal event")
			assert.NotEmpty(t, res.Raw.Stderr)
			assert.Equal(t, "native", res.Plugin.SHA256)
			assert.ErrorContains(t, a.Feed(ctx, []byte("x\n")), "after finish")
			_, err = a.Finish(ctx, nil)
			assert.ErrorContains(t, err, "twice")
			errBytes, err := os.ReadFile(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Stderr)))
			require.NoError(t, err)
			assert.Equal(t, "plain stderr\n", string(errBytes))
			return nil
		})
		require.NoError(t, err)
	})
	t.Run("raw dir not writable", func(t *testing.T) {
		if os.Getuid() == 0 {
			// root ignores permissions: block the directory with a file.
			bad := recorder.NewStore(t.TempDir())
			require.NoError(t, os.WriteFile(filepath.Join(bad.Root, "raw"), []byte("not a dir"), 0o600))
			err := lifecycle.Do(context.Background(), bad, lifecycle.RunOptions{Name: "t"}, func(ctx context.Context, r *lifecycle.Step) error {
				return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					_, err := Start(ctx, s, Options{Store: bad, Plugin: NativePlugin(testPlugin)})
					return err
				})
			})
			assert.ErrorContains(t, err, "raw dir")
		}
	})
}

// TestStatusErr: a sub-agent's child run ends with the status the plugin
// or the host gave its scope (lifecycle reads it from the error's Status
// method), and with a reason.
func TestStatusErr(t *testing.T) {
	assert.NoError(t, statusErr(transcript.StatusOK, ""))
	for _, tc := range []struct{ status, text, wantStatus, wantText string }{
		{transcript.StatusIncomplete, "", transcript.StatusIncomplete, "sub-agent output ended without a result"},
		{transcript.StatusIncomplete, "cut", transcript.StatusIncomplete, "cut"},
		{transcript.StatusCancelled, "", transcript.StatusCancelled, "sub-agent cancelled"},
		{transcript.StatusError, "", transcript.StatusError, "error"},
		{transcript.StatusError, "boom", transcript.StatusError, "boom"},
	} {
		err := statusErr(tc.status, tc.text)
		assert.EqualError(t, err, tc.wantText)
		var se interface{ Status() string }
		require.ErrorAs(t, err, &se)
		assert.Equal(t, tc.wantStatus, se.Status())
	}
}

func TestUniqueNames(t *testing.T) {
	s := &sink{names: map[string]bool{}}
	a := s.uniqueName(normalize.Scope{Name: "Explore agent", ParentToolID: "toolu_1"})
	b := s.uniqueName(normalize.Scope{Name: "Explore agent", ParentToolID: "toolu_1"})
	c := s.uniqueName(normalize.Scope{})
	assert.Equal(t, "Explore_agent_toolu_1", a)
	assert.Equal(t, "Explore_agent_toolu_1_2", b)
	assert.Equal(t, "subagent", c)
	long := s.uniqueName(normalize.Scope{Name: string(make([]byte, 200))})
	assert.LessOrEqual(t, len(long), 80)
}

func TestSinkDirect(t *testing.T) {
	store := recorder.NewStore(t.TempDir())
	var child string
	err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		k := &sink{step: s, subs: map[string]*lifecycle.Run{}, names: map[string]bool{}}
		ev := &transcript.Event{Type: transcript.MessageAssistant, Payload: &transcript.MessagePayload{
			Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock("in a scope nobody opened")}}}
		// A scope the assembler did not open is opened on first use.
		require.NoError(t, k.Emit(ctx, "agent-x", []*transcript.Event{ev}))
		require.Len(t, k.subs, 1)
		require.NoError(t, k.OpenScope(ctx, normalize.Scope{ID: "agent-x"}), "opening twice is a no-op")
		require.NoError(t, k.CloseScope(ctx, "unknown", "ok", ""), "closing an unknown scope is a no-op")
		// Scopes still open when the step ends are ended as incomplete.
		child = k.subs["agent-x"].RunID()
		require.NoError(t, k.closeAll(ctx))
		require.Empty(t, k.subs)
		return nil
	})
	require.NoError(t, err)
	path, err := store.TranscriptPath(child)
	require.NoError(t, err)
	evs := readEvents(t, path)
	end := evs[len(evs)-1]
	require.Equal(t, transcript.RunCompleted, end.Type)
	assert.Equal(t, transcript.StatusIncomplete, end.Step().Status)
	assert.Equal(t, "sub-agent output ended without a result", end.Step().Error)
}

func TestMaskedTailWithoutNewline(t *testing.T) {
	store := recorder.NewStore(t.TempDir())
	m := &upperMasker{}
	err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		a, err := Start(ctx, s, Options{Store: store, Plugin: NativePlugin(testPlugin), Mask: m.MaskBytes, Masked: m.Counts})
		require.NoError(t, err)
		require.NoError(t, a.Feed(ctx, []byte(`{"t":"text","v":"last sk-secret"}`)))
		require.NoError(t, a.FeedStderr([]byte("no newline sk-secret")))
		res, err := a.Finish(ctx, new(1))
		require.NoError(t, err)
		raw, err := rawfile.ReadFile(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Path)))
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "sk-secret")
		stderr, err := os.ReadFile(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Stderr)))
		require.NoError(t, err)
		assert.Equal(t, "no newline [REDACTED:key]", string(stderr))
		assert.Equal(t, 1, *res.ExitCode)
		return nil
	})
	require.NoError(t, err)
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

func TestReadFrom(t *testing.T) {
	store := recorder.NewStore(t.TempDir())
	err := inStep(t, store, func(ctx context.Context, s *lifecycle.Step) error {
		a, err := Start(ctx, s, Options{Store: store, Plugin: NativePlugin(testPlugin)})
		require.NoError(t, err)
		require.NoError(t, a.readFrom(ctx, strings.NewReader(`{"t":"text","v":"via reader"}`+"\n")))
		assert.ErrorIs(t, a.readFrom(ctx, failingReader{}), ErrRead)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		assert.ErrorIs(t, a.readFrom(cctx, strings.NewReader("x\n")), context.Canceled)
		res, err := a.Finish(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(len(`{"t":"text","v":"via reader"}`)+1), res.Raw.Bytes)
		return nil
	})
	require.NoError(t, err)
}

// TestRawDir: a run's raw captures go to <root>/raw/<run-id>/, created
// 0700 with its parents; an id that is not a canonical UUID v4 never
// becomes a path.
func TestRawDir(t *testing.T) {
	store := recorder.NewStore(filepath.Join(t.TempDir(), "storage"))
	id := "8f14e45f-ceea-467a-9575-3d8b4ee3a2b1"
	dir, err := rawDir(store, id, nil)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(store.Root, "raw", id), dir)
	for _, p := range []string{filepath.Join(store.Root, "raw"), dir} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, 0o700|os.ModeDir, fi.Mode(), p)
	}
	for _, bad := range []string{"", "../etc", "8F14E45F-CEEA-467A-9575-3D8B4EE3A2B1"} {
		_, err := rawDir(store, bad, nil)
		assert.ErrorIs(t, err, recorder.ErrInvalidRunID, bad)
	}
}
