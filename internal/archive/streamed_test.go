package archive

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamedReportKeepsNoSession: with Options.Streamed, a sync's
// report holds nothing per session (#31, peak RSS of a first sync at any
// size): every outcome goes to progress, the counts and bytes are those
// of the report that keeps them all, and the heap the report holds once
// the sync returns (measured by dropping it) does not grow from n to 4n
// sessions. The same sync with the report kept whole is measured too, so
// that the measurement is seen to find a report that grows.
func TestStreamedReportKeepsNoSession(t *testing.T) {
	const n = 30
	base := fixture(t, "testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl")
	held := map[bool][2]int64{}
	for _, streamed := range []bool{false, true} {
		var figures [2]int64
		for k, sessions := range []int{n, 4 * n} {
			t.Run(fmt.Sprintf("streamed=%v/%d", streamed, sessions), func(t *testing.T) {
				figures[k] = reportHeld(t, manySessions(base, sessions), streamed)
				t.Logf("report holds %d bytes", figures[k])
			})
		}
		held[streamed] = figures
	}
	// What the whole report keeps of 3n more sessions: at least a
	// session's outcome (its path, run id and result) each.
	grown := held[false][1] - held[false][0]
	require.Greater(t, grown, int64(3*n*256), "the measurement finds the whole report's sessions: %v", held[false])
	assert.Less(t, held[true][1]-held[true][0], grown/8, "a streamed report grew with the sessions: %v (whole: %v)", held[true], held[false])
	assert.Less(t, held[true][1], int64(16<<10), "a streamed report of %d sessions holds this much heap", 4*n)
}

// manySessions is n sessions, each base with a member of its first line
// that makes it a session of its own.
func manySessions(base []byte, n int) [][]byte {
	out := make([][]byte, n)
	j := bytes.IndexByte(base, '{')
	for i := range out {
		mark := fmt.Sprintf(`"twasm_test_copy":%d,`, i)
		out[i] = append(append(append([]byte(nil), base[:j+1]...), mark...), base[j+1:]...)
	}
	return out
}

// reportHeld syncs sessions into a new storage (Options.Streamed as
// given) and returns the heap its report holds: the live heap with the
// report, less the live heap once it is dropped, the archiver (its
// ledger) alive throughout. It checks what the sync did too.
func reportHeld(t *testing.T, sessions [][]byte, streamed bool) int64 {
	locs := claudeHome(t, sessions...)
	a := newArchiver(t, t.TempDir(), func(o *Options) { o.Workers = 1; o.Streamed = streamed })
	var given, bytesGiven int64
	rep := a.SyncStores(context.Background(), locs, time.Time{}, func(_, _ int, o *Outcome) {
		given++
		bytesGiven += o.Bytes
	})
	require.Equal(t, len(sessions), rep.Counts[ActionNew], "%v", rep.Counts)
	require.Zero(t, rep.Counts[ActionFailed])
	require.Equal(t, int64(len(sessions)), given)
	require.Equal(t, bytesGiven, rep.Bytes)
	if streamed {
		require.Empty(t, rep.Outcomes)
	} else {
		require.Len(t, rep.Outcomes, len(sessions))
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC() // what sync.Pools held (the frames) freed too
	runtime.ReadMemStats(&ms)
	with := ms.HeapAlloc
	runtime.KeepAlive(rep.Outcomes)
	runtime.KeepAlive(rep.Counts)
	runtime.KeepAlive(rep.Stores)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(a)
	return int64(with) - int64(ms.HeapAlloc)
}
