package archive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
)

// TestSealCutShort: a run of several parts ended by a sync that was
// killed while it sealed the run's raw capture (the ledger line that
// ends the run written, marking the capture to be sealed, and the line
// that clears the mark not: the capture still in a frame per part, and
// beside it the copy the kill left, cut short or whole, or none) is
// sealed by the next sync's Recover: the copy removed, never taken, the
// capture rewritten from itself in whole frames holding the session's
// bytes, every part's result still true (CheckRaw), one "settled"
// outcome, and nothing left for the sync after it. A copy that no mark
// names (left by a twasm before the mark, or found by a rebuilt ledger)
// is found once and settled the same way. The state a kill leaves is
// made from a real sync's: its capture before the seal, its ledger
// without the last line, and a prefix of the sealed capture as the copy.
func TestSealCutShort(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "testdata/captures/claude/spotter_subagent_transcript_v2.1.38.jsonl")
	parts := linesInParts(data, 3)
	require.GreaterOrEqual(t, len(parts), 3)
	sealed := framesOf(t, data)
	for _, tc := range []struct {
		name string
		copy int // bytes of the sealed capture left beside it; -1 none
		// unmarked: the ledger line that ended the run says nothing of
		// sealing (a twasm before the mark); rebuilt: the ledger is lost.
		unmarked, rebuilt bool
		reason            string
	}{
		{"killed while the copy was written", len(sealed) / 2, false, false, "partial copy left beside it was removed"},
		{"killed after the copy was synced, before the rename", len(sealed), false, false, "partial copy left beside it was removed"},
		{"killed before the copy was made", -1, false, false, "was not sealed when the run ended"},
		{"a copy an older twasm left, unmarked", len(sealed) / 3, true, false, "partial copy left beside it was removed"},
		{"a copy found by a rebuilt ledger", 100, false, true, "partial copy left beside it was removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, path := t.TempDir(), filepath.Join(t.TempDir(), "s.jsonl")
			runID := syncInParts(t, root, path, parts)
			rawPath := filepath.Join(root, filepath.FromSlash(ledgerEntry(t, root, runID).Raw))
			unsealed, err := os.ReadFile(rawPath)
			require.NoError(t, err)
			require.Equal(t, framesOf(t, parts...), unsealed, "a frame per part")

			// The sync that ends the run, and seals its capture.
			a := newArchiver(t, root, func(o *Options) { o.CloseIdle = 30 * time.Minute })
			o := a.SyncFile(ctx, "claude", path)
			require.Equal(t, ActionClosed, o.Action, o.Reason)
			require.NoError(t, a.Close())
			got, err := os.ReadFile(rawPath)
			require.NoError(t, err)
			require.Equal(t, sealed, got, "sealed by the sync not killed")

			// What a kill during the seal leaves.
			lf := LedgerFile(root)
			lines := strings.SplitAfter(strings.TrimSuffix(readString(t, lf), "\n"), "\n")
			require.NotContains(t, lines[len(lines)-1], `"seal":true`, "the last line clears the mark")
			require.Contains(t, lines[len(lines)-2], `"seal":true`, "the line that ended the run marks it")
			kept := strings.Join(lines[:len(lines)-1], "")
			if tc.unmarked {
				kept = strings.ReplaceAll(kept, `,"seal":true`, "")
				require.NoError(t, os.Remove(filepath.Join(root, "archive", sealsMarker)))
			}
			require.NoError(t, os.WriteFile(lf, []byte(kept), 0o600))
			if tc.rebuilt {
				require.NoError(t, os.Remove(lf))
			}
			require.NoError(t, os.WriteFile(rawPath, unsealed, 0o600))
			if tc.copy >= 0 {
				require.NoError(t, os.WriteFile(rawPath+rawfile.SealExt, sealed[:tc.copy], 0o600))
			}

			a = newArchiver(t, root, nil)
			require.Len(t, a.Ledger().Unsealed(), 1, "the run whose seal was cut short")
			outs := a.Recover(ctx)
			require.Len(t, outs, 1)
			assert.Equal(t, ActionSettled, outs[0].Action)
			assert.Equal(t, runID, outs[0].RunID)
			assert.Contains(t, outs[0].Reason, tc.reason)
			assert.Contains(t, outs[0].Reason, "the capture sealed from itself")
			assert.Empty(t, a.Ledger().Unsealed())
			assert.NoFileExists(t, rawPath+rawfile.SealExt)
			got, err = os.ReadFile(rawPath)
			require.NoError(t, err)
			assert.Equal(t, sealed, got, "the capture in whole frames")
			back, err := rawfile.ReadFile(rawPath)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data, back), "the session's bytes")
			check, err := CheckRaw(ctx, root, a.Ledger())
			require.NoError(t, err)
			assert.Empty(t, check.Damaged)
			require.NoError(t, a.Close())

			a = newArchiver(t, root, nil)
			assert.Empty(t, a.Recover(ctx), "nothing left for the next sync")
			require.NoError(t, a.Close())
		})
	}
}

// ledgerEntry is the run's ledger entry, read by an archiver opened and
// closed for it.
func ledgerEntry(t *testing.T, root, runID string) Entry {
	t.Helper()
	a := newArchiver(t, root, nil)
	defer a.Close()
	e := a.Ledger().byRun(runID)
	require.NotNil(t, e)
	return *e
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
