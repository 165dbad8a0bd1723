package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testNormalizer understands {"t":"text","v":...}, {"t":"sub","id":...,"v":...}
// (a message inside a sub-agent scope) and {"t":"end"}.
type testNormalizer struct{ scopes map[string]bool }

func (n *testNormalizer) Line(l *sdk.Line, out *sdk.Out) error {
	root := l.JSON()
	switch t := root.Get("t"); {
	case t.Is("text"):
		k := sdk.S("m" + strings.Repeat("x", l.No))
		out.Open(k, sdk.Message{})
		out.Block(k, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(root.Get("v"))})
		out.Close(k, sdk.MessageEnd{})
	case t.Is("sub"):
		id := root.Get("id").String()
		if !n.scopes[id] {
			n.scopes[id] = true
			out.ScopeOpen(sdk.S(id), sdk.S(id), sdk.S("Explore"), sdk.S("look around"))
			// The plugin reports the sub-agent's prompt; the
			// description only names the child run.
			p := sdk.S("p" + strings.Repeat("x", l.No))
			out.Open(p, sdk.Message{User: true, Scope: sdk.S(id)})
			out.Block(p, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.S("list the files"), Origin: sdk.OriginPrompt})
			out.Close(p, sdk.MessageEnd{})
		}
		k := sdk.S("s" + strings.Repeat("x", l.No))
		out.Open(k, sdk.Message{Scope: sdk.S(id)})
		out.Block(k, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(root.Get("v"))})
		out.Close(k, sdk.MessageEnd{})
	case t.Is("end"):
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	case t.Is("quiet"):
		// Says nothing: a silent line (spec 6.8).
	default:
		out.Unmapped(sdk.S("other"))
	}
	return nil
}

func (n *testNormalizer) End(*sdk.Out) error { return nil }

var testPlugin = sdk.Plugin{
	Manifest: abi.Manifest{Name: "test", Version: "1.0.0", Providers: []string{"test"}},
	New:      func(abi.BeginOptions) sdk.Normalizer { return &testNormalizer{scopes: map[string]bool{}} },
}

type upperMasker struct{ n int }

func (m *upperMasker) MaskBytes(line []byte) []byte {
	if bytes.Contains(line, []byte("sk-secret")) {
		m.n++
		return bytes.ReplaceAll(line, []byte("sk-secret"), []byte("[REDACTED:key]"))
	}
	return line
}
func (m *upperMasker) Counts() map[string]int { return map[string]int{"key": m.n} }

func readEvents(t *testing.T, path string) []*transcript.Event {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	evs, warns, err := transcript.ReadAll(f)
	require.NoError(t, err)
	require.Empty(t, warns)
	return evs
}

