package archive

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// killState is what a kill leaves of a storage root: its transcripts
// and its ledger, as they were at one moment.
type killState map[string][]byte // path under root -> bytes

func snapshotKill(t *testing.T, root string) killState {
	t.Helper()
	s := killState{}
	paths, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	paths = append(paths, LedgerFile(root))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		s[rel] = b
	}
	return s
}

// restore makes root's transcripts and ledger those of s, removing the
// transcripts and raw captures of the runs begun after it.
func (s killState) restore(t *testing.T, root string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		if _, ok := s[rel]; !ok {
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.RemoveAll(filepath.Join(root, "raw", strings.TrimSuffix(filepath.Base(p), ".jsonl"))))
		}
	}
	for rel, b := range s {
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), b, 0o600))
	}
}

// killedRepair syncs locs into a new storage root, damages the raw
// capture of the run read from session (its first from replaced by to),
// runs `sync --repair` (Repair, then SyncStores) and leaves the root as a
// kill left it at the first end of a run of the first sync that killAt
// accepts (Options.Written, with the first sync's outcomes by path; n
// counts those ends from 1), before that end
// unless written, the ledger lost too when lost; killAt nil: the repair
// not killed. It returns the root, the first sync's and the repair's
// outcomes by path.
func killedRepair(t *testing.T, locs []Location, session, from, to string, killAt func(first map[string]Outcome, id string, n int) bool, written, lost bool) (root string, first, repaired map[string]Outcome) {
	t.Helper()
	ctx := context.Background()
	root = t.TempDir()
	a := newArchiver(t, root, nil)
	first = byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
	require.NoError(t, a.Close())
	old := map[string]bool{}
	for _, o := range first {
		old[o.RunID] = true
	}
	damageRaw(t, root, first[session].RunID, from, to)
	before := snapshotKill(t, root)
	var at killState
	n := 0
	a = newArchiver(t, root, func(o *Options) {
		o.Written = func(id string) {
			if at != nil || !old[id] || killAt == nil {
				return
			}
			if n++; !killAt(first, id, n) {
				return
			}
			at = snapshotKill(t, root)
			if !written {
				rel := filepath.Join("transcripts", id+".jsonl")
				at[rel] = before[rel]
			}
		}
	})
	require.Empty(t, a.Repair(ctx, checkRaw(t, root).Damaged))
	repaired = byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
	require.NoError(t, a.Close())
	if killAt == nil {
		return root, first, repaired
	}
	require.NotNil(t, at, "the repair ended no damaged run where it was to be killed")
	at.restore(t, root)
	if lost {
		require.NoError(t, os.Remove(LedgerFile(root)))
	}
	return root, first, repaired
}

// TestRepairKilled: `sync --repair` archives a damaged session run again
// (with its sub-agent files' runs, as child runs of the new run) and
// then ends the damaged runs, each superseded by the new one. Killed
// between the two (before it ended any, once it ended the sub-agent
// files' runs, once it wrote the session run's end and before its
// ledger noted it), with the ledger kept or lost (rebuilt from the
// transcripts), the next plain sync, not only the next repair, finishes
// the job: the damaged run ended once, superseded by the new one, each
// sub-agent file held by one live child run of the new run, every token
// counted once as a fresh sync counts it, every run valid, nothing left
// damaged, and a further sync archives nothing. Before, the damaged run
// and its replacement both stayed live until the next repair (the
// session's tokens counted twice), and a sub-agent file whose run the
// repair had ended was held by no live run (its tokens counted nowhere)
// for good.
func TestRepairKilled(t *testing.T) {
	ctx := context.Background()
	h := newSubAgentHome(t)
	want := h.fresh(t)
	require.NotNil(t, want.all.OutputTokens)
	for _, kill := range []struct {
		name string
		// at is the end of a damaged run at which the kill comes
		// (Options.Written, called once the run's end is written):
		// session, else the first of them; written: after that end
		// (else before it: the run's transcript as before the repair).
		session, written bool
	}{
		{"before_ending_any_run", false, false},
		{"before_ending_the_session_run", true, false},
		{"after_ending_the_session_run", true, true},
	} {
		for _, lost := range []bool{false, true} {
			name := kill.name
			if lost {
				name += "_ledger_lost"
			}
			t.Run(name, func(t *testing.T) {
				root, first, repaired := killedRepair(t, h.locs(t, true), h.session, `"type":"user"`, `"type":"usex"`, func(first map[string]Outcome, id string, _ int) bool {
					return !kill.session || id == first[h.session].RunID
				}, kill.written, lost)
				session := first[h.session].RunID
				for _, p := range []string{h.session, h.sub, h.compact} {
					require.Equal(t, ActionNew, repaired[p].Action, "%s: %s", p, repaired[p].Reason)
				}

				a := newArchiver(t, root, nil)
				rep := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
				require.NoError(t, a.Close())
				newSession := repaired[h.session].RunID
				assert.NotEqual(t, ActionNew, rep[h.session].Action, "the session archived a third time: %s", rep[h.session].Reason)
				endedOnceBy(t, root, session, newSession)
				for _, p := range []string{h.sub, h.compact} {
					live := liveRunsOf(t, root, p)
					if assert.Len(t, live, 1, "%s: the live runs of the sub-agent file (%+v)", p, rep[p]) {
						linkedTo(t, root, newSession, live[0])
					}
				}
				got := figures(t, root)
				assert.Equal(t, *want.all.InputTokens, *got.all.InputTokens, "every token once")
				assert.Equal(t, *want.all.OutputTokens, *got.all.OutputTokens, "every token once")
				assert.ElementsMatch(t, []string{session, newSession}, got.listed)
				assert.Empty(t, checkRaw(t, root).Damaged, "nothing left to repair")

				// Later syncs, one with the ledger rebuilt, archive
				// nothing and end nothing twice.
				for _, rebuild := range []bool{false, true} {
					if rebuild {
						require.NoError(t, os.Remove(LedgerFile(root)))
					}
					a := newArchiver(t, root, nil)
					again := a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil)
					require.NoError(t, a.Close())
					assert.Equal(t, 3, again.Counts[ActionUnchanged], "rebuild %v: %+v", rebuild, again.Outcomes)
					endedOnceBy(t, root, session, newSession)
				}
			})
		}
	}
}

// liveRunsOf are the runs of the storage archived from path (run.started's
// source) that no run supersedes (their end names none).
func liveRunsOf(t *testing.T, root, path string) []string {
	t.Helper()
	var out []string
	for _, id := range sessionRuns(t, root) {
		e, _, err := readTranscript(filepath.Join(root, "transcripts", id+".jsonl"))
		require.NoError(t, err)
		if e != nil && e.Path == path && e.SupersededBy == "" {
			out = append(out, id)
		}
	}
	return out
}
