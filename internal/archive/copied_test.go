package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/rawfile"
)

// TestSyncCopiedLines: the Kimi CLI's /fork writes its parent's journal
// lines into a new session's with no mark, and the parent goes on. A new
// session whose file starts with bytes a run of the same head holds, past
// the head, gets a facts line naming that run and how many lines it
// shares (abi.SourceFacts.Copied), and the plugin counts their tokens in
// that run only: the parent's run 65 + 12 output tokens, the fork's 36
// (not 65 + 36). A copy of a session's bytes (the same bytes elsewhere)
// is that session, as before; a session of another head, or one whose
// file shares no line past the head (a copy of the first lines only),
// names no copy; neither does a later sync.
func TestSyncCopiedLines(t *testing.T) {
	ctx := context.Background()
	golden := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "kimi", name))
		require.NoError(t, err)
		return b
	}
	tail := func(b []byte) []byte { _, rest, _ := bytes.Cut(b, []byte("\n")); return rest }
	shared := golden("legacy_side_question.jsonl")                                              // 15 lines, 65 output tokens
	parent := append(slices.Clone(shared), tail(golden("legacy_hook_blocked_prompt.jsonl"))...) // 12 more
	fork := append(slices.Clone(shared), tail(golden("legacy_step_failed.jsonl"))...)           // 36 more
	other := golden("legacy_step_failed.jsonl")
	first := bytes.SplitAfterN(shared, []byte("\n"), 3)
	headOnly := append(first[0], first[1]...) // the head (two lines), then another turn
	headOnly = append(slices.Clone(headOnly), tail(tail(golden("legacy_hook_blocked_prompt.jsonl")))...)

	home, root := t.TempDir(), t.TempDir()
	sessions := filepath.Join(home, ".kimi", "sessions", "3f2a1b0c9d8e")
	put := func(session string, b []byte, age time.Duration) string {
		p := filepath.Join(sessions, session, "wire.jsonl")
		writeAged(t, p, b, age)
		return p
	}
	pPath := put("a-parent", parent, 3*time.Hour)
	fPath := put("b-fork", fork, 2*time.Hour)
	cPath := put("c-copy", parent, 2*time.Hour)
	oPath := put("d-other", other, time.Hour)
	hPath := put("e-head-only", headOnly, time.Hour)
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	locs := Discover(env, "linux", bundledDeclared(), &Config{})

	a := newArchiver(t, root, nil)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	byPath := map[string]*Outcome{}
	for i := range rep.Outcomes {
		byPath[rep.Outcomes[i].Path] = &rep.Outcomes[i]
	}
	for _, p := range []string{pPath, fPath, cPath, oPath, hPath} {
		require.NotNil(t, byPath[p], "outcome of %s: %v", p, rep.Outcomes)
	}
	pRun := byPath[pPath].RunID
	assert.Equal(t, ActionNew, byPath[pPath].Action)
	assert.Equal(t, ActionUnchanged, byPath[cPath].Action, "the same bytes elsewhere are the parent's run")
	for _, p := range []string{fPath, oPath, hPath} {
		assert.Equal(t, ActionNew, byPath[p].Action, p)
	}
	assert.Contains(t, byPath[fPath].Reason, "its first 15 lines are the first lines run "+pRun+" holds")
	assert.NotContains(t, byPath[oPath].Reason+byPath[hPath].Reason, "are those run")

	// The fork's raw capture keeps the facts line that says so.
	raws, err := filepath.Glob(filepath.Join(root, "raw", byPath[fPath].RunID, "*.raw"+rawfile.Ext))
	require.NoError(t, err)
	require.Len(t, raws, 1)
	raw, err := rawfile.ReadFile(raws[0])
	require.NoError(t, err)
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	var facts abi.SourceFacts
	require.NoError(t, json.Unmarshal(line, &facts))
	assert.Equal(t, &abi.SourceCopy{Run: pRun, Lines: 15}, facts.Copied)

	outputs := map[string]int64{}
	for _, p := range []string{pPath, fPath, oPath, hPath} {
		outputs[p] = readRun(t, root, byPath[p].RunID).output
	}
	assert.Equal(t, map[string]int64{pPath: 65 + 12, fPath: 36, oPath: 36, hPath: 12}, outputs)
	assert.True(t, slices.ContainsFunc(readRun(t, root, byPath[fPath].RunID).parts[0].Warnings, func(w string) bool {
		return strings.Contains(w, "lines are those run "+pRun+" holds")
	}))

	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	assert.Zero(t, rep.Counts[ActionNew], "%v", rep.Outcomes)
	assert.Zero(t, rep.Counts[ActionGrown], "%v", rep.Outcomes)
}

// TestRecoverCopiedFirstPart: a sync killed while it wrote a fork's first
// part (TestSyncCopiedLines) leaves the fork's entry pending, holding
// nothing; the next sync continues that run from the file's start, and
// its facts line still names the lines the parent's run holds: the fork
// counts its own 36 output tokens, not the parent's 65 too.
func TestRecoverCopiedFirstPart(t *testing.T) {
	ctx := context.Background()
	golden := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "kimi", name))
		require.NoError(t, err)
		return b
	}
	shared := golden("legacy_side_question.jsonl")
	_, later, _ := bytes.Cut(golden("legacy_hook_blocked_prompt.jsonl"), []byte("\n"))
	_, own, _ := bytes.Cut(golden("legacy_step_failed.jsonl"), []byte("\n"))
	home, root := t.TempDir(), t.TempDir()
	sessions := filepath.Join(home, ".kimi", "sessions", "3f2a1b0c9d8e")
	writeAged(t, filepath.Join(sessions, "a-parent", "wire.jsonl"), append(slices.Clone(shared), later...), 3*time.Hour)
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	locs := Discover(env, "linux", bundledDeclared(), &Config{})
	a := newArchiver(t, root, nil)
	a.SyncStores(ctx, locs, time.Time{}, nil)
	require.NoError(t, a.Close())
	before := snapshot(t, root)

	fork := filepath.Join(sessions, "b-fork", "wire.jsonl")
	writeAged(t, fork, append(slices.Clone(shared), own...), 2*time.Hour)
	a = newArchiver(t, root, nil)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.NoError(t, a.Close())
	var runID string
	for _, o := range rep.Outcomes {
		if o.Path == fork {
			runID = o.RunID
		}
	}
	require.NotEmpty(t, runID)
	after := snapshot(t, root)

	for _, k := range []int{1, 3} {
		r := t.TempDir()
		killedAt(t, before, after, runID, k, false, 0.5).restore(t, r)
		b := newArchiver(t, r, nil)
		b.Recover(ctx)
		b.SyncStores(ctx, locs, time.Time{}, nil)
		runs := map[string]int64{}
		for _, id := range sessionRuns(t, r) {
			runs[id] = readRun(t, r, id).output
		}
		assert.Equal(t, int64(36), runs[runID], "killed at transcript line %d: the fork's run (all: %v)", k, runs)
		require.NoError(t, b.Close())
	}
}