func TestCapture(t *testing.T) {
	tests := []struct {
		name     string
		chunks   []string
		masker   *upperMasker
		stderr   string
		status   string
		wantText []string
		subs     int
	}{
		{name: "plain", chunks: []string{`{"t":"text","v":"hello"}` + "\n" + `{"t":"end"}` + "\n"}, status: "ok", wantText: []string{"hello"}},
		{name: "chunked and cut", chunks: []string{`{"t":"te`, `xt","v":"a"}`, "\n{\"t\":\"text\",\"v\":\"b\"}\n{\"t\":"}, status: "incomplete", wantText: []string{"a", "b"}},
		{name: "masked across chunks", chunks: []string{`{"t":"text","v":"key sk-se`, `cret here"}` + "\n" + `{"t":"end"}`}, masker: &upperMasker{}, stderr: "err sk-secret\n", status: "ok", wantText: []string{"key [REDACTED:key] here"}},
		{name: "sub-agent", chunks: []string{`{"t":"sub","id":"toolu_1","v":"inside"}` + "\n" + `{"t":"text","v":"outside"}` + "\n" + `{"t":"end"}` + "\n"}, status: "ok", wantText: []string{"outside"}, subs: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			var res *Result
			var runID string
			opts := Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)}
			if tc.masker != nil {
				opts.Mask, opts.Masked = tc.masker.MaskBytes, tc.masker.Counts
			}
			err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap"}, func(ctx context.Context, r *lifecycle.Step) error {
				runID = r.Run().RunID()
				return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					a, err := Start(ctx, s, opts)
					if err != nil {
						return err
					}
					for _, c := range tc.chunks {
						require.NoError(t, a.Feed(ctx, []byte(c)))
					}
					require.NoError(t, a.FeedStderr([]byte(tc.stderr)))
					res, err = a.Finish(ctx, new(0))
					return err
				})
			})
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Status)
			require.NotNil(t, res.Raw)
			raw, err := rawfile.ReadFile(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Path)))
			require.NoError(t, err)
			sum := sha256.Sum256(raw)
			assert.Equal(t, hex.EncodeToString(sum[:]), res.Raw.SHA256)
			assert.Equal(t, int64(len(raw)), res.Raw.Bytes)
			st, err := os.Stat(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Path)))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			if tc.masker != nil {
				assert.NotContains(t, string(raw), "sk-secret")
				assert.Equal(t, 2, res.Redacted["key"])
				errRaw, err := os.ReadFile(filepath.Join(store.Root, filepath.FromSlash(res.Raw.Stderr)))
				require.NoError(t, err)
				assert.Equal(t, "err [REDACTED:key]\n", string(errRaw))
			} else {
				assert.Equal(t, strings.Join(tc.chunks, ""), string(raw))
			}
			path, _ := store.TranscriptPath(runID)
			evs := readEvents(t, path)
			var texts []string
			var children []string
			for _, ev := range evs {
				if m := ev.Message(); m != nil && ev.Type == transcript.MessageAssistant {
					assert.Equal(t, "agent", ev.Path)
					texts = append(texts, m.Blocks[0].Text)
				}
				if ev.Type == transcript.StepCallWorkflowStarted {
					children = append(children, ev.ChildRunID)
				}
				if ev.Type == transcript.StepCompleted && ev.Path == "agent" {
					r, err := ev.Step().AgentResult()
					require.NoError(t, err)
					assert.Equal(t, tc.status, r.Status)
					assert.Equal(t, "test", r.Plugin.Name)
				}
			}
			assert.Equal(t, tc.wantText, texts)
			require.Len(t, children, tc.subs)
			for _, child := range children {
				cpath, _ := store.TranscriptPath(child)
				cevs := readEvents(t, cpath)
				require.GreaterOrEqual(t, len(cevs), 4)
				assert.Equal(t, transcript.RunStarted, cevs[0].Type)
				assert.Equal(t, transcript.RunCompleted, cevs[len(cevs)-1].Type)
				var sawPrompt, sawInside, sawDesc bool
				for _, ev := range cevs {
					assert.Equal(t, runID, ev.ParentRunID)
					if m := ev.Message(); m != nil {
						sawPrompt = sawPrompt || m.Blocks[0].Text == "list the files" && ev.Type == transcript.MessageUser
						sawInside = sawInside || m.Blocks[0].Text == "inside"
						sawDesc = sawDesc || m.Blocks[0].Text == "look around"
					}
					if ev.Type == transcript.RunStarted {
						assert.Equal(t, "look around", ev.Step().Name, "the description, as written, names the child run")
					}
				}
				assert.True(t, sawPrompt && sawInside)
				assert.False(t, sawDesc, "the description is not written as the prompt")
				f, _ := os.Open(path)
				rep := transcript.Validate(f, transcript.ValidateOptions{RunID: runID})
				f.Close()
				assert.True(t, rep.OK(), "%+v", rep.Errors)
			}
		})
	}
}

