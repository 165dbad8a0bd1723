package usage

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// TestRecordedAndArchived: an agent run under twasm record (claude -p,
// codex exec --json, goose run) also writes its session to the agent's
// store, which twasm sync archives as a run of its own holding the same
// turns again. The session's tokens count once, in the archived run;
// a recorded run the store does not hold (another session, another
// provider, a step naming no session, a session of two parts of which
// the store holds one) still counts. Before, both runs counted.
func TestRecordedAndArchived(t *testing.T) {
	type run struct {
		archived bool
		steps    [][2]string // provider, session id ("" names none)
		tokens   int64       // each step's output tokens
	}
	cases := []struct {
		name string
		runs []run
		want int64 // output tokens in the report's total
	}{
		{"claude recorded then synced", []run{{false, [][2]string{{"claude", "s1"}}, 100}, {true, [][2]string{{"claude", "s1"}}, 300}}, 300},
		{"goose run recorded, sessions.db synced", []run{{false, [][2]string{{"goose", "20251102_1"}}, 120}, {true, [][2]string{{"goose", "20251102_1"}}, 120}}, 120},
		{"two recorded invocations of one synced session", []run{{false, [][2]string{{"codex", "t1"}}, 10}, {false, [][2]string{{"codex", "t1"}}, 20}, {true, [][2]string{{"codex", "t1"}}, 30}}, 30},
		{"recorded alone", []run{{false, [][2]string{{"claude", "s1"}}, 100}}, 100},
		{"another session synced", []run{{false, [][2]string{{"claude", "s1"}}, 100}, {true, [][2]string{{"claude", "s2"}}, 300}}, 400},
		{"same id, another provider", []run{{false, [][2]string{{"qwen", "s1"}}, 100}, {true, [][2]string{{"claude", "s1"}}, 300}}, 400},
		{"recorded step naming no session", []run{{false, [][2]string{{"goose", ""}}, 100}, {true, [][2]string{{"goose", "20251102_1"}}, 300}}, 400},
		{"recorded workflow, one step's session synced", []run{{false, [][2]string{{"claude", "s1"}, {"openai", ""}}, 100}, {true, [][2]string{{"claude", "s1"}}, 300}}, 500},
		{"two archived runs of one session", []run{{true, [][2]string{{"claude", "s1"}}, 100}, {true, [][2]string{{"claude", "s1"}}, 300}}, 400},
	}
	tbl := prices.Bundled()
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var ids []string
			for i, r := range c.runs {
				id := viewstest.RunID(i + 1)
				ids = append(ids, id)
				b := viewstest.NewBuilder(id, "")
				ev := viewstest.Started("s")
				ev.Timestamp = at
				if r.archived {
					ev.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{"source": json.RawMessage(`{"provider":"x","path":"p","head_sha256":"h"}`)}
				}
				b.Add(ev)
				for _, s := range r.steps {
					agentStep(b, t, at, &transcript.AgentResult{Provider: s[0], SessionID: s[1], Model: "m", Status: "ok",
						Usage: &transcript.Usage{InputTokens: n(0), OutputTokens: n(r.tokens)}})
				}
				viewstest.WriteFile(t, filepath.Join(dir, id+".jsonl"), b.Bytes(t))
			}
			src := sources(t, dir, ids, tbl)
			for _, id := range ids { // the index keeps ledgers in their binary form
				src.Ledgers[id] = binaryLedger(t, src.Ledgers[id])
			}
			rep, got := buildOutput(t, src, tbl, Options{By: BySession})
			if got != c.want {
				t.Errorf("output tokens %d, want %d (sessions %d, superseded %d)", got, c.want, rep.Total.Sessions, rep.Superseded)
			}
		})
	}
}

// buildOutput builds the report of src and returns it with the output
// tokens of its total.
func buildOutput(t *testing.T, src Sources, tbl *prices.Table, opt Options) (*Report, int64) {
	t.Helper()
	rep, err := Build(src, tbl.Version(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if u := rep.Total.Usage; u != nil && u.OutputTokens != nil {
		return rep, *u.OutputTokens
	}
	return rep, 0
}
