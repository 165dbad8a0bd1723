package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
)

// TestSyncFramesKept: the buffers the parts read their session with
// (partBufs: a frame for firstTime, feedDated and the part's hash, and
// feedDated's line carried from a read to the next and joined with it)
// and the normalizers' working buffers
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
		reads   bool // longer than a read: feedDated joins lines cut short
	}{
		{"smaller than a read, one worker", small, 1, false},
		{"smaller than a read, two workers", small, 2, false},
		{"several reads, one worker", bytes.Repeat(small, 7), 1, true},
		{"several frames, two workers", framesSession(t), 2, true},
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
			if tc.reads {
				for range tc.workers {
					kept := a.frames.get()
					require.NotNil(t, kept.carry, "the line carried from a read to the next, kept")
					require.NotNil(t, kept.join, "the line joined with the next read, kept")
				}
				require.LessOrEqual(t, a.frames.made.Load(), int64(tc.workers), "the buffers kept")
			}
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

// TestPartHashInFrame: a part's hash (partSource.hash, the sha256 its
// source reference keeps) reads the session into the frame buffer its
// worker keeps, not into a buffer of its own (32 KiB a part, 13 to 23
// MB of a first sync of 500 sessions), and is the sha256 of the
// session's first end bytes, whatever their size against the buffer's.
func TestPartHashInFrame(t *testing.T) {
	frame := make([]byte, rawfile.FrameBytes)
	for _, size := range []int{0, 100, 40 << 10, rawfile.FrameBytes + 12345} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			body := bytes.Repeat([]byte("{\"a\":1}\n"), size/8+1)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			require.NoError(t, os.WriteFile(path, body, 0o600))
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			ps := fileSource{f: f}
			got, err := ps.hash(int64(size), frame)
			require.NoError(t, err)
			want := sha256.Sum256(body[:size])
			require.Equal(t, hex.EncodeToString(want[:]), got)
			const runs = 50
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				if _, err := ps.hash(int64(size), frame); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			require.Less(t, (after.TotalAlloc-before.TotalAlloc)/runs, uint64(4<<10), "bytes allocated by a part's hash of %d bytes", size)
		})
	}
}
