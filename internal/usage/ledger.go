package usage

import (
	"cmp"
	"slices"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// Slot is the time resolution of a ledger row: rows are summed per
// quarter-hour, so that days, weeks and months are cut in any time zone
// (every zone's offset is a whole number of quarter-hours).
const Slot = 15 * 60

// Ledger is what one run adds to the usage reports: its head, its links,
// and its usage in rows, priced with the table named in Prices. The index
// keeps it per transcript (Derived), so that a report reads no file that
// did not change.
type Ledger struct {
	// LoadErr is why the file could not be read (the run is then left out
	// of every report, and said so).
	LoadErr     string     `json:"load_err,omitempty"`
	RunID       string     `json:"run_id"`
	ParentRunID string     `json:"parent_run_id,omitempty"`
	Name        string     `json:"name,omitempty"`
	Started     *time.Time `json:"started,omitempty"`
	// Project is the run's project (views.RunNode.Project).
	Project          string `json:"project,omitempty"`
	RenormalizedFrom string `json:"renormalized_from,omitempty"`
	// SupersedesRuns are the ended runs the run holds again
	// (views.RunNode.SupersedesRuns).
	SupersedesRuns []string `json:"supersedes_runs,omitempty"`
	// Children are the child runs the run links to (sub-agents,
	// sub-workflows), in file order.
	Children []string `json:"children,omitempty"`
	// Covered are the child runs whose cost a step of the run already
	// counts in the cost its provider stated (views.StatedCostCountsSubRuns):
	// their usage is counted, their cost is not priced again.
	Covered []string `json:"covered,omitempty"`
	// Supersedes and SupersededBy are as views.RunCounts says: a
	// superseded run's usage is counted in the run that supersedes it.
	Supersedes   []string `json:"supersedes,omitempty"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	// Archived, Sessions and Unkeyed are as views.RunHead has them: a
	// recorded run whose sessions a run archived from the agent's store
	// holds is counted in that run (views.Superseded).
	Archived bool     `json:"archived,omitempty"`
	Sessions []string `json:"sessions,omitempty"`
	Unkeyed  bool     `json:"unkeyed,omitempty"`
	// Prices is the version of the table the rows were priced with.
	Prices string `json:"prices"`
	Rows   []Row  `json:"rows,omitempty"`
	// Steps is what each agent step costs, in file order.
	Steps []StepCost `json:"steps,omitempty"`
}

// StepCost is the cost of one agent step attempt: Seq is its
// step.started's seq (0 when it has none), the one StepNode.Seq holds.
type StepCost struct {
	Seq       uint64      `json:"seq"`
	Path      string      `json:"path"`
	Iteration int         `json:"iteration"`
	Cost      prices.Cost `json:"cost"`
}

// Row is usage of one provider and model in one quarter-hour of one run,
// and what it cost.
type Row struct {
	At       int64             `json:"t"` // unix seconds, the slot's start
	Provider string            `json:"provider,omitempty"`
	Model    string            `json:"model,omitempty"`
	Usage    *transcript.Usage `json:"usage"`
	// Requests counts the usage figures summed in: a message's (one API
	// request) or a whole step's when its messages state none.
	Requests int `json:"requests"`
	// PricedPico is the cost of the figures priced from the table, in
	// pico-dollars; StatedMicro the cost the provider stated for the
	// figures it covers (their steps'), in micro-dollars.
	PricedPico  int64 `json:"priced_pico,omitempty"`
	StatedMicro int64 `json:"stated_micro,omitempty"`
	// Priced, Stated and Unpriced count the figures by where their cost
	// comes from: the table, the provider, or nowhere (a model the table
	// lacks: the cost is unknown, never 0).
	Priced   int `json:"priced,omitempty"`
	Stated   int `json:"stated,omitempty"`
	Unpriced int `json:"unpriced,omitempty"`
	// TierUnknown counts figures summed over several requests whose
	// total input is above the model's first long-context tier: priced at
	// the base rates, which may be below the bill.
	TierUnknown int `json:"tier_unknown,omitempty"`
	// Batch counts the figures priced at the batch API's rates (their
	// step's capture is a batch job's results, BatchFormat, or their
	// usage states the batch service tier).
	Batch int `json:"batch,omitempty"`
	// Flex and Priority count the figures priced at the model's flex and
	// priority rates (their usage states that service tier).
	Flex     int `json:"flex,omitempty"`
	Priority int `json:"priority,omitempty"`
	// UnpricedTier is the part of Unpriced whose model the table knows
	// but not at the rates their service tier or batch needs, and
	// UnpricedWhy says why, once each ("no batch rate", "no flex rate",
	// "scale tier: ...": prices.Table.PriceAt).
	UnpricedTier int      `json:"unpriced_tier,omitempty"`
	UnpricedWhy  []string `json:"unpriced_why,omitempty"`
}

// BatchFormat reports whether a step's format (AgentResult.Format) is a
// batch API's results, every request of which the provider billed at
// its batch rate: the openai plugin's "batch-output" (the output file of
// OpenAI's Batch API: lines {id: "batch_req_...", custom_id, response:
// {status_code, body}}) and the claude plugin's "message-batch-results"
// (the results of Anthropic's Message Batches: {custom_id, result: {type,
// message}}). No other capture says a request was a batch one.
func BatchFormat(provider, format string) bool {
	return provider == "openai" && format == "batch-output" || provider == "claude" && format == "message-batch-results"
}

// entry is one usage figure before it is summed into a row.
type entry struct {
	at              time.Time
	provider, model string
	usage           *transcript.Usage
	oneRequest      bool
	batch           bool   // a batch API's request: priced at its batch rates
	stated          *int64 // micro-dollars the provider stated for the step, on its last entry
	statedStep      bool   // the step states a cost: its entries are not priced
}

type stepKey struct {
	path string
	iter int
}

// LedgerOf reads a run's usage: for each agent step, its assistant
// messages' usage where they add up to the step's (each message one API
// request, priced at its own tier), else the step's usage as one figure;
// for a run with no agent step (a sub-agent's run), its messages'. A cost
// the provider stated for a step (cost_usd) stands for the step's
// figures, which are then not priced. Figures with no token (Claude's
// "<synthetic>" messages) are left out.
func LedgerOf(run *views.Run, tbl *prices.Table) *Ledger {
	n := views.BuildRun(run)
	c := views.CountRun(run)
	l := &Ledger{RunID: n.RunID, ParentRunID: n.ParentRunID, Name: views.DisplayName(views.RunHead{Name: n.Name, Title: n.Title, AutoName: n.AutoName}),
		Started: n.Started, Project: n.Project, RenormalizedFrom: n.RenormalizedFrom, SupersedesRuns: n.SupersedesRuns, Supersedes: c.Supersedes, SupersededBy: c.SupersededBy,
		Archived: n.Archived, Sessions: n.Sessions, Unkeyed: n.Unkeyed, Prices: tbl.Version()}
	n.Walk(func(s *views.StepNode, _ int) bool {
		if s.ChildRunID != "" && !slices.Contains(l.Children, s.ChildRunID) {
			l.Children = append(l.Children, s.ChildRunID)
		}
		return true
	})
	l.Covered = coveredChildren(n.Steps, false, nil)
	var entries []entry
	pending := map[stepKey][]*transcript.Event{}
	started := map[stepKey]uint64{}
	agent := false
	for _, ev := range run.Events {
		switch ev.Type {
		case transcript.MessageAssistant:
			if p := ev.Message(); p != nil && hasTokens(p.Usage) {
				k := stepKey{ev.Path, ev.Iteration}
				pending[k] = append(pending[k], ev)
			}
		case transcript.StepStarted:
			started[stepKey{ev.Path, ev.Iteration}] = ev.Seq
		case transcript.StepCompleted:
			p := ev.Step()
			if p == nil || p.Kind != transcript.KindAgent {
				continue
			}
			r, err := p.AgentResult()
			if err != nil || r == nil {
				continue
			}
			agent = true
			k := stepKey{ev.Path, ev.Iteration}
			step := stepEntries(ev, r, pending[k])
			if stepRows := rows(step, tbl); len(stepRows) > 0 {
				var acc costAcc
				for i := range stepRows {
					acc.add(&stepRows[i])
				}
				l.Steps = append(l.Steps, StepCost{Seq: started[k], Path: ev.Path, Iteration: ev.Iteration, Cost: acc.cost(l.Prices)})
			}
			entries = append(entries, step...)
			delete(pending, k)
			delete(started, k)
		}
	}
	if !agent {
		for _, evs := range pending {
			for _, ev := range evs {
				m := ev.Message()
				entries = append(entries, entry{at: ev.Timestamp, model: m.Model, usage: m.Usage, oneRequest: true})
			}
		}
	}
	l.Rows = rows(entries, tbl)
	return l
}

// coveredChildren appends to out the child runs linked from steps below
// an agent step whose stated cost counts its sub-agents' (stated says
// the steps are below one).
func coveredChildren(steps []*views.StepNode, stated bool, out []string) []string {
	for _, s := range steps {
		if stated && s.ChildRunID != "" && !slices.Contains(out, s.ChildRunID) {
			out = append(out, s.ChildRunID)
		}
		below := stated || s.Agent != nil && s.Agent.CostUSD != nil && views.StatedCostCountsSubRuns(s.Agent.Provider)
		out = coveredChildren(s.Steps, below, out)
	}
	return out
}

// stepEntries are the figures of one agent step: its messages' when they
// add up to the step's usage, else the step's own.
func stepEntries(done *transcript.Event, r *transcript.AgentResult, msgs []*transcript.Event) []entry {
	var stated *int64
	if r.CostUSD != nil {
		m := prices.MicroOfUSD(*r.CostUSD)
		stated = &m
	}
	var sum transcript.Usage
	for _, ev := range msgs {
		sum.Add(ev.Message().Usage)
	}
	var out []entry
	batch := BatchFormat(r.Provider, r.Format)
	if len(msgs) > 0 && sameBilled(&sum, r.Usage) {
		for _, ev := range msgs {
			m := ev.Message()
			out = append(out, entry{at: ev.Timestamp, provider: r.Provider, model: cmp.Or(m.Model, r.Model), usage: m.Usage, oneRequest: true, batch: batch, statedStep: stated != nil})
		}
	} else if hasTokens(r.Usage) || stated != nil {
		out = append(out, entry{at: done.Timestamp, provider: r.Provider, model: cmp.Or(r.Model, mostUsed(msgs)), usage: r.Usage, batch: batch, statedStep: stated != nil})
	}
	if len(out) > 0 {
		out[len(out)-1].stated = stated
	}
	return out
}

// hasTokens reports whether u counts a token (a usage of zeros, such as
// Claude's "<synthetic>" messages', counts none).
func hasTokens(u *transcript.Usage) bool {
	if u == nil {
		return false
	}
	for _, p := range []*int64{u.InputTokens, u.UncachedInputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens, u.TotalTokens} {
		if p != nil && *p != 0 {
			return true
		}
	}
	return false
}

// sameBilled reports whether a and b agree on every billed counter.
func sameBilled(a, b *transcript.Usage) bool {
	if b.IsZero() {
		return false
	}
	x, y := a.Billed(), b.Billed()
	eq := func(p, q *int64) bool {
		if p == nil || q == nil {
			return (p == nil || *p == 0) && (q == nil || *q == 0)
		}
		return *p == *q
	}
	return eq(x.UncachedInputTokens, y.UncachedInputTokens) && eq(x.CacheReadTokens, y.CacheReadTokens) &&
		eq(x.CacheWriteTokens, y.CacheWriteTokens) && eq(x.CacheWrite1hTokens, y.CacheWrite1hTokens) && eq(x.OutputTokens, y.OutputTokens)
}

// mostUsed is the model most of the messages name ("" when none does).
func mostUsed(msgs []*transcript.Event) string {
	count := map[string]int{}
	best := ""
	for _, ev := range msgs {
		m := ev.Message().Model
		if m == "" {
			continue
		}
		count[m]++
		if count[m] > count[best] || count[m] == count[best] && m < best {
			best = m
		}
	}
	return best
}

type rowKey struct {
	at              int64
	provider, model string
}

// rows prices the entries and sums them per quarter-hour, provider and
// model, in time order.
func rows(entries []entry, tbl *prices.Table) []Row {
	idx := map[rowKey]int{}
	var out []Row
	for _, e := range entries {
		if !hasTokens(e.usage) && e.stated == nil {
			continue
		}
		at := e.at.Unix()
		at -= ((at % Slot) + Slot) % Slot
		k := rowKey{at, e.provider, e.model}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Row{At: at, Provider: e.provider, Model: e.model, Usage: &transcript.Usage{}})
		}
		r := &out[i]
		r.Usage.Add(e.usage)
		r.Requests++
		if e.stated != nil {
			r.StatedMicro += *e.stated
		}
		switch {
		case e.statedStep:
			r.Stated++
		default:
			p, why, ok := tbl.PriceAt(e.model, e.usage, e.oneRequest, e.batch)
			if !ok {
				r.Unpriced++
				if why != "" {
					r.UnpricedTier++
					if !slices.Contains(r.UnpricedWhy, why) {
						r.UnpricedWhy = append(r.UnpricedWhy, why)
					}
				}
				continue
			}
			r.Priced++
			r.PricedPico += p.Pico
			if p.TierUnknown {
				r.TierUnknown++
			}
			switch {
			case p.Batch:
				r.Batch++
			case p.Service == prices.ServiceFlex:
				r.Flex++
			case p.Service == prices.ServicePriority:
				r.Priority++
			}
		}
	}
	for i := range out {
		// A row's usage is its counters: its figures were priced each at
		// its own service tier, and the ledger's encoding keeps no tier.
		out[i].Usage.ServiceTier = ""
		if out[i].Usage.IsZero() {
			out[i].Usage = nil
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Model, b.Model))
	})
	return out
}

// LedgerFile reads the transcript at path and makes its ledger (a file
// that cannot be read gives a ledger that says why).
func LedgerFile(path string, tbl *prices.Table) *Ledger {
	run, err := views.LoadFile(path)
	if err != nil {
		return &Ledger{LoadErr: err.Error(), Prices: tbl.Version()}
	}
	return LedgerOf(run, tbl)
}
