package index

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// TestHeldAsLsDecides: the runs List and Search leave out (Held) are
// those views.Superseded finds from the runs' digests, as ls, stats and
// usage decide: a run recorded from an agent's output whose every
// session a top-level run archived from the agent's store holds, and
// the original of a renormalize rebuild (the rebuild when the
// original's tree was written last). Each run says one word of its own
// and "shared", which every run says: Search finds "shared" once per
// run left listed, and ListQuery.Superseded / Query.Superseded list and
// find them all, the superseded marked. Before, List and Search left
// out only what the superseded table names: a recorded claude run and
// the synced session of the same id were both listed and both found.
func TestHeldAsLsDecides(t *testing.T) {
	cases := []struct {
		name string
		runs []heldRun
		want []int // the superseded runs, from 1
	}{
		{"recorded and archived", []heldRun{{steps: [][2]string{{"claude", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, []int{1}},
		{"recorded with a sub-agent and archived", []heldRun{{child: true, steps: [][2]string{{"claude", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, []int{1}},
		{"recorded twice", []heldRun{{steps: [][2]string{{"goose", "g1"}}}, {steps: [][2]string{{"goose", "g1"}}}, {archived: true, steps: [][2]string{{"goose", "g1"}}}}, []int{1, 2}},
		{"recorded alone", []heldRun{{steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"recorded twice, never archived", []heldRun{{steps: [][2]string{{"claude", "s1"}}}, {steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"other provider", []heldRun{{steps: [][2]string{{"qwen", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"a step naming no session", []heldRun{{steps: [][2]string{{"claude", "s1"}, {"openai", ""}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"one of two sessions archived", []heldRun{{steps: [][2]string{{"claude", "s1"}, {"claude", "s2"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"archived run ended superseded", []heldRun{{steps: [][2]string{{"claude", "s1"}}}, {archived: true, ended: true, steps: [][2]string{{"claude", "s1"}}}}, []int{2}},
		{"rebuild of the archived run", []heldRun{{archived: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, touched: true, steps: [][2]string{{"codex", "t1"}}}}, []int{1}},
		{"rebuild of a recorded run", []heldRun{{steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, touched: true, steps: [][2]string{{"codex", "t1"}}}}, []int{1}},
		{"original written after its rebuild", []heldRun{{child: true, touched: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, steps: [][2]string{{"codex", "t1"}}}}, []int{2}},
		// A renormalize killed before it ended the rebuild: the original,
		// whole, stands for it, though the rebuild was written last.
		{"rebuild not ended", []heldRun{{archived: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, touched: true, steps: [][2]string{{"codex", "t1"}}}}, []int{2}},
		// sync --repair of a damaged run that had ended: the new run's
		// start says it holds it again; a kill before the new run's
		// first part, its session not read again, ends it holding
		// nothing, superseded by the damaged run, which stands again.
		// (A recorded run of the session too: Held decides the runs of
		// a session a recorded run names.)
		{"repair of an ended run", []heldRun{{archived: true, done: true, steps: [][2]string{{"claude", "s1"}}}, {archived: true, holds: 1, steps: [][2]string{{"claude", "s1"}}}, {steps: [][2]string{{"claude", "s1"}}}}, []int{1, 3}},
		{"repair of an ended run cut short", []heldRun{{archived: true, done: true, steps: [][2]string{{"claude", "s1"}}}, {archived: true, holds: 1, by: 1}, {steps: [][2]string{{"claude", "s1"}}}}, []int{2, 3}},
	}
	ctx := context.Background()
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "transcripts")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			files := writeHeldRuns(t, dir, c.runs, at, time.Now().Add(-time.Hour))
			words := map[string]int{} // a run's own word: its number
			for i := range c.runs {
				words["word"+string(rune('a'+i))] = i + 1
			}
			// What ls decides from the same files.
			heads := map[string]views.RunHead{}
			for _, f := range files {
				d := views.DigestFile(f)
				require.Empty(t, d.LoadErr)
				heads[d.RunID] = d.RunHead
			}
			lsGone := views.Superseded(heads, views.TreeTime(func(id string) []string {
				out := []string{filepath.Join(dir, id+".jsonl")}
				for i, r := range c.runs {
					if r.child && viewstest.RunID(i+1) == id {
						out = append(out, filepath.Join(dir, viewstest.RunID(0x40+i)+".jsonl"))
					}
				}
				return out
			}))
			var want []string
			for _, i := range c.want {
				want = append(want, viewstest.RunID(i))
			}
			require.ElementsMatch(t, want, slices.Collect(maps.Keys(lsGone)), "views.Superseded (the test's premise)")

			ix, _, err := Open(ctx, root)
			require.NoError(t, err)
			defer ix.Close()
			_, err = ix.Update(ctx)
			require.NoError(t, err)
			// Held decides the runs of the sessions a recorded run names;
			// with what the superseded table says (Gone: what List and
			// Search leave out), the top-level runs views.Superseded holds.
			held, err := ix.Held(ctx)
			require.NoError(t, err)
			assert.Subset(t, want, slices.Collect(maps.Keys(held)), "Held")
			gone, err := ix.Gone(ctx)
			require.NoError(t, err)
			var top []string
			for id := range gone {
				if slices.Contains(files, filepath.Join(dir, id+".jsonl")) {
					top = append(top, id)
				}
			}
			assert.ElementsMatch(t, want, top, "Gone's top-level runs")

			var stands []string
			for i := range c.runs {
				if id := viewstest.RunID(i + 1); !lsGone[id] {
					stands = append(stands, id)
				}
			}
			listed := func(q ListQuery) (ids []string, marked []string) {
				page, _, err := ix.List(ctx, q)
				require.NoError(t, err)
				for _, r := range page {
					ids = append(ids, r.RunID)
					if r.Superseded {
						marked = append(marked, r.RunID)
					}
				}
				return ids, marked
			}
			got, _ := listed(ListQuery{})
			assert.ElementsMatch(t, stands, got, "listed")
			all, marked := listed(ListQuery{Superseded: true})
			assert.Len(t, all, len(c.runs), "listed with Superseded")
			assert.ElementsMatch(t, want, marked, "marked superseded")
			// Gone is what List marks, child runs included.
			every, everyMarked := listed(ListQuery{Superseded: true, Children: true})
			assert.ElementsMatch(t, everyMarked, slices.Collect(maps.Keys(gone)), "Gone, against List's marks of %v", every)

			found := func(q Query) []string {
				hits, err := ix.Search(ctx, q)
				require.NoError(t, err)
				var ids []string
				for _, h := range hits {
					ids = append(ids, h.RunID)
				}
				return ids
			}
			assert.ElementsMatch(t, stands, found(Query{Text: "shared", Every: true}), "found")
			assert.Len(t, found(Query{Text: "shared", Every: true, Superseded: true}), len(c.runs), "found with Superseded")
			for w, i := range words {
				if got := found(Query{Text: w}); lsGone[viewstest.RunID(i)] {
					assert.Empty(t, got, "a superseded run's own word")
				} else {
					assert.Equal(t, []string{viewstest.RunID(i)}, got, "a standing run's own word")
				}
			}
			// A superseded run's child run is left out with it.
			for i, r := range c.runs {
				if r.child {
					got := found(Query{Text: "child", Every: true})
					if lsGone[viewstest.RunID(i+1)] {
						assert.Empty(t, got, "a superseded run's child")
					} else {
						assert.Len(t, got, 1, "a standing run's child")
					}
				}
			}
		})
	}
}

// heldRun is a run of the held tests' storages.
type heldRun struct {
	archived bool
	from     int // the run it was rebuilt from (renormalize), 0 for none
	ended    bool
	done     bool        // ended, superseded by none (a rebuild renormalize finished)
	steps    [][2]string // provider, session id
	child    bool        // has a child run (a sub-agent's)
	touched  bool        // its tree written last: its child run (after any file), else its file
	gone     bool        // no transcript (removed)
	// holds: the ended run its start says it holds again
	// (supersedes_runs: sync --repair of an ended run), 0 for none;
	// by: the run its end names as superseding it, 0 for none.
	holds, by int
}

// writeHeldRuns writes the transcripts of runs into dir (run i+1 is
// viewstest.RunID(i+1), its child run 0x40+i), the same bytes and
// times for the same run, and removes those gone. Each says "shared"
// and a word of its own ("word" and a letter); it returns the runs'
// files (their child runs' left out).
func writeHeldRuns(t *testing.T, dir string, runs []heldRun, at, base time.Time) []string {
	t.Helper()
	var files []string
	for i, r := range runs {
		id := viewstest.RunID(i + 1)
		f := filepath.Join(dir, id+".jsonl")
		childID := viewstest.RunID(0x40 + i)
		cf := filepath.Join(dir, childID+".jsonl")
		if r.gone {
			for _, p := range []string{f, cf} {
				if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			continue
		}
		b := viewstest.NewBuilder(id, "")
		ev := viewstest.Started("s")
		extra := map[string]json.RawMessage{}
		if r.archived {
			extra[views.SessionSourceField] = json.RawMessage(`{"provider":"x","path":"p","head_sha256":"h"}`)
		}
		if r.from > 0 {
			extra[views.RenormalizedFromField] = json.RawMessage(`"` + viewstest.RunID(r.from) + `"`)
		}
		if r.holds > 0 {
			extra[lifecycle.SupersedesRunsField] = json.RawMessage(`["` + viewstest.RunID(r.holds) + `"]`)
		}
		ev.Payload.(*transcript.StepPayload).Extra = extra
		b.Add(ev)
		b.Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("shared word"+string(rune('a'+i)))))
		for _, s := range r.steps {
			b.Add(viewstest.Step(transcript.StepStarted, "a", 0, &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}))
			b.Add(viewstest.AgentDone(t, "a", &transcript.AgentResult{Provider: s[0], SessionID: s[1], Status: "ok"}))
		}
		if r.child {
			b.Add(viewstest.Step(transcript.StepCallWorkflowStarted, "sub", 0, &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow}))
			b.Events()[len(b.Events())-1].ChildRunID = childID
		}
		if r.ended {
			done := viewstest.Completed("s", "ok", "")
			done.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{"superseded_by": json.RawMessage(`"` + viewstest.RunID(9) + `"`)}
			b.Add(done)
		}
		if r.done {
			b.Add(viewstest.Completed("s", "ok", ""))
		}
		if r.by > 0 {
			done := viewstest.Completed("s", "cancelled", "")
			done.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{"superseded_by": json.RawMessage(`"` + viewstest.RunID(r.by) + `"`)}
			b.Add(done)
		}
		for _, ev := range b.Events() {
			ev.Timestamp = at.Add(time.Duration(i) * time.Minute)
		}
		viewstest.WriteFile(t, f, b.Bytes(t))
		files = append(files, f)
		mtime := base.Add(time.Duration(i) * time.Second)
		if r.touched && !r.child {
			mtime = base.Add(time.Minute)
		}
		require.NoError(t, os.Chtimes(f, mtime, mtime))
		if r.child {
			cb := viewstest.NewBuilder(childID, id)
			cb.Add(viewstest.Started("sub"))
			cb.Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("child run")))
			viewstest.WriteFile(t, cf, cb.Bytes(t))
			cm := mtime
			if r.touched {
				cm = base.Add(2 * time.Minute) // written last of all
			}
			require.NoError(t, os.Chtimes(cf, cm, cm))
		}
	}
	return files
}

// TestHeldAfterUpdates: Held (what List and Search leave out) stays what
// it is for an index built from nothing as the runs that decide it come,
// change or go one update after another: the held table is kept by each
// write for the runs it concerns, a run among them or not, and read
// as kept (before, every listing and search decided it again from the
// runs sharing a session with a recorded run). Each case's steps are
// the storage after each update, the runs held after it.
func TestHeldAfterUpdates(t *testing.T) {
	s1, s12 := [][2]string{{"claude", "s1"}}, [][2]string{{"claude", "s1"}, {"claude", "s2"}}
	t1 := [][2]string{{"codex", "t1"}}
	type step struct {
		runs []heldRun
		want []int // the held runs, from 1
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"archived after the recorded run", []step{
			{[]heldRun{{steps: s1}}, nil},
			{[]heldRun{{steps: s1}, {archived: true, steps: s1}}, []int{1}},
		}},
		{"recorded after the archived run", []step{
			{[]heldRun{{gone: true}, {archived: true, steps: s1}}, nil},
			{[]heldRun{{steps: s1}, {archived: true, steps: s1}}, []int{1}},
		}},
		{"recorded twice, archived later", []step{
			{[]heldRun{{steps: s1}, {steps: s1}}, nil},
			{[]heldRun{{steps: s1}, {steps: s1}, {archived: true, steps: s1}}, []int{1, 2}},
		}},
		{"archived run removed", []step{
			{[]heldRun{{steps: s1}, {archived: true, steps: s1}}, []int{1}},
			{[]heldRun{{steps: s1}, {gone: true}}, nil},
		}},
		// An interrupted archive, superseded by its own end, holds
		// nothing; the sync that archives the session whole does.
		{"a repair settled by a later sync", []step{
			{[]heldRun{{steps: s1}, {archived: true, ended: true, steps: s1}}, []int{2}},
			{[]heldRun{{steps: s1}, {archived: true, ended: true, steps: s1}, {archived: true, steps: s1}}, []int{1, 2}},
		}},
		{"the archived run grows to the recorded run's other session", []step{
			{[]heldRun{{steps: s12}, {archived: true, steps: s1}}, nil},
			{[]heldRun{{steps: s12}, {archived: true, steps: s12}}, []int{1}},
		}},
		{"a rebuild that finishes later", []step{
			{[]heldRun{{archived: true, steps: t1}, {from: 1, touched: true, steps: t1}}, []int{2}},
			{[]heldRun{{archived: true, steps: t1}, {from: 1, done: true, touched: true, steps: t1}}, []int{1}},
		}},
		{"the original's sub-agent written after its rebuild", []step{
			{[]heldRun{{child: true, steps: t1}, {from: 1, done: true, touched: true, steps: t1}}, []int{1}},
			{[]heldRun{{child: true, touched: true, steps: t1}, {from: 1, done: true, touched: true, steps: t1}}, []int{2}},
		}},
		{"a rebuild of an archived run holds a recorded run", []step{
			{[]heldRun{{steps: t1}, {archived: true, steps: [][2]string{{"codex", "t0"}}}}, nil},
			{[]heldRun{{steps: t1}, {gone: true}, {from: 2, done: true, touched: true, steps: t1}}, nil},
			{[]heldRun{{steps: t1}, {archived: true, steps: [][2]string{{"codex", "t0"}}}, {from: 2, done: true, touched: true, steps: t1}}, []int{1, 2}},
		}},
		// A run its own end supersedes is one Held's rule concerns once
		// a recorded run names its session.
		{"a recorded run names a superseded run's session later", []step{
			{[]heldRun{{gone: true}, {archived: true, ended: true, steps: s1}}, nil},
			{[]heldRun{{steps: s1}, {archived: true, ended: true, steps: s1}}, []int{2}},
		}},
	}
	ctx := context.Background()
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "transcripts")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			base := time.Now().Add(-time.Hour)
			ix, _, err := Open(ctx, root)
			require.NoError(t, err)
			defer ix.Close()
			for i, s := range c.steps {
				writeHeldRuns(t, dir, s.runs, at, base)
				_, err := ix.Check(ctx) // the files grown, without the journal
				require.NoError(t, err)
				var want []string
				for _, n := range s.want {
					want = append(want, viewstest.RunID(n))
				}
				held, err := ix.Held(ctx)
				require.NoError(t, err)
				assert.ElementsMatch(t, want, slices.Collect(maps.Keys(held)), "step %d: Held", i+1)

				// The same storage indexed from nothing.
				fx, _, err := Open(ctx, copyTranscripts(t, root))
				require.NoError(t, err)
				_, err = fx.Update(ctx)
				require.NoError(t, err)
				built, err := fx.Held(ctx)
				require.NoError(t, err)
				assert.ElementsMatch(t, slices.Collect(maps.Keys(built)), slices.Collect(maps.Keys(held)), "step %d: Held built from nothing", i+1)
				for _, q := range []ListQuery{{}, {Superseded: true}} {
					got, _, err := ix.List(ctx, q)
					require.NoError(t, err)
					exp, _, err := fx.List(ctx, q)
					require.NoError(t, err)
					assert.Equal(t, listedIDs(exp), listedIDs(got), "step %d: List(%+v)", i+1, q)
				}
				require.NoError(t, fx.Close())
			}
			// A listing or a search reads the answer kept, not what
			// decides it: the same without the rows it was decided by.
			want, err := ix.Held(ctx)
			require.NoError(t, err)
			_, err = ix.db.ExecContext(ctx, `DELETE FROM sessions; DELETE FROM rebuilt`)
			require.NoError(t, err)
			held, err := ix.Held(ctx)
			require.NoError(t, err)
			assert.ElementsMatch(t, slices.Collect(maps.Keys(want)), slices.Collect(maps.Keys(held)), "Held read from what it keeps")
		})
	}
}

// listedIDs are the runs of a page, a superseded run's marked.
func listedIDs(page []ListedRun) []string {
	var out []string
	for _, r := range page {
		id := r.RunID
		if r.Superseded {
			id += " superseded"
		}
		out = append(out, id)
	}
	return out
}

// TestFacetsLeaveHeldOut: the values the listing's filters offer are
// those of the runs it lists: a value only a run another holds again
// has (a rebuild's original, a run whose end names the run holding it)
// is offered only when superseded runs are listed too.
func TestFacetsLeaveHeldOut(t *testing.T) {
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		runs         []heldRun
		shown, every []string // providers offered by default, with superseded
	}{
		{"none held", []heldRun{{steps: [][2]string{{"codex", "t1"}}}, {steps: [][2]string{{"claude", "c1"}}}},
			[]string{"claude", "codex"}, []string{"claude", "codex"}},
		{"a rebuild's original", []heldRun{{steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, touched: true, steps: [][2]string{{"claude", "t1"}}}},
			[]string{"claude"}, []string{"claude", "codex"}},
		{"a run whose end names the run holding it", []heldRun{{ended: true, steps: [][2]string{{"pi", "p1"}}}, {steps: [][2]string{{"qwen", "q1"}}}},
			[]string{"qwen"}, []string{"pi", "qwen"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "transcripts")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			writeHeldRuns(t, dir, tt.runs, at, time.Now().Add(-time.Hour))
			ix, _ := openUpdated(t, root)
			for _, c := range []struct {
				superseded bool
				want       []string
			}{{false, tt.shown}, {true, tt.every}} {
				f, err := ix.Facets(context.Background(), c.superseded)
				require.NoError(t, err)
				assert.Equal(t, c.want, f.Providers, "providers offered, superseded %v", c.superseded)
			}
		})
	}
}
