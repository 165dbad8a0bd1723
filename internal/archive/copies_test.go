package archive

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopiesArchivedOnce: a session found at several paths (a copy made
// before it grew, the file it grew from, a copy of it whole) is archived
// in one run, however the syncs meet the files, and every later sync
// finds every file unchanged: never a second run of bytes already
// archived. Before Entry.Also, the path a session grew from was
// forgotten once its run moved on, and the next sync archived the copy
// again as a new run (TestSyncParallelCancelled failed on it now and
// then, depending on where the cancel cut the first sync).
func TestCopiesArchivedOnce(t *testing.T) {
	s := fixture(t, "testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl")
	half := s[:cutAfterLine(s, len(s)/2)]
	type step struct {
		write map[int][]byte // file index -> bytes written (aged)
		touch []int          // files whose mtime changes, bytes kept
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"copy before it grew, all at once", []step{{write: map[int][]byte{0: half, 1: s}}}},
		{"copy before it grew, grown later", []step{{write: map[int][]byte{0: half}}, {write: map[int][]byte{1: s}}}},
		{"copy grown and copied whole", []step{{write: map[int][]byte{0: half}}, {write: map[int][]byte{1: s, 2: s}}}},
		{"the copy touched", []step{{write: map[int][]byte{0: half}}, {write: map[int][]byte{1: s}}, {touch: []int{0}}}},
		{"the whole copy touched", []step{{write: map[int][]byte{0: half, 1: s, 2: s}}, {touch: []int{1, 2}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := func(i int) string {
				return filepath.Join(home, ".claude", "projects", "p"+strconv.Itoa(i), "s.jsonl")
			}
			root := t.TempDir()
			runs := map[string]bool{}
			for n, st := range tc.steps {
				for i, b := range st.write {
					writeAged(t, path(i), b, time.Hour+time.Duration(n)*time.Minute)
				}
				for _, i := range st.touch {
					when := time.Now().Add(-30 * time.Minute)
					require.NoError(t, os.Chtimes(path(i), when, when))
				}
				a := newArchiver(t, root, func(o *Options) { o.Workers = 2 })
				rep := a.SyncStores(context.Background(), claudeLocations(t, home), time.Time{}, nil)
				require.NoError(t, a.Close())
				assert.Zero(t, rep.Counts[ActionFailed], "%v", rep.Outcomes)
				for _, o := range rep.Outcomes {
					runs[o.RunID] = true
				}
				// Once more: nothing new, every file unchanged.
				b := newArchiver(t, root, nil)
				rep = b.SyncStores(context.Background(), claudeLocations(t, home), time.Time{}, nil)
				require.NoError(t, b.Close())
				for _, o := range rep.Outcomes {
					assert.Equal(t, ActionUnchanged, o.Action, "step %d: %s: %s", n, o.Path, o.Reason)
					runs[o.RunID] = true
				}
			}
			assert.Len(t, runs, 1, "one session, one run")
		})
	}
}

// cutAfterLine is the offset just after the line that holds offset at.
func cutAfterLine(b []byte, at int) int {
	for i := at; i < len(b); i++ {
		if b[i] == '\n' {
			return i + 1
		}
	}
	return len(b)
}

// claudeLocations are the Claude Code stores of home.
func claudeLocations(t *testing.T, home string) []Location {
	t.Helper()
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

// TestLedgerCopyAt: a path is a run's copy only while its size and
// mtime are those seen of it, and not once a run is synced from it.
func TestLedgerCopyAt(t *testing.T) {
	l, _, err := OpenLedger(t.TempDir(), false)
	require.NoError(t, err)
	defer l.Close()
	at := time.Unix(1_700_000_000, 5)
	e := &Entry{RunID: "0b0221db-831d-4246-9800-82ae8ca5c503", Provider: "claude", Head: "h", Path: "/x/now.jsonl", Size: 30, ModTime: at.UnixNano(),
		Also: []Seen{{Path: "/x/old.jsonl", Size: 10, ModTime: at.UnixNano()}, {Path: "/x/b.jsonl", Size: 20, ModTime: at.UnixNano()}}}
	require.NoError(t, l.Put(e))
	for _, c := range []struct {
		path string
		size int64
		at   time.Time
		want bool
	}{
		{"/x/old.jsonl", 10, at, true},
		{"/x/b.jsonl", 20, at, true},
		{"/x/old.jsonl", 11, at, false},                      // grown
		{"/x/old.jsonl", 10, at.Add(time.Nanosecond), false}, // touched
		{"/x/b.jsonl", 10, at, false},                        // another copy's stat
		{"/x/now.jsonl", 30, at, false},                      // the run's own file
		{"/x/none.jsonl", 10, at, false},
	} {
		got := l.CopyAt(c.path, c.size, c.at)
		if assert.Equal(t, c.want, got != nil, "%s %d %v", c.path, c.size, c.at) && got != nil {
			assert.Equal(t, e.RunID, got.RunID)
		}
	}
	// Synced from the copy's path since: no longer a copy.
	other := &Entry{RunID: "1b0221db-831d-4246-9800-82ae8ca5c503", Provider: "claude", Head: "g", Path: "/x/old.jsonl", Size: 10, ModTime: at.UnixNano()}
	require.NoError(t, l.Put(other))
	assert.Nil(t, l.CopyAt("/x/old.jsonl", 10, at))
}
