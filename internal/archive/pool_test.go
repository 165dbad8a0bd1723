package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/transcript"
)

// parallelHome writes a Claude Code store of five session files, sorted
// by path as a sync reads them: 0 holds the first half of a session, 2
// the whole of it, 3 the same bytes as 2 (three finds of one session,
// by content), 1 and 4 two other sessions. It returns the store's
// locations.
func parallelHome(t *testing.T) []Location {
	t.Helper()
	s := fixture(t, "testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl")
	other := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.143_api_error_rate_limit_retries.jsonl")
	third := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.150_background_task_notification.jsonl")
	half := s[:bytes.IndexByte(s[len(s)/2:], '\n')+len(s)/2+1]
	return claudeHome(t, half, other, s, s, third)
}

// claudeHome writes a Claude Code store of the session files given, the
// i-th at p<i>/s.jsonl, an hour old, and returns the store's locations.
func claudeHome(t *testing.T, files ...[]byte) []Location {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects")
	for i, b := range files {
		writeAged(t, filepath.Join(dir, "p"+strconv.Itoa(i), "s.jsonl"), b, time.Hour)
	}
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	var locs []Location
	for _, l := range Discover(env, "linux", bundledDeclared(), nil) {
		if l.Provider == "claude" {
			locs = append(locs, l)
		}
	}
	require.NotEmpty(t, locs)
	return locs
}

// syncView is what a sync did, without its run ids (random): each
// outcome in the order reported, a run named by the index of the
// outcome that made it; and each ledger entry by path.
type syncView struct {
	outcomes []string
	entries  map[string]string
	// ledger is the run id of each of the ledger file's lines.
	ledger []string
}

func viewOf(t *testing.T, a *Archiver, rep Report, progressed []Outcome) syncView {
	t.Helper()
	require.Equal(t, rep.Outcomes, progressed, "progress reports the outcomes in the report's order")
	ids := map[string]string{}
	name := func(id string) string {
		if id == "" {
			return "-"
		}
		if n, ok := ids[id]; ok {
			return n
		}
		ids[id] = "run" + strconv.Itoa(len(ids))
		return ids[id]
	}
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	v := syncView{entries: map[string]string{}}
	for _, o := range rep.Outcomes {
		reason := uuid.ReplaceAllStringFunc(o.Reason, name)
		v.outcomes = append(v.outcomes, o.Action+" "+name(o.RunID)+" "+filepath.Base(filepath.Dir(o.Path))+" part "+strconv.Itoa(o.Part)+" bytes "+strconv.FormatInt(o.Bytes, 10)+" "+reason)
	}
	for _, e := range a.Ledger().Entries() {
		v.entries[filepath.Base(filepath.Dir(e.Path))] = name(e.RunID) + " offset " + strconv.FormatInt(e.Offset, 10) + " parts " + strconv.Itoa(e.Parts) + " " + e.SHA256
	}
	b, err := os.ReadFile(a.Ledger().path)
	require.NoError(t, err)
	for line := range bytes.Lines(b) {
		var e Entry
		require.NoError(t, json.Unmarshal(line, &e))
		v.ledger = append(v.ledger, e.RunID)
	}
	return v
}

// syncWith syncs locs into a new storage with the given workers and
// session hook, and returns what it did.
func syncWith(t *testing.T, ctx context.Context, locs []Location, workers int, hook func(a *Archiver) func(int, bool)) (syncView, Report) {
	t.Helper()
	root := t.TempDir()
	a := newArchiver(t, root, func(o *Options) { o.Workers = workers })
	if hook != nil {
		a.sessionHook = hook(a)
	}
	var progressed []Outcome
	rep := a.SyncStores(ctx, locs, time.Time{}, func(done, total int, o *Outcome) { progressed = append(progressed, *o) })
	return viewOf(t, a, rep, progressed), rep
}

// TestSyncParallelSameSessionOnce: three finds of one session (its first
// half, the whole, a copy of the whole at a third path) synced by
// parallel workers are one run: new from the first, grown by the
// second, the third the same bytes; whatever the workers' timing, the
// outcomes, their order and the ledger are those of a sync on one
// worker. The hook holds the first session until the last (another
// session, on another worker) is archived, so that the sessions finish
// out of order.
func TestSyncParallelSameSessionOnce(t *testing.T) {
	ctx := context.Background()
	locs := parallelHome(t)
	want, rep := syncWith(t, ctx, locs, 1, nil)
	require.Equal(t, 3, rep.Counts[ActionNew], "%v", want.outcomes)
	require.Equal(t, 1, rep.Counts[ActionGrown], "%v", want.outcomes)
	require.Equal(t, 1, rep.Counts[ActionUnchanged], "%v", want.outcomes)
	assert.Regexp(t, `^new run0 p0 `, want.outcomes[0])
	assert.Regexp(t, `^grown run0 p2 part 1 `, want.outcomes[2])
	assert.Regexp(t, `^unchanged run0 p3 .*the same bytes are archived as run run0`, want.outcomes[3])

	for _, workers := range []int{2, 3, 8} {
		t.Run(strconv.Itoa(workers), func(t *testing.T) {
			var order []int
			var mu sync.Mutex
			got, _ := syncWith(t, ctx, locs, workers, func(*Archiver) func(int, bool) {
				lastDone := make(chan struct{})
				return func(i int, after bool) {
					switch {
					case i == 0 && !after:
						<-lastDone
					case i == 4 && after:
						close(lastDone)
					}
					if after {
						mu.Lock()
						order = append(order, i)
						mu.Unlock()
					}
				}
			})
			assert.Less(t, slices.Index(order, 4), slices.Index(order, 0), "the last session finished before the first: %v", order)
			assert.Equal(t, want.outcomes, got.outcomes)
			assert.Equal(t, want.entries, got.entries)
			assert.True(t, slices.IsSorted(got.ledger) && len(got.ledger) == 3, "one ledger line per run, by run id (not as the workers finished): %v", got.ledger)
		})
	}
}

