package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// loadingPlugin is a plugin whose NewInstance waits for the test (a
// plugin still loading), then fails with err or gives a native instance.
type loadingPlugin struct {
	Plugin
	ready <-chan struct{}
	err   error
}

func (p loadingPlugin) NewInstance(ctx context.Context) (normalize.Instance, error) {
	<-p.ready
	if p.err != nil {
		return nil, p.err
	}
	return p.Plugin.NewInstance(ctx)
}

// watchSyncs replaces syncDir for the test: every directory sync is
// recorded (relative to root), and fail, when set, decides its error.
type watchSyncs struct {
	mu     sync.Mutex
	root   string
	synced []string
	// seen is closed once n syncs were made.
	n    int
	seen chan struct{}
	fail func(dir string) error
}

func watchDirSyncs(t *testing.T, root string, n int) *watchSyncs {
	w := &watchSyncs{root: root, n: n, seen: make(chan struct{})}
	old := syncDir
	syncDir = func(dir string) error {
		w.mu.Lock()
		rel, _ := filepath.Rel(w.root, dir)
		w.synced = append(w.synced, filepath.ToSlash(rel))
		if len(w.synced) == w.n {
			close(w.seen)
		}
		fail := w.fail
		w.mu.Unlock()
		if fail != nil {
			if err := fail(dir); err != nil {
				return err
			}
		}
		return old(dir)
	}
	t.Cleanup(func() { syncDir = old })
	return w
}

func (w *watchSyncs) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.synced...)
}

// TestEarlyEntries: with Options.EarlyEntries, the entries a capture's
// Start creates (the raw capture's in raw/<run>/, that directory's in
// raw/) are synced while the plugin is still loading, and Finish does
// not sync them again; an entry created afterwards (the stderr capture)
// is still synced by Finish, and every sync comes before the step's
// completion names the files. Without the option they wait for Finish.
func TestEarlyEntries(t *testing.T) {
	for _, tt := range []struct {
		name   string
		early  bool
		stderr string
	}{
		{"early", true, ""},
		{"early, then a stderr capture", true, "warning\n"},
		{"at finish", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			require.NoError(t, os.MkdirAll(filepath.Join(store.Root, "raw"), 0o700))
			w := watchDirSyncs(t, store.Root, 2)
			ready := make(chan struct{})
			var beforeReady []string
			err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap"}, func(ctx context.Context, r *lifecycle.Step) error {
				runID := r.Run().RunID()
				return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					go func() {
						// The plugin finishes loading once the
						// entries are synced; without the option
						// Start syncs nothing, and the plugin is
						// let go at once. (The minute only keeps a
						// Start that never syncs from hanging.)
						if tt.early {
							select {
							case <-w.seen:
							case <-time.After(time.Minute): // never synced: the assertion below says so
							}
						}
						beforeReady = w.list()
						close(ready)
					}()
					a, err := Start(ctx, s, Options{Provider: "test", Store: store, EarlyEntries: tt.early,
						Plugin: loadingPlugin{Plugin: NativePlugin(testPlugin), ready: ready}})
					if err != nil {
						return err
					}
					require.NoError(t, a.Feed(ctx, []byte(`{"t":"text","v":"hi"}`+"\n"+`{"t":"end"}`+"\n")))
					if tt.stderr != "" {
						require.NoError(t, a.FeedStderr([]byte(tt.stderr)))
					}
					// Every sync is made before the completion is written.
					tr := filepath.Join(store.Root, "transcripts", runID+".jsonl")
					w.mu.Lock()
					w.fail = func(string) error {
						b, err := os.ReadFile(tr)
						assert.NoError(t, err)
						assert.NotContains(t, string(b), `"type":"step.completed"`, "a directory synced after the step's completion")
						return nil
					}
					w.mu.Unlock()
					_, err = a.Finish(ctx, new(0))
					return err
				})
			})
			require.NoError(t, err)
			runDir := "raw/" + filepath.Base(filepath.Dir(firstRaw(t, store.Root)))
			all := w.list()
			if tt.early {
				assert.Equal(t, []string{"raw", runDir}, beforeReady, "the entries synced while the plugin loads")
			} else {
				assert.Empty(t, beforeReady, "nothing synced before the plugin loads")
			}
			want := []string{"raw", runDir}
			if tt.stderr != "" {
				want = append(want, "raw", runDir) // the stderr capture's entry, by Finish
			}
			assert.Equal(t, want, all, "each entry synced once, a later one again")
		})
	}
}

// firstRaw returns the path of the one raw capture under root's raw/.
func firstRaw(t *testing.T, root string) string {
	m, err := filepath.Glob(filepath.Join(root, "raw", "*", "*.raw*"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}

// TestEarlyEntriesFailure: a failed sync of the entries Start began is
// the step's error (Finish reports it; the raw capture is not named as
// durable), and a Start whose plugin then fails to load waits for that
// sync before it removes the empty capture (nothing is left running).
func TestEarlyEntriesFailure(t *testing.T) {
	errEIO := errors.New("injected EIO")
	for _, loadFails := range []bool{false, true} {
		t.Run(map[bool]string{false: "finish", true: "plugin fails"}[loadFails], func(t *testing.T) {
			ctx := context.Background()
			store := recorder.NewStore(t.TempDir())
			require.NoError(t, os.MkdirAll(filepath.Join(store.Root, "raw"), 0o700))
			w := watchDirSyncs(t, store.Root, 1)
			w.fail = func(dir string) error {
				if strings.HasSuffix(filepath.ToSlash(filepath.Dir(dir)), "/raw") {
					return errEIO // raw/<run>/
				}
				return nil
			}
			ready := make(chan struct{})
			close(ready)
			var loadErr error
			if loadFails {
				loadErr = errors.New("the plugin did not load")
			}
			var stepErr error
			_ = lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "cap"}, func(ctx context.Context, r *lifecycle.Step) error {
				return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					a, err := Start(ctx, s, Options{Provider: "test", Store: store, EarlyEntries: true,
						Plugin: loadingPlugin{Plugin: NativePlugin(testPlugin), ready: ready, err: loadErr}})
					if err != nil {
						stepErr = err
						return err
					}
					require.NoError(t, a.Feed(ctx, []byte(`{"t":"text","v":"hi"}`+"\n"+`{"t":"end"}`+"\n")))
					_, stepErr = a.Finish(ctx, new(0))
					return stepErr
				})
			})
			if loadFails {
				require.ErrorIs(t, stepErr, loadErr)
				m, err := filepath.Glob(filepath.Join(store.Root, "raw", "*", "*.raw*"))
				require.NoError(t, err)
				assert.Empty(t, m, "the empty raw capture is removed")
				return
			}
			require.ErrorIs(t, stepErr, errEIO, "the early sync's failure is reported")
		})
	}
}
