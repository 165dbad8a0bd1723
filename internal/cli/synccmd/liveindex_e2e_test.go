package synccmd_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("round-end update %v", full), func(t *testing.T) {
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
