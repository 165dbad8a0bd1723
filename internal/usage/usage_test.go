package usage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

func n(v int64) *int64 { return &v }

var (
	day1 = time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	day2 = time.Date(2026, 8, 2, 23, 50, 0, 0, time.UTC) // 2026-08-03 in UTC+1
)

func msg(path, model string, at time.Time, u *transcript.Usage) *transcript.Event {
	return &transcript.Event{Type: transcript.MessageAssistant, Path: path, Timestamp: at,
		Payload: &transcript.MessagePayload{Role: "assistant", Model: model, Usage: u, Blocks: []transcript.Block{transcript.TextBlock("ok")}}}
}

func agentStep(b *viewstest.Builder, t *testing.T, at time.Time, r *transcript.AgentResult, msgs ...*transcript.Event) {
	st := viewstest.Step(transcript.StepStarted, "s", 0, &transcript.StepPayload{Name: "s", Kind: transcript.KindAgent})
	st.Timestamp = at
	b.Add(st)
	for _, m := range msgs {
		b.Add(m)
	}
	done := viewstest.AgentDone(t, "s", r)
	done.Timestamp = at.Add(time.Minute)
	b.Add(done)
}

// store writes five runs: a Claude session with a sub-agent (priced per
// message), a Codex session that states its cost and its renormalize
// rebuild (counted once), and a session of a model the table lacks.
func store(t *testing.T) (dir string, ids []string) {
	dir = t.TempDir()
	a, child, b, rebuilt, c := viewstest.RunID(1), viewstest.RunID(2), viewstest.RunID(3), viewstest.RunID(4), viewstest.RunID(5)
	write := func(bl *viewstest.Builder, mtime time.Time) {
		p := filepath.Join(dir, bl.RunID+".jsonl")
		viewstest.WriteFile(t, p, bl.Bytes(t))
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	started := func(bl *viewstest.Builder, at time.Time, from string) {
		ev := viewstest.Started("s")
		ev.Timestamp = at
		if from != "" {
			ev.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{"renormalized_from": json.RawMessage(`"` + from + `"`)}
		}
		bl.Add(ev)
	}

	m1 := &transcript.Usage{UncachedInputTokens: n(1000), CacheReadTokens: n(20000), CacheWriteTokens: n(5000), CacheWrite1hTokens: n(2000), OutputTokens: n(500)}
	m2 := &transcript.Usage{UncachedInputTokens: n(150000), CacheReadTokens: n(60000), OutputTokens: n(1000)}
	var sum transcript.Usage
	sum.Add(m1)
	sum.Add(m2)
	ab := viewstest.NewBuilder(a, "")
	started(ab, day1, "")
	agentStep(ab, t, day1, &transcript.AgentResult{Provider: "claude", Model: "claude-sonnet-4-5", Status: "ok", Usage: &sum},
		msg("s", "claude-sonnet-4-5-20250929", day1, m1), msg("s", "claude-sonnet-4-5-20250929", day1.Add(time.Second), m2),
		msg("s", "<synthetic>", day1.Add(2*time.Second), &transcript.Usage{OutputTokens: n(0)}))
	ab.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "agent", ChildRunID: child, Timestamp: day1,
		Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindCallWorkflow}})
	write(ab, day1)
	cb := viewstest.NewBuilder(child, a)
	started(cb, day1, "")
	cb.Add(msg("x", "claude-haiku-4-5", day1, &transcript.Usage{UncachedInputTokens: n(1000), OutputTokens: n(1000)}))
	write(cb, day1)

	for _, r := range []struct {
		id, from string
		mtime    time.Time
	}{{b, "", day2}, {rebuilt, b, day2.Add(time.Hour)}} {
		bb := viewstest.NewBuilder(r.id, "")
		started(bb, day2, r.from)
		agentStep(bb, t, day2, &transcript.AgentResult{Provider: "codex", Model: "gpt-5", Status: "ok", CostUSD: new(0.5),
			Usage: &transcript.Usage{InputTokens: n(10000), CacheReadTokens: n(8000), OutputTokens: n(300)}})
		if r.from != "" {
			// A rebuild renormalize wrote whole ends (one that does not
			// stands for nothing: views.RunCounts.SupersededBy).
			done := viewstest.Completed("s", "ok", "")
			done.Timestamp = day2
			bb.Add(done)
		}
		write(bb, r.mtime)
	}

	gb := viewstest.NewBuilder(c, "")
	started(gb, day2, "")
	agentStep(gb, t, day2, &transcript.AgentResult{Provider: "gemini", Model: "gemini-9-ultra", Status: "ok",
		Usage: &transcript.Usage{InputTokens: n(100), OutputTokens: n(100)}})
	write(gb, day2)
	return dir, []string{a, child, b, rebuilt, c}
}

