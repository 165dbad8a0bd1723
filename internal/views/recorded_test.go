package views

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// TestSupersededRecorded: a run recorded from an agent's output whose
// every agent step names a session that a top-level run archived from
// the agent's store holds (the same provider and session id) is
// superseded by it, as the digests ls and stats read say; other runs
// are not. Before, no recorded run was.
func TestSupersededRecorded(t *testing.T) {
	type run struct {
		archived bool
		from     int // the run it was rebuilt from (renormalize), 0 for none
		ended    bool
		done     bool // ended, superseded by none
		// holds: the ended run its start says it holds again
		// (supersedes_runs: a repair of an ended run), 0 for none;
		// by: the run its end names as superseding it, 0 for none.
		holds, by int
		steps     [][2]string // provider, session id
	}
	cases := []struct {
		name string
		runs []run
		want []int // the superseded runs, from 1
	}{
		{"recorded and archived", []run{{steps: [][2]string{{"claude", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, []int{1}},
		{"recorded twice", []run{{steps: [][2]string{{"goose", "g1"}}}, {steps: [][2]string{{"goose", "g1"}}}, {archived: true, steps: [][2]string{{"goose", "g1"}}}}, []int{1, 2}},
		{"recorded alone", []run{{steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"other provider", []run{{steps: [][2]string{{"qwen", "s1"}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"a step naming no session", []run{{steps: [][2]string{{"claude", "s1"}, {"openai", ""}}}, {archived: true, steps: [][2]string{{"claude", "s1"}}}}, nil},
		{"archived run ended superseded", []run{{steps: [][2]string{{"claude", "s1"}}}, {archived: true, ended: true, steps: [][2]string{{"claude", "s1"}}}}, []int{2}},
		{"rebuild of the archived run", []run{{archived: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, done: true, steps: [][2]string{{"codex", "t1"}}}}, []int{1}},
		// A renormalize killed before it ended the rebuild: the rebuild
		// holds part of the original, which stands for it.
		{"rebuild not ended", []run{{archived: true, steps: [][2]string{{"codex", "t1"}}}, {from: 1, steps: [][2]string{{"codex", "t1"}}}}, []int{2}},
		// sync --repair of a damaged run that had ended: the new run's
		// start says it holds it again.
		{"repair of an ended run", []run{{archived: true, done: true, steps: [][2]string{{"claude", "s1"}}}, {archived: true, holds: 1, steps: [][2]string{{"claude", "s1"}}}}, []int{1}},
		// ... and a kill before the new run's first part, its session
		// not read again: the new run ends holding nothing, superseded
		// by the damaged run, which stands again.
		{"repair of an ended run cut short", []run{{archived: true, done: true, steps: [][2]string{{"claude", "s1"}}}, {archived: true, holds: 1, by: 1}}, []int{2}},
	}
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			heads := map[string]RunHead{}
			dir := t.TempDir()
			for i, r := range c.runs {
				b := viewstest.NewBuilder(viewstest.RunID(i+1), "")
				ev := viewstest.Started("s")
				ev.Timestamp = at
				extra := map[string]json.RawMessage{}
				if r.archived {
					extra[SessionSourceField] = json.RawMessage(`{"provider":"x","path":"p","head_sha256":"h"}`)
				}
				if r.from > 0 {
					extra[RenormalizedFromField] = json.RawMessage(`"` + viewstest.RunID(r.from) + `"`)
				}
				if r.holds > 0 {
					extra[lifecycle.SupersedesRunsField] = json.RawMessage(`["` + viewstest.RunID(r.holds) + `"]`)
				}
				ev.Payload.(*transcript.StepPayload).Extra = extra
				b.Add(ev)
				for _, s := range r.steps {
					b.Add(viewstest.Step(transcript.StepStarted, "a", 0, &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}))
					b.Add(viewstest.AgentDone(t, "a", &transcript.AgentResult{Provider: s[0], SessionID: s[1], Status: "ok"}))
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
					done.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{lifecycle.SupersededByField: json.RawMessage(`"` + viewstest.RunID(r.by) + `"`)}
					b.Add(done)
				}
				d := DigestFile(writeRun(t, dir, b))
				// the index keeps a digest as JSON
				data, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				var back RunDigest
				if err := json.Unmarshal(data, &back); err != nil {
					t.Fatal(err)
				}
				heads[back.RunID] = back.RunHead
			}
			got := slices.Sorted(maps.Keys(Superseded(heads, func(string) time.Time { return time.Time{} })))
			var want []string
			for _, i := range c.want {
				want = append(want, viewstest.RunID(i))
			}
			if !slices.Equal(got, want) {
				t.Errorf("superseded %v, want %v", got, want)
			}
		})
	}
}