// Options.Filter sees every event of the step, in order, also when the
// events of one plugin call are written as one batch: what it drops is
// not written, what it returns is.
func TestCaptureFilterBatch(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	var seen []string
	filter := func(ev *transcript.Event) *transcript.Event {
		text := ev.Message().Blocks[0].Text
		seen = append(seen, text)
		switch text {
		case "drop":
			return nil
		case "rewrite":
			e := *ev
			e.Payload = &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock("rewritten")}}
			return &e
		}
		return ev
	}
	var lines []string
	for _, v := range []string{"a", "drop", "b", "rewrite", "drop", "c"} {
		lines = append(lines, `{"t":"text","v":"`+v+`"}`)
	}
	var runID string
	err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap"}, func(ctx context.Context, r *lifecycle.Step) error {
		runID = r.Run().RunID()
		for i := range 2 { // twice: the sink's reused slice must not leak between calls
			err := r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				_, err := Run(ctx, s, Source{Stdout: strings.NewReader(strings.Join(lines, "\n") + "\n" + `{"t":"end"}` + "\n")},
					Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin), Filter: filter})
				return err
			})
			require.NoError(t, err, "step %d", i)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "drop", "b", "rewrite", "drop", "c", "a", "drop", "b", "rewrite", "drop", "c"}, seen)
	path, _ := store.TranscriptPath(runID)
	var texts []string
	var seqs []uint64
	for _, ev := range readEvents(t, path) {
		seqs = append(seqs, ev.Seq)
		if m := ev.Message(); m != nil {
			texts = append(texts, m.Blocks[0].Text)
		}
	}
	assert.Equal(t, []string{"a", "b", "rewritten", "c", "a", "b", "rewritten", "c"}, texts)
	for i, s := range seqs {
		assert.Equal(t, uint64(i+1), s, "gap-free seqs in file order")
	}
}

// TestCaptureMakesRawEntriesDurable watches the real fsyncs of two
// steps' captures under each policy: unless the recorder never fsyncs,
// Finish syncs the capture files first, then the entries the step's
// result relies on (the captures' in raw/<run>/, and that one's in raw/,
// whoever created it), all before the step's completion, which names
// them, is written.
func TestCaptureMakesRawEntriesDurable(t *testing.T) {
	for name, policy := range map[string]recorder.FsyncPolicy{"boundary": recorder.FsyncOnBoundary, "always": recorder.FsyncAlways, "never": recorder.FsyncNever} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			var synced []string
			var runID string
			step := func(ctx context.Context, r *lifecycle.Step, name, stderr string) error {
				return r.Step(ctx, name, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					a, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
					if err != nil {
						return err
					}
					// Watch the real syncs from here on.
					watch := func(what, path string) {
						rel, err := filepath.Rel(store.Root, path)
						require.NoError(t, err)
						synced = append(synced, name+":"+what+":"+filepath.ToSlash(rel))
						tr, err := os.ReadFile(filepath.Join(store.Root, "transcripts", runID+".jsonl"))
						require.NoError(t, err)
						assert.NotContains(t, string(tr), `"step_path":"`+name+`","type":"step.completed"`, "synced after the step's completion")
						assert.NotContains(t, string(tr), a.rawRel, "the raw file is named before it is durable")
					}
					a.fileSync = func(f *os.File) error {
						watch("file", f.Name())
						return f.Sync()
					}
					if fsync := a.dirs.Fsync; fsync != nil {
						assert.NotEqual(t, recorder.FsyncNever, policy)
						a.dirs.Fsync = func(dir string) error {
							watch("dir", dir)
							return fsync(dir)
						}
					}
					require.NoError(t, a.Feed(ctx, []byte(`{"t":"text","v":"hi"}`+"\n"+`{"t":"end"}`+"\n")))
					require.NoError(t, a.FeedStderr([]byte(stderr)))
					_, err = a.Finish(ctx, new(0))
					return err
				})
			}
			err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap", Recorder: recorder.Options{Fsync: policy}}, func(ctx context.Context, r *lifecycle.Step) error {
				runID = r.Run().RunID()
				// The directories a fresh storage lacks: raw/, shared
				// by every run, is synced in the root at once; the run's
				// raw dir is the step's to sync.
				var created []string
				dir, err := rawDir(store, runID, func(dir string) error {
					rel, err := filepath.Rel(store.Root, dir)
					require.NoError(t, err)
					created = append(created, filepath.ToSlash(rel))
					return nil
				})
				require.NoError(t, err)
				assert.Equal(t, []string{"."}, created, "raw/ in the root")
				require.NoError(t, os.Remove(dir))
				require.NoError(t, os.Remove(filepath.Dir(dir)))
				if err := step(ctx, r, "one", ""); err != nil {
					return err
				}
				return step(ctx, r, "two", "warning\n")
			})
			require.NoError(t, err)
			if policy == recorder.FsyncNever {
				assert.Empty(t, synced)
				return
			}
			raw := "raw/" + runID
			entries := func(step string) []string {
				return []string{step + ":dir:raw", step + ":dir:" + raw}
			}
			want := append([]string{"one:file:" + raw + "/one.0.0.*.raw.zst"}, entries("one")...)
			want = append(want, "two:file:"+raw+"/two.0.0.*.raw.zst", "two:file:"+raw+"/two.0.0.*.stderr")
			want = append(want, entries("two")...)
			rnd := regexp.MustCompile(`\.[0-9a-f]{8}\.`)
			for i := range synced {
				synced[i] = rnd.ReplaceAllString(synced[i], ".*.")
			}
			assert.Equal(t, want, synced)
		})
	}
}