func sources(t *testing.T, dir string, ids []string, tbl *prices.Table) Sources {
	src := Sources{IDs: ids, Ledgers: map[string]*Ledger{}, ModTime: func(id string) time.Time {
		fi, err := os.Stat(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			return time.Time{}
		}
		return fi.ModTime()
	}}
	for _, id := range ids {
		l := LedgerFile(filepath.Join(dir, id+".jsonl"), tbl)
		// what the index keeps is the ledger as JSON
		data, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		var back Ledger
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		src.Ledgers[id] = &back
	}
	return src
}

// binaryLedger is l as the index keeps it: encoded, then decoded.
func binaryLedger(t testing.TB, l *Ledger) *Ledger {
	t.Helper()
	data, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Ledger
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	return &back
}

func TestReport(t *testing.T) {
	tbl := prices.Bundled()
	dir, ids := store(t)
	src := sources(t, dir, ids, tbl)
	utc1 := time.FixedZone("UTC+1", 3600)
	// By hand: the Claude session 39750 + 958500 (a request above 200K:
	// long-context rates) + 6000 (its sub-agent, haiku) = 1004250 µ$;
	// Codex states $0.50 (its rebuild counted instead of it, once);
	// gemini-9-ultra is in no table: unknown, not 0.
	const claude, codex = 1004250, 500000
	cases := []struct {
		by       string
		opt      Options
		groups   map[string]int64 // key: micro_usd
		sources  map[string]string
		total    int64
		unpriced []string
	}{
		{by: ByDay, groups: map[string]int64{"2026-08-01": claude, "2026-08-03": codex}, total: claude + codex, unpriced: []string{"gemini-9-ultra"},
			sources: map[string]string{"2026-08-01": "priced", "2026-08-03": "provider"}},
		{by: ByWeek, groups: map[string]int64{"2026-07-27": claude, "2026-08-03": codex}, total: claude + codex, unpriced: []string{"gemini-9-ultra"}},
		{by: ByMonth, groups: map[string]int64{"2026-08": claude + codex}, total: claude + codex, unpriced: []string{"gemini-9-ultra"}},
		{by: BySession, groups: map[string]int64{ids[0]: claude, ids[3]: codex, ids[4]: 0}, total: claude + codex, unpriced: []string{"gemini-9-ultra"},
			sources: map[string]string{ids[0]: "priced", ids[3]: "provider", ids[4]: "unknown"}},
		{by: ByModel, groups: map[string]int64{"claude-sonnet-4-5-20250929": 998250, "claude-haiku-4-5": 6000, "gpt-5": codex, "gemini-9-ultra": 0},
			total: claude + codex, unpriced: []string{"gemini-9-ultra"}},
		{by: ByProvider, groups: map[string]int64{"claude": claude, "codex": codex, "gemini": 0}, total: claude + codex, unpriced: []string{"gemini-9-ultra"}},
		{by: ByDay, opt: Options{Provider: "claude"}, groups: map[string]int64{"2026-08-01": claude}, total: claude},
		{by: ByDay, opt: Options{Model: "HAIKU"}, groups: map[string]int64{"2026-08-01": 6000}, total: 6000},
		{by: ByDay, opt: Options{Since: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)}, groups: map[string]int64{"2026-08-03": codex}, total: codex, unpriced: []string{"gemini-9-ultra"}},
		{by: ByDay, opt: Options{Until: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)}, groups: map[string]int64{"2026-08-01": claude}, total: claude},
	}
	for _, c := range cases {
		t.Run(c.by+"/"+c.opt.Provider+c.opt.Model, func(t *testing.T) {
			opt := c.opt
			opt.By, opt.Location = c.by, utc1
			rep, err := Build(src, tbl.Version(), opt)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			var sum int64
			for _, g := range rep.Groups {
				got[g.Key] = g.Cost.MicroUSD
				sum += g.Cost.MicroUSD
				if s, ok := c.sources[g.Key]; ok && g.Cost.Source != s {
					t.Errorf("%s: source %s, want %s", g.Key, g.Cost.Source, s)
				}
			}
			if len(got) != len(c.groups) {
				t.Errorf("groups %v, want %v", got, c.groups)
			}
			for k, v := range c.groups {
				if got[k] != v {
					t.Errorf("%s: %d µ$, want %d", k, got[k], v)
				}
			}
			if rep.Total.Cost.MicroUSD != c.total || sum != c.total {
				t.Errorf("total %d, groups sum to %d, want %d", rep.Total.Cost.MicroUSD, sum, c.total)
			}
			if !slices.Equal(rep.Total.Cost.UnpricedModels, c.unpriced) {
				t.Errorf("unpriced %v, want %v", rep.Total.Cost.UnpricedModels, c.unpriced)
			}
			if rep.Superseded != 1 {
				t.Errorf("superseded %d, want 1 (the run renormalize rebuilt)", rep.Superseded)
			}
		})
	}
}

