package archive

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPartLineLazy: a part that leaves its run open is noted in the
// ledger without an fsync of its own (its pending line, synced before
// the run was written, is the one a crash must find), so a first sync
// fsyncs the ledger once a session, and once more when it closes; and
// a crash that lost those lines (the pending ones kept) leaves every
// run whole: the next sync settles them from their transcripts and
// archives nothing again.
func TestPartLineLazy(t *testing.T) {
	logs := []string{
		"claude/agentcmd_session_log_ansi_tool_error.jsonl",
		"claude/agentcmd_session_log_v2.0.29_dangling_exitplanmode.jsonl",
	}
	for _, n := range []int{1, 2, 5} {
		t.Run(strings.Repeat("s", n), func(t *testing.T) {
			ctx := context.Background()
			home, root := t.TempDir(), t.TempDir()
			var paths []string
			for i := range n {
				b := fixture(t, logs[i%len(logs)])
				// Each a session of its own: a member added to its
				// first line.
				j := bytes.IndexByte(b, '{')
				b = append(append(append([]byte{}, b[:j+1]...), []byte(`"copy":`+string(rune('0'+i))+`,`)...), b[j+1:]...)
				p := filepath.Join(home, "s"+string(rune('a'+i))+".jsonl")
				writeAged(t, p, b, time.Hour)
				paths = append(paths, p)
			}
			a := newArchiver(t, root, nil)
			syncs := 0
			a.ledger.fileSync = func(f *os.File) error { syncs++; return f.Sync() }
			runs := map[string]string{}
			for _, p := range paths {
				o := a.SyncFile(ctx, "claude", p)
				require.Equal(t, ActionNew, o.Action, "%+v", o)
				runs[p] = o.RunID
			}
			assert.Equal(t, n, syncs, "ledger fsyncs during a first sync of %d sessions (one a pending line)", n)
			require.NoError(t, a.Close())
			assert.Equal(t, n+1, syncs, "ledger fsyncs once the archiver closed (its lazy lines)")

			// A crash that lost every line written without an fsync:
			// only the pending lines are left.
			lp := filepath.Join(root, "archive", "ledger.jsonl")
			b, err := os.ReadFile(lp)
			require.NoError(t, err)
			var kept []byte
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if bytes.Contains(sc.Bytes(), []byte(`"pending":true`)) {
					kept = append(append(kept, sc.Bytes()...), '\n')
				}
			}
			require.Equal(t, n, bytes.Count(kept, []byte("\n")), "a pending line a run")
			require.NoError(t, os.WriteFile(lp, kept, 0o600))

			a = newArchiver(t, root, nil)
			assert.Empty(t, a.ledger.Interrupted(), "a pending line whose transcript holds its part whole is settled, not interrupted")
			for _, p := range paths {
				o := a.SyncFile(ctx, "claude", p)
				assert.Equal(t, ActionUnchanged, o.Action, "%s: %+v", p, o)
				assert.Equal(t, runs[p], o.RunID, p)
			}
			require.NoError(t, a.Close())
			ts, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
			require.NoError(t, err)
			assert.Len(t, ts, n, "each session archived once")
		})
	}
}
