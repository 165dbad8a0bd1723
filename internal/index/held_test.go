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
	type run struct {
		archived bool
		from     int // the run it was rebuilt from (renormalize), 0 for none
		ended    bool
		done     bool        // ended, superseded by none (a rebuild renormalize finished)
		steps    [][2]string // provider, session id
		child    bool        // has a child run (a sub-agent's)
		touched  bool        // its tree written last: its child run, else its file
	}
	cases := []struct {
		name string
		runs []run
		want []int // the superseded runs, from 1
	}{
		{"recorded and archived", []run{{steps: [][2]string{{"claude", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, []int{1}},
		{"recorded with a sub-agent and archived", []run{{child: true, steps: [][2]string{{"claude", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, []int{1}},
		{"recorded twice", []run{{steps: [][2]string{{"goose", "g1"}}}, {steps: [][2]string{{"goose", "g1"}}}, {archived: true, steps: [][2]string{{"goose", "g1"}}}}, []int{1, 2}},
		{"recorded alone", []run{{steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"recorded twice, never archived", []run{{steps: [][2]string{{"claude", "s1"}}}, {steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"other provider", []run{{steps: [][2]string{{"qwen", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"a step naming no session", []run{{steps: [][2]string{{"claude", "s1"}, {"openai", ""}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"one of two sessions archived", []run{{steps: [][2]string{{"claude", "s1"}, {"claude", "s2"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"archived run ended superseded", []run{{steps: [][2]string{{"claude", "s1"}}}, {archived: true, ended: true, steps: [][2]string{{"claude", "s1"}}}}, []int{2}},
		{"rebuild of the archived run", []run{{archived: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, touched: true, steps: [][2]string{{"codex", "t1"}}}}, []int{1}},
		{"rebuild of a recorded run", []run{{steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, touched: true, steps: [][2]string{{"codex", "t1"}}}}, []int{1}},
		{"original written after its rebuild", []run{{child: true, touched: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, steps: [][2]string{{"codex", "t1"}}}}, []int{2}},
		// A renormalize killed before it ended the rebuild: the original,
		// whole, stands for it, though the rebuild was written last.
		{"rebuild not ended", []run{{archived: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, touched: true, steps: [][2]string{{"codex", "t1"}}}}, []int{2}},
	}
	ctx := context.Background()
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "transcripts")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			base := time.Now().Add(-time.Hour)
			var files []string
			words := map[string]int{} // a run's own word: its number
			for i, r := range c.runs {
				id := viewstest.RunID(i + 1)
				b := viewstest.NewBuilder(id, "")
				ev := viewstest.Started("s")
				extra := map[string]json.RawMessage{}
				if r.archived {
					extra[views.SessionSourceField] = json.RawMessage(`{"provider":"x","path":"p","head_sha256":"h"}`)
				}
				if r.from > 0 {
					extra[views.RenormalizedFromField] = json.RawMessage(`"` + viewstest.RunID(r.from) + `"`)
				}
				ev.Payload.(*transcript.StepPayload).Extra = extra
				b.Add(ev)
				word := "word" + string(rune('a'+i))
				words[word] = i + 1
				b.Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("shared "+word)))
				for _, s := range r.steps {
					b.Add(viewstest.Step(transcript.StepStarted, "a", 0, &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}))
					b.Add(viewstest.AgentDone(t, "a", &transcript.AgentResult{Provider: s[0], SessionID: s[1], Status: "ok"}))
				}
				var childID string
				if r.child {
					childID = viewstest.RunID(0x40 + i)
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
				for _, ev := range b.Events() {
					ev.Timestamp = at.Add(time.Duration(i) * time.Minute)
				}
				f := filepath.Join(dir, id+".jsonl")
				viewstest.WriteFile(t, f, b.Bytes(t))
				files = append(files, f)
				mtime := base.Add(time.Duration(i) * time.Second)
				if r.touched && !r.child {
					mtime = base.Add(time.Minute)
				}
				require.NoError(t, os.Chtimes(f, mtime, mtime))
				if childID != "" {
					cb := viewstest.NewBuilder(childID, id)
					cb.Add(viewstest.Started("sub"))
					cb.Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("child run")))
					cf := filepath.Join(dir, childID+".jsonl")
					viewstest.WriteFile(t, cf, cb.Bytes(t))
					cm := mtime
					if r.touched {
						cm = base.Add(time.Minute)
					}
					require.NoError(t, os.Chtimes(cf, cm, cm))
				}
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
			held, err := ix.Held(ctx)
			require.NoError(t, err)
			assert.ElementsMatch(t, want, slices.Collect(maps.Keys(held)), "Held")

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