// Every grouping counts the same tokens: totals add up across views.
func TestTotalsAgree(t *testing.T) {
	tbl := prices.Bundled()
	dir, ids := store(t)
	src := sources(t, dir, ids, tbl)
	var first string
	for _, by := range Groupings {
		rep, err := Build(src, tbl.Version(), Options{By: by, Breakdown: true})
		if err != nil {
			t.Fatal(err)
		}
		tot, _ := json.Marshal(rep.Total)
		if first == "" {
			first = string(tot)
		} else if string(tot) != first {
			t.Errorf("%s total %s\nwant %s", by, tot, first)
		}
		var u transcript.Usage
		for _, g := range rep.Groups {
			u.Add(g.Usage)
			var mu transcript.Usage
			for _, m := range g.Models {
				mu.Add(m.Usage)
			}
			if a, b := js(t, &mu), js(t, g.Usage); a != b {
				t.Errorf("%s %s: models sum to %s, group %s", by, g.Key, a, b)
			}
		}
		if a, b := js(t, &u), js(t, rep.Total.Usage); a != b {
			t.Errorf("%s: groups sum to %s, total %s", by, a, b)
		}
	}
	if _, err := Build(src, tbl.Version(), Options{By: "hour"}); err == nil {
		t.Error("an unknown grouping was accepted")
	}
}

func js(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each agent step carries its cost: the Claude step's two requests
// (39750 + 958500 µ$, priced), the Codex step's stated $0.50 (and its
// rebuild's: a ledger is per transcript; reports count the session once), the
// unknown model's step unknown; a sub-agent's run has no agent step.
func TestStepCosts(t *testing.T) {
	tbl := prices.Bundled()
	dir, ids := store(t)
	src := sources(t, dir, ids, tbl)
	want := map[string]prices.Cost{ids[0]: {MicroUSD: 998250, Source: "priced"}, ids[2]: {MicroUSD: 500000, Source: "provider"}, ids[3]: {MicroUSD: 500000, Source: "provider"},
		ids[4]: {MicroUSD: 0, Source: "unknown"}}
	for _, id := range ids {
		l := src.Ledgers[id]
		w, ok := want[id]
		if !ok {
			if len(l.Steps) != 0 {
				t.Errorf("%s: steps %+v", id, l.Steps)
			}
			continue
		}
		if len(l.Steps) != 1 || l.Steps[0].Seq != 2 || l.Steps[0].Path != "s" || l.Steps[0].Cost.MicroUSD != w.MicroUSD || l.Steps[0].Cost.Source != w.Source {
			t.Errorf("%s: steps %+v, want one at seq 2 of %+v", id, l.Steps, w)
		}
	}
}