// TestEarlyRawSync: reading a regular file, the raw capture is synced
// (and the entries it relies on) as soon as the file's last bytes are
// written, while the plugin normalizes them; Finish waits for that sync
// and syncs again only what was written since. A pipe, a masked capture
// and FsyncNever start none.
func TestEarlyRawSync(t *testing.T) {
	const input = `{"t":"text","v":"hi"}` + "\n" + `{"t":"end"}` + "\n"
	tests := []struct {
		name     string
		pipe     bool
		mask     bool
		more     string // fed after the file, before Finish
		policy   recorder.FsyncPolicy
		early    bool
		rawSyncs int
		dirSyncs int
	}{
		{"file", false, false, "", recorder.FsyncOnBoundary, true, 1, 2},
		{"file, then more", false, false, `{"t":"text","v":"more"}` + "\n", recorder.FsyncOnBoundary, true, 2, 2},
		{"pipe", true, false, "", recorder.FsyncOnBoundary, false, 1, 2},
		{"masked", false, true, "", recorder.FsyncOnBoundary, false, 1, 2},
		{"never", false, false, "", recorder.FsyncNever, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			path := filepath.Join(t.TempDir(), "in.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(input), 0o600))
			var src *os.File
			if tt.pipe {
				r, w, err := os.Pipe()
				require.NoError(t, err)
				go func() { _, _ = w.WriteString(input); w.Close() }()
				src = r
			} else {
				f, err := os.Open(path)
				require.NoError(t, err)
				src = f
			}
			defer src.Close()
			var rawSyncs, dirSyncs int
			err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap", Recorder: recorder.Options{Fsync: tt.policy}}, func(ctx context.Context, r *lifecycle.Step) error {
				return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					opts := Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)}
					if tt.mask {
						opts.Mask = func(b []byte) []byte { return b }
					}
					a, err := Start(ctx, s, opts)
					if err != nil {
						return err
					}
					a.fileSync = func(f *os.File) error { rawSyncs++; return f.Sync() }
					if fsync := a.dirs.Fsync; fsync != nil {
						a.dirs.Fsync = func(dir string) error { dirSyncs++; return fsync(dir) }
					}
					require.NoError(t, a.readFrom(ctx, src))
					assert.Equal(t, tt.early, a.early != nil, "early sync started")
					if tt.more != "" {
						require.NoError(t, a.Feed(ctx, []byte(tt.more)))
					}
					res, err := a.Finish(ctx, nil)
					require.NoError(t, err)
					assert.Equal(t, int64(len(input)+len(tt.more)), res.Raw.Bytes)
					return nil
				})
			})
			require.NoError(t, err)
			assert.Equal(t, tt.rawSyncs, rawSyncs, "raw capture syncs")
			assert.Equal(t, tt.dirSyncs, dirSyncs, "directory syncs")
		})
	}
}

