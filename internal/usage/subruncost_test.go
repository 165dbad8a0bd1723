package usage

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// TestSubRunCostCountedOnce: Claude Code's stated cost (a result line's
// total_cost_usd, a cost-state record's totalCostUSD) is the process's
// cost tracker, which counts the sub-agents' calls too; their runs are
// not priced again, or every total would count them twice. A stated cost
// of another provider, or no stated cost, leaves the child runs priced.
// By hand, at the bundled table's rates: the parent's messages
// (claude-sonnet-4-5, 1000 uncached input at $3/M, 1000 output at $15/M)
// 18000 µ$; each sub-agent's (claude-haiku-4-5, 1000 in at $1/M, 1000
// out at $5/M) 6000 µ$.
func TestSubRunCostCountedOnce(t *testing.T) {
	tbl := prices.Bundled()
	const parentMicro, childMicro = 18000, 6000
	cases := []struct {
		name     string
		provider string
		stated   *float64
		nested   bool // the call_workflow step is inside the agent step
		grand    bool // the child run has a child of its own
		// want: the session's total, its source, and the child run's own
		// cost (TreeCost of the child).
		want       int64
		source     string
		childAlone int64
	}{
		{name: "claude states the process's cost: the sub-agent is in it", provider: "claude", stated: new(0.024), nested: true,
			want: 24000, source: "provider", childAlone: 0},
		{name: "claude: a sub-agent's sub-agent is in it too", provider: "claude", stated: new(0.030), nested: true, grand: true,
			want: 30000, source: "provider", childAlone: 0},
		{name: "claude states no cost (a session log without cost-state): the sub-agent is priced", provider: "claude", nested: true,
			want: parentMicro + childMicro, source: "priced", childAlone: childMicro},
		{name: "a child linked outside the stating step is priced", provider: "claude", stated: new(0.018), nested: false,
			want: parentMicro + childMicro, source: "mixed", childAlone: childMicro},
		{name: "another provider's stated cost is its own", provider: "opencode", stated: new(0.018), nested: true,
			want: parentMicro + childMicro, source: "mixed", childAlone: childMicro},
		// Goose adds a call's usage and cost to the session whose reply
		// made it; a sub-agent has its own session (plugins/goose doc.go).
		{name: "goose's stated cost is its session's own: the sub-agent's session is priced", provider: "goose", stated: new(0.018), nested: true,
			want: parentMicro + childMicro, source: "mixed", childAlone: childMicro},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			root, child, grand := viewstest.RunID(1), viewstest.RunID(2), viewstest.RunID(3)
			ids := []string{child, root} // a child before its parent: Costs must not price it as its own session
			write := func(b *viewstest.Builder) {
				viewstest.WriteFile(t, filepath.Join(dir, b.RunID+".jsonl"), b.Bytes(t))
			}
			link := func(b *viewstest.Builder, path, to string) {
				b.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: path, ChildRunID: to, Timestamp: day1,
					Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow}})
				b.Add(&transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: path, ChildRunID: to, Timestamp: day1,
					Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow, Status: transcript.StatusOK}})
			}
			u := func() *transcript.Usage {
				return &transcript.Usage{UncachedInputTokens: n(1000), OutputTokens: n(1000)}
			}

			rb := viewstest.NewBuilder(root, "")
			ev := viewstest.Started("s")
			ev.Timestamp = day1
			rb.Add(ev)
			st := viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent})
			st.Timestamp = day1
			rb.Add(st)
			rb.Add(msg("agent", "claude-sonnet-4-5", day1, u()))
			if c.nested {
				link(rb, "agent.sub", child)
			}
			done := viewstest.AgentDone(t, "agent", &transcript.AgentResult{Provider: c.provider, Model: "claude-sonnet-4-5", Status: "ok", Usage: u(), CostUSD: c.stated})
			done.Timestamp = day1.Add(time.Minute)
			rb.Add(done)
			if !c.nested {
				link(rb, "other", child)
			}
			write(rb)

			cb := viewstest.NewBuilder(child, root)
			ev = viewstest.Started("sub")
			ev.Timestamp = day1
			cb.Add(ev)
			cb.Add(msg("x", "claude-haiku-4-5", day1, u()))
			if c.grand {
				link(cb, "x.sub", grand)
				gb := viewstest.NewBuilder(grand, child)
				ev = viewstest.Started("subsub")
				ev.Timestamp = day1
				gb.Add(ev)
				gb.Add(msg("y", "claude-haiku-4-5", day1, u()))
				write(gb)
				ids = append(ids, grand)
			}
			write(cb)

			src := sources(t, dir, ids, tbl)
			for id, l := range src.Ledgers { // the index keeps ledgers in their binary form
				src.Ledgers[id] = binaryLedger(t, l)
			}
			rep, err := Build(src, tbl.Version(), Options{By: BySession})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Total.Cost.MicroUSD != c.want || rep.Total.Cost.Source != c.source {
				t.Errorf("report total %d µ$ (%s), want %d (%s)", rep.Total.Cost.MicroUSD, rep.Total.Cost.Source, c.want, c.source)
			}
			if got, ok := TreeCost(root, src.Ledgers, tbl.Version()); !ok || got.MicroUSD != c.want {
				t.Errorf("TreeCost(root) %d µ$ (%v), want %d", got.MicroUSD, ok, c.want)
			}
			got, by := Costs(ids, src.Ledgers, tbl.Version())
			if got.MicroUSD != c.want {
				t.Errorf("Costs(child first) %d µ$, want %d", got.MicroUSD, c.want)
			}
			// the child's rows are its session's provider's, wherever ids
			// name it
			if len(by) != 1 || by[c.provider].MicroUSD != c.want {
				t.Errorf("Costs by provider %v, want %s: %d µ$ only", by, c.provider, c.want)
			}
			if got, _ := TreeCost(child, src.Ledgers, tbl.Version()); got.MicroUSD != c.childAlone {
				t.Errorf("TreeCost(child) %d µ$, want %d", got.MicroUSD, c.childAlone)
			}
			// tokens are counted once each, whoever states the cost
			wantIn := int64(2000)
			if c.grand {
				wantIn = 3000
			}
			if in := rep.Total.Usage.UncachedInputTokens; in == nil || *in != wantIn {
				t.Errorf("uncached input %v, want %d", in, wantIn)
			}
		})
	}
}