// TestSyncParallelCancelled: a sync cancelled while its workers run
// returns once they have stopped, leaving no goroutine behind, and
// reports the sessions it archived (a part in flight cancelled, as
// without workers), in the sessions' order; the next sync archives the
// rest, and the one after finds nothing new.
func TestSyncParallelCancelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	locs := parallelHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	a := newArchiver(t, root, func(o *Options) { o.Workers = 2 })
	a.sessionHook = func(i int, after bool) {
		if i == 1 && after {
			cancel()
		}
	}
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.NotEmpty(t, rep.Outcomes)
	assert.Less(t, len(rep.Outcomes), 5, "sessions after the cancel are not begun")
	for i := 1; i < len(rep.Outcomes); i++ {
		assert.Less(t, rep.Outcomes[i-1].Path, rep.Outcomes[i].Path, "in the sessions' order")
	}
	require.NoError(t, a.Close())

	b := newArchiver(t, root, nil)
	rep = b.SyncStores(context.Background(), locs, time.Time{}, nil)
	assert.Zero(t, rep.Counts[ActionFailed], "%v", rep.Outcomes)
	rep = b.SyncStores(context.Background(), locs, time.Time{}, nil)
	assert.Equal(t, 5, rep.Counts[ActionUnchanged], "%v", rep.Outcomes)
}

// TestUnbegunTranscriptRemoved: a sync killed after a worker created a
// run's transcript and before it wrote run.started (a pending ledger
// entry, a file without a complete line) leaves nothing once the next
// sync opens the ledger: the file is removed (it would read as a damaged
// transcript), the session archived afresh; a dry run removes nothing,
// and a transcript with a complete line is left as it is.
func TestUnbegunTranscriptRemoved(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		dryRun  bool
		removed bool
	}{
		{"empty", "", false, true},
		{"torn first line", `{"type":"run.sta`, false, true},
		{"dry run", "", true, false},
		{"a complete line", `{"type":"other"}` + "\n", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			l, _, err := OpenLedger(root, false)
			require.NoError(t, err)
			id := "0b0221db-831d-4246-9800-82ae8ca5c503"
			require.NoError(t, l.Put(&Entry{RunID: id, Provider: "claude", Head: "h", Path: "/x/s.jsonl", Pending: true}))
			require.NoError(t, l.Close())
			tp := filepath.Join(root, "transcripts", id+".jsonl")
			require.NoError(t, os.MkdirAll(filepath.Dir(tp), 0o700))
			require.NoError(t, os.WriteFile(tp, []byte(tc.body), 0o600))
			l, _, err = OpenLedger(root, tc.dryRun)
			require.NoError(t, err)
			defer l.Close()
			assert.Nil(t, l.byRun(id), "the run was never begun")
			_, err = os.Stat(tp)
			assert.Equal(t, tc.removed, os.IsNotExist(err), "%v", err)
		})
	}
}

// TestSyncParallelDropsEmitted: a sync keeps no session's outcome once
// it is reported (Options.Streamed): when the last session's is
// reported, the earlier ones' plugin results are garbage. They were
// kept to the end of the sync, about 1 KiB a session of live heap
// (#31's peak RSS of a first sync).
func TestSyncParallelDropsEmitted(t *testing.T) {
	locs := parallelHome(t)
	a := newArchiver(t, t.TempDir(), func(o *Options) { o.Workers = 2; o.Streamed = true })
	var results []weak.Pointer[transcript.AgentResult]
	var kept []int
	rep := a.SyncStores(context.Background(), locs, time.Time{}, func(done, total int, o *Outcome) {
		if o.Result != nil {
			results = append(results, weak.Make(o.Result))
		}
		if done == total && kept == nil {
			runtime.GC()
			for i, r := range results[:len(results)-1] {
				if r.Value() != nil {
					kept = append(kept, i)
				}
			}
		}
	})
	require.Zero(t, rep.Counts[ActionFailed], "%v", rep.Outcomes)
	require.Greater(t, len(results), 2, "sessions written")
	assert.Empty(t, kept, "the results of sessions reported before the last")
}