// TestEarlyRawSyncFailureReported: a failed early sync (the raw capture's
// fsync, or its entries') is the step's error even when Finish's own
// sync then succeeds: after a failed fsync the kernel may have dropped
// the dirty pages and reports the failure once, so a later fsync that
// succeeds does not make the bytes durable.
func TestEarlyRawSyncFailureReported(t *testing.T) {
	const input = `{"t":"text","v":"hi"}` + "\n" + `{"t":"end"}` + "\n"
	errEIO := errors.New("injected EIO")
	for _, what := range []string{"file", "dir"} {
		t.Run(what, func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			path := filepath.Join(t.TempDir(), "in.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(input), 0o600))
			src, err := os.Open(path)
			require.NoError(t, err)
			defer src.Close()
			var finishErr error
			_ = lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap"}, func(ctx context.Context, r *lifecycle.Step) error {
				return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					a, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin)})
					if err != nil {
						return err
					}
					var fileFails, dirFails atomic.Int32
					if what == "file" {
						fileFails.Store(1)
					} else {
						dirFails.Store(1)
					}
					a.fileSync = func(f *os.File) error {
						if fileFails.Add(-1) == 0 {
							return errEIO
						}
						return f.Sync()
					}
					fsync := a.dirs.Fsync
					a.dirs.Fsync = func(dir string) error {
						if dirFails.Add(-1) == 0 {
							return errEIO
						}
						return fsync(dir)
					}
					require.NoError(t, a.readFrom(ctx, src))
					require.NotNil(t, a.early, "early sync started")
					_, finishErr = a.Finish(ctx, nil)
					return finishErr
				})
			})
			require.ErrorIs(t, finishErr, errEIO, "the early sync's failure is reported")
		})
	}
}

// A continued raw capture's entries are synced before the step that
// continues it completes: the step that made the file may have run under
// FsyncNever (an earlier process of the same run), so nothing says they
// are durable yet.
func TestContinuedRawEntriesSynced(t *testing.T) {
	ctx := context.Background()
	store := recorder.NewStore(t.TempDir())
	var rel string
	var synced []string
	err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap", Recorder: recorder.Options{Fsync: recorder.FsyncOnBoundary}}, func(ctx context.Context, r *lifecycle.Step) error {
		for _, name := range []string{"one", "two"} {
			err := r.Step(ctx, name, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				a, err := Start(ctx, s, Options{Provider: "test", Store: store, Plugin: NativePlugin(testPlugin), ContinueRaw: rel})
				if err != nil {
					return err
				}
				if name == "two" {
					fsync := a.dirs.Fsync
					require.NotNil(t, fsync)
					a.dirs.Fsync = func(dir string) error {
						r, err := filepath.Rel(store.Root, dir)
						require.NoError(t, err)
						synced = append(synced, filepath.ToSlash(r))
						return fsync(dir)
					}
				}
				require.NoError(t, a.Feed(ctx, []byte(`{"t":"text","v":"hi"}`+"\n")))
				rel = a.rawRel
				_, err = a.Finish(ctx, new(0))
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	raw := filepath.ToSlash(filepath.Dir(filepath.FromSlash(rel)))
	assert.ElementsMatch(t, []string{"raw", raw}, synced, "the continued file's entries")
}
