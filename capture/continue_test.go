package capture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// A session that grew is captured as a second step of the same run that
// extends the first step's raw capture; the replayed part restores the
// plugin's state and writes nothing. A capture stays of its kind: a
// framed one grows by frames, an older twasm's plain one plainly.
func TestContinueRawAndReplay(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(map[bool]string{false: "framed", true: "plain"}[plain], func(t *testing.T) { testContinueRaw(t, plain) })
	}
}

func testContinueRaw(t *testing.T, plain bool) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	part1 := `{"t":"text","v":"one"}` + "\n" + `{"t":"sub","id":"toolu_1","v":"inside"}` + "\n"
	part2 := `{"t":"text","v":"two sk-secret"}` + "\n" + `{"t":"end"}` + "\n"
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "session"})
	require.NoError(t, err)
	var first, second *Result
	var replayed []string // the texts of the messages Options.Replayed saw
	require.NoError(t, run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		a, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
		require.NoError(t, err)
		require.NoError(t, a.Feed(ctx, []byte(part1)))
		first, err = a.Finish(ctx, nil)
		return err
	}))
	if plain {
		// The capture as an older twasm wrote it: the bytes as they came.
		p := filepath.Join(store.Root, filepath.FromSlash(first.Raw.Path))
		b, err := rawfile.ReadFile(p)
		require.NoError(t, err)
		first.Raw.Path = strings.TrimSuffix(first.Raw.Path, rawfile.Ext)
		require.NoError(t, os.WriteFile(strings.TrimSuffix(p, rawfile.Ext), b, 0o600))
	}
	require.True(t, strings.HasSuffix(first.Raw.Path, ".raw"+map[bool]string{false: rawfile.Ext}[plain]), first.Raw.Path)
	require.NoError(t, run.StepAt(ctx, "agent", 1, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		m := &upperMasker{}
		a, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin), ContinueRaw: first.Raw.Path, Mask: m.MaskBytes, Masked: m.Counts,
			Replayed: func(ev *transcript.Event) {
				if msg := ev.Message(); msg != nil && len(msg.Blocks) > 0 {
					replayed = append(replayed, msg.Blocks[0].Text)
				}
			}})
		require.NoError(t, err)
		require.NoError(t, a.Replay(ctx, strings.NewReader(part1), (&upperMasker{}).MaskBytes))
		require.NoError(t, a.Feed(ctx, []byte(part2)))
		require.Error(t, a.Replay(ctx, strings.NewReader(part1), nil), "replay after feed")
		second, err = a.Finish(ctx, nil)
		return err
	}))
	require.NoError(t, run.Finish(ctx, nil))

	assert.Equal(t, first.Raw.Path, second.Raw.Path)
	raw, err := rawfile.ReadFile(filepath.Join(store.Root, filepath.FromSlash(second.Raw.Path)))
	require.NoError(t, err)
	want := part1 + strings.ReplaceAll(part2, "sk-secret", "[REDACTED:key]")
	assert.Equal(t, want, string(raw))
	if plain {
		onDisk, err := os.ReadFile(filepath.Join(store.Root, filepath.FromSlash(second.Raw.Path)))
		require.NoError(t, err)
		assert.Equal(t, want, string(onDisk), "a plain capture is extended plainly")
	}
	sum := sha256.Sum256(raw)
	assert.Equal(t, hex.EncodeToString(sum[:]), second.Raw.SHA256)
	assert.Equal(t, int64(len(want)), second.Raw.Bytes)
	assert.Equal(t, 1, second.Redacted["key"])
	assert.Equal(t, transcript.StatusOK, second.Status)

	evs := readEvents(t, run.Recorder().Path())
	var texts []string
	links := 0
	for _, ev := range evs {
		if m := ev.Message(); m != nil && ev.Type == transcript.MessageAssistant {
			texts = append(texts, m.Blocks[0].Text)
		}
		if ev.Type == transcript.StepCallWorkflowStarted {
			links++
		}
	}
	assert.Equal(t, []string{"one", "two [REDACTED:key]"}, texts, "the replayed part is not written again")
	assert.Equal(t, []string{"one", "list the files", "inside"}, replayed, "Replayed sees what the replay made, the sub-agent's too, and nothing fed after it")
	assert.Equal(t, 1, links, "the sub-agent of part 1 is not opened again")
}

// A framed capture whose last frame a crash cut short is not extended:
// the step fails saying so (the archive cuts it back first), and the
// capture is left as it was.
func TestContinueRawRefusesTornCapture(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "session"})
	require.NoError(t, err)
	var first *Result
	require.NoError(t, run.StepAt(ctx, "agent", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		a, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
		require.NoError(t, err)
		require.NoError(t, a.Feed(ctx, []byte(`{"t":"text","v":"one"}`+"\n")))
		first, err = a.Finish(ctx, nil)
		return err
	}))
	p := filepath.Join(store.Root, filepath.FromSlash(first.Raw.Path))
	w, err := rawfile.Append(p)
	require.NoError(t, err)
	_, err = w.Write([]byte(`{"t":"text","v":"two"}` + "\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(p, st.Size()-3))
	err = run.StepAt(ctx, "agent", 1, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		_, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin), ContinueRaw: first.Raw.Path})
		return err
	})
	require.ErrorIs(t, err, rawfile.ErrTorn)
	st2, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, st.Size()-3, st2.Size())
}

func TestContinueRawRefusesAnotherRun(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	for _, rel := range []string{"raw/0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a/agent.0.0.x.raw", "../etc/passwd", "raw/nosuch.raw"} {
		err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "x"}, func(ctx context.Context, r *lifecycle.Step) error {
			return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				_, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin), ContinueRaw: rel})
				return err
			})
		})
		require.Error(t, err, rel)
		assert.Contains(t, err.Error(), "raw capture", rel)
	}
}
