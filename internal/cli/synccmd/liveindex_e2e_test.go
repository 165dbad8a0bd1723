package synccmd_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/synccmd"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// TestLiveIndexSync: a sync whose round-end update is left out (Indexed
// does nothing) still leaves the search index holding the sessions the
// live indexer indexed while it archived them, through the real index
// beside the archiving workers; with the round-end update, every session
// is in it, once.
func TestLiveIndexSync(t *testing.T) {
	const batch = 64 // synccmd's liveBatch
	const n = batch + 6
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("round-end update %v", full), func(t *testing.T) {
			h, opts := claudeSessionsHome(t, n)
			if !full {
				opts.Indexed = func(context.Context, []string) error { return nil }
			}
			require.NoError(t, synccmd.Run(context.Background(), opts))
			ix, _, err := index.Open(context.Background(), h.Stor)
			require.NoError(t, err)
			defer ix.Close()
			runs, _, err := ix.List(context.Background(), index.ListQuery{Limit: 1000})
			require.NoError(t, err)
			if full {
				assert.Len(t, runs, n)
			} else {
				assert.GreaterOrEqual(t, len(runs), batch, "a batch indexed while archiving")
				assert.Less(t, len(runs), n, "the rest left to the round's update")
			}
		})
	}
}

// TestSyncLedgerClosedBeforeIndex: by the time a round's index is
// brought up to date, the archiver is closed (its ledger file no longer
// open in the process), so that the ledger, which grows with every
// session, is not held beside the index build (#31: a first sync's peak
// RSS); the index still holds every session.
func TestSyncLedgerClosedBeforeIndex(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	const n = 3
	h, opts := claudeSessionsHome(t, n)
	indexed, next := 0, opts.Indexed
	opts.Indexed = func(ctx context.Context, ids []string) error {
		indexed++
		ledger, err := filepath.EvalSymlinks(archive.LedgerFile(h.Stor))
		require.NoError(t, err)
		assert.NotContains(t, openFiles(t), ledger, "the ledger is open while the index is built")
		return next(ctx, ids)
	}
	require.NoError(t, synccmd.Run(context.Background(), opts))
	assert.Equal(t, 1, indexed)
	ix, _, err := index.Open(context.Background(), h.Stor)
	require.NoError(t, err)
	defer ix.Close()
	runs, _, err := ix.List(context.Background(), index.ListQuery{Limit: 1000})
	require.NoError(t, err)
	assert.Len(t, runs, n)
}

// openFiles is the files the process has open (/proc/self/fd).
func openFiles(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []string
	for _, fd := range fds {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// claudeSessionsHome is a home of n Claude sessions (copies of the golden
// session, each its own id) and the options of `twasm sync` over it.
func claudeSessionsHome(t *testing.T, n int) (*clitest.Home, *synccmd.Options) {
	t.Helper()
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	h := clitest.NewHome(t)
	for i := range n {
		id := fmt.Sprintf("7f3e9a10-0000-4000-8000-%012d", i)
		h.Put(fmt.Sprintf(".claude/projects/p/%s.jsonl", id), bytes.ReplaceAll(session, []byte("7f3e9a10-0000-4000-8000-00000000bb01"), []byte(id)), time.Hour)
	}
	e := cmdtest.New(t)
	e.F.StorageFlag = h.Stor
	e.F.Getenv = func(k string) string { return h.Env[k] }
	var opts *synccmd.Options
	c := synccmd.NewCmdSync(e.F, func(_ context.Context, o *synccmd.Options) error { opts = o; return nil })
	require.NoError(t, cmdtest.Parse(c, ""))
	return h, opts
}
