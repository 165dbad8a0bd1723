package archive

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
)

// TestSyncFramesKept: the frame buffers the parts read their session
// into (firstTime, feedDated) and the normalizers' working buffers
// (capture.Options.StreamBuffers) are made once per worker and kept for
// the archiver's life, whatever the sessions' sizes and however often
// the collector runs between them (a first sync under its soft memory
// limit collects every few MiB). Each session's raw capture still holds
// its bytes. Six sessions a case, a collection after each.
func TestSyncFramesKept(t *testing.T) {
	small := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.101_foreground_agents.jsonl")
	cases := []struct {
		name    string
		body    []byte
		workers int
	}{
		{"smaller than a read, one worker", small, 1},
		{"smaller than a read, two workers", small, 2},
		{"several reads, one worker", bytes.Repeat(small, 7), 1},
		{"several frames, two workers", framesSession(t), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var bodies [][]byte
			for i := range 6 {
				j := bytes.IndexByte(tc.body, '{')
				require.GreaterOrEqual(t, j, 0)
				body := append(append(append([]byte{}, tc.body[:j+1]...), fmt.Sprintf(`"twasm_test_copy":%d,`, i)...), tc.body[j+1:]...)
				writeAged(t, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)), body, time.Hour)
				bodies = append(bodies, body)
			}
			re, err := globRegexp("*.jsonl")
			require.NoError(t, err)
			locs := []Location{{Provider: "claude", Name: "claude", Kind: KindFile, Dir: dir, Pattern: "*.jsonl", Match: re.MatchString}}
			root := t.TempDir()
			a := newArchiver(t, root, func(o *Options) { o.Workers = tc.workers })
			a.sessionHook = func(_ int, after bool) {
				if after {
					runtime.GC()
					runtime.GC() // a sync.Pool keeps its items through one
				}
			}
			rep := a.SyncStores(ctx, locs, time.Time{}, nil)
			require.Equal(t, 6, rep.Counts[ActionNew], "%v", rep.Counts)
			require.LessOrEqual(t, a.frames.made.Load(), int64(tc.workers), "frame buffers made for 6 sessions on %d workers", tc.workers)
			require.LessOrEqual(t, a.streams.made.Load(), int64(tc.workers), "stream buffers made for 6 sessions on %d workers", tc.workers)
			for i, body := range bodies {
				e := a.Ledger().ByPath(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)))
				require.NotNil(t, e)
				raw, err := rawfile.ReadFile(filepath.Join(root, e.Raw))
				require.NoError(t, err)
				require.True(t, bytes.Equal(body, raw), "session %d: raw capture of %d bytes, the session %d", i, len(raw), len(body))
			}
		})
	}
}
