package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/transcript"
)

// TestUnbegunChildRun: a sub-agent file's run is begun in three writes,
// in order: its ledger entry (pending, naming its parent), its link in
// the session's run (step.call_workflow.started naming the child run),
// then its own transcript. A kill between the last two (the e2e test
// TestKilledImportHeldRun landed there once in CI) left the link naming
// a run with no transcript: on load the pending entry was dropped as
// never begun, the next sync linked the file again as a new child run,
// and the session's run was invalid for good ("child_missing") and
// linked the sub-agent twice. Now the entry is kept and the run begun,
// under the link already written, by the part that continues it: the
// child run holds the link's id, the session's run links it once, the
// storage holds what one sync never killed holds, every run valid. With
// the sub-agent's file gone meanwhile, the run is begun and ended as
// cancelled, so that the link still names a transcript.
func TestUnbegunChildRun(t *testing.T) {
	ctx := context.Background()
	for _, gone := range []bool{false, true} {
		t.Run(map[bool]string{false: "file_there", true: "file_gone"}[gone], func(t *testing.T) {
			h := newSubAgentHome(t)
			require.NoError(t, os.Remove(h.compact))
			want := h.fresh(t)
			sub, err := os.ReadFile(h.sub)
			require.NoError(t, err)

			// The session's run first, then the kill state of the sync
			// that links the sub-agent's file: the entry and the link
			// written, nothing else.
			root := t.TempDir()
			require.NoError(t, os.Remove(h.sub))
			a := newArchiver(t, root, nil)
			first := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
			require.NoError(t, a.Close())
			parent := first[h.session].RunID
			require.NotEmpty(t, parent)
			before := snapshotKill(t, root)
			writeAged(t, h.sub, sub, time.Hour)
			a = newArchiver(t, root, nil)
			second := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
			require.NoError(t, a.Close())
			child := second[h.sub].RunID
			require.NotEmpty(t, child)
			after := snapshotKill(t, root)
			ledger := LedgerFile(root)
			relLedger, _ := filepath.Rel(root, ledger)
			relParent := filepath.Join("transcripts", parent+".jsonl")
			kill := killState{}
			for k, v := range before {
				kill[k] = v
			}
			// The ledger up to the child run's entry naming its parent.
			lines := before[relLedger]
			for rest := after[relLedger][len(lines):]; ; {
				line := firstNewLine(t, nil, rest)
				rest, lines = rest[len(line):], append(append([]byte(nil), lines...), line...)
				var e Entry
				require.NoError(t, json.Unmarshal(line, &e))
				require.Equal(t, child, e.RunID, "the sync's first ledger lines are the child run's entry")
				require.True(t, e.Pending)
				if e.Parent == parent {
					break
				}
			}
			kill[relLedger] = lines
			link := firstNewLine(t, before[relParent], after[relParent])
			ev, err := transcript.DecodeEvent(bytes.TrimSuffix(link, []byte("\n")))
			require.NoError(t, err)
			require.Equal(t, transcript.StepCallWorkflowStarted, ev.Type)
			require.Equal(t, child, ev.ChildRunID, "the session run's next line links the child run")
			kill[relParent] = append(append([]byte(nil), before[relParent]...), link...)
			kill.restore(t, root)
			require.NoError(t, os.RemoveAll(filepath.Join(root, "raw", child)))
			if gone {
				require.NoError(t, os.Remove(h.sub))
			}

			a = newArchiver(t, root, nil)
			settled := a.Recover(ctx)
			third := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
			require.NoError(t, a.Close())
			t.Logf("settled: %+v\nthen: %+v", settled, third)
			linkedTo(t, root, parent, child)
			evs := readRun(t, root, child).events
			if gone {
				last := evs[len(evs)-1]
				require.Equal(t, transcript.RunCompleted, last.Type)
				assert.Equal(t, transcript.StatusCancelled, last.Step().Status)
				return
			}
			if o := third[h.sub]; o.RunID != "" {
				assert.Equal(t, child, o.RunID, "the sub-agent's file is archived in the run its link names")
			}
			got := figures(t, root)
			assert.Len(t, got.listed, len(want.listed), "runs listed")
			assert.Equal(t, *want.all.InputTokens, *got.all.InputTokens, "every token once")
			assert.Equal(t, *want.all.OutputTokens, *got.all.OutputTokens, "every token once")
		})
	}
}

// firstNewLine is the first line after's bytes hold beyond before's,
// which they start with.
func firstNewLine(t *testing.T, before, after []byte) []byte {
	t.Helper()
	require.True(t, bytes.HasPrefix(after, before), "the file was only appended to")
	rest := after[len(before):]
	i := bytes.IndexByte(rest, '\n')
	require.GreaterOrEqual(t, i, 0, "a new line")
	return rest[:i+1]
}
