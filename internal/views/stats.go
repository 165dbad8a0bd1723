package views

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// Stats aggregates transcripts: what they contain, what they cost, and
// what their plugins could not map.
type Stats struct {
	// Runs counts every run, child runs included; SubRuns the child runs
	// among them (ls lists Runs - SubRuns).
	Runs    int `json:"runs"`
	SubRuns int `json:"sub_runs"`
	// Superseded counts the runs left out because a rebuild by twasm
	// renormalize stands for them (Superseded), their child runs
	// included: a session is counted once.
	Superseded int            `json:"superseded_runs,omitempty"`
	Events     int            `json:"events"`
	EventTypes map[string]int `json:"event_types"`
	BlockTypes map[string]int `json:"block_types"`
	Tools      map[string]int `json:"tools"`
	Fidelity   map[string]int `json:"tool_fidelity"`
	Dangling   int            `json:"dangling_calls"`
	// ToolResults counts tool results by outcome, in the closed set of
	// the spec (ok, error, denied, cancelled; older words read as their
	// equivalents).
	ToolResults map[string]int               `json:"tool_results"`
	Malformed   int                          `json:"malformed_lines"`
	Unknown     int                          `json:"unknown_types"`
	AgentSteps  int                          `json:"agent_steps"`
	Usage       map[string]*transcript.Usage `json:"usage"`
	// SubRunUsage sums the usage of the runs that have no agent step of
	// their own (sub-agents' runs: a provider's sub-agent messages are
	// not in the step that started them), from their messages. It is not
	// in Usage, whose figures are the agent steps'; the two together are
	// every token counted. A run superseded by another, which holds its
	// messages again (RunCounts.Supersedes, RunCounts.SupersededBy), is
	// left out, whatever the order the runs are added in; a child run
	// with agent steps of its own (a sub-agent's file archived again)
	// superseded so has their figures left out of Usage too.
	SubRunUsage *transcript.Usage `json:"sub_run_usage,omitempty"`
	// UsageInAll is Usage of every provider and SubRunUsage together:
	// every token counted.
	UsageInAll *transcript.Usage `json:"usage_in_all,omitempty"`
	// Cost sums cost_usd per provider, to the micro-dollar; only
	// providers that state a cost appear. CostUSD is their total. Both are
	// what the providers stated (kept for the readers written before
	// Priced).
	Cost    map[string]float64 `json:"cost_usd_by_provider"`
	CostUSD float64            `json:"cost_usd"`
	// Priced is the cost with its provenance (stated, priced from the
	// price table, unknown for the models it lacks), in all and per
	// provider (package usage); nil when not asked for.
	Priced           *prices.Cost           `json:"cost,omitempty"`
	PricedByProvider map[string]prices.Cost `json:"cost_by_provider,omitempty"`
	// Drift lists the native line types plugins did not map, per provider
	// and provider version: the first sign that a CLI changed its format.
	Drift []DriftRow `json:"drift"`

	drift map[driftKey]int
	seen  map[string]bool
	// subUsage is each counted run's SubRunUsage, gone the runs found
	// superseded: SubRunUsage is their sum without the superseded ones.
	subUsage map[string]*transcript.Usage
	gone     map[string]bool
	// agentsUsage is every agent step's usage (Usage of every provider):
	// UsageInAll is it and SubRunUsage together.
	agentsUsage transcript.Usage
	statedMicro map[string]int64
}

// DriftRow is one unmapped native type of one provider version.
type DriftRow struct {
	Provider        string `json:"provider"`
	ProviderVersion string `json:"provider_version"`
	NativeType      string `json:"native_type"`
	Count           int    `json:"count"`
}

type driftKey struct{ provider, version, native string }

// NewStats returns empty statistics.
func NewStats() *Stats {
	return &Stats{EventTypes: map[string]int{}, BlockTypes: map[string]int{}, Tools: map[string]int{}, ToolResults: map[string]int{},
		Fidelity: map[string]int{}, Usage: map[string]*transcript.Usage{}, Cost: map[string]float64{},
		Drift: []DriftRow{}, drift: map[driftKey]int{}, seen: map[string]bool{},
		subUsage: map[string]*transcript.Usage{}, gone: map[string]bool{}, statedMicro: map[string]int64{}}
}

// Add counts run in. A run id already counted is skipped and Add reports
// false, so that a run named twice, or a child reached both through its
// parent and directly, is counted once.
func (s *Stats) Add(run *Run) bool {
	if run.ID != "" && s.seen[run.ID] {
		return false
	}
	c := CountRun(run)
	return s.addCounts(run.ID, &c)
}

// CountRun is what run adds to Stats.
func CountRun(run *Run) RunCounts {
	c := RunCounts{Events: len(run.Events), EventTypes: map[string]int{}, BlockTypes: map[string]int{},
		Tools: map[string]int{}, Fidelity: map[string]int{}, ToolResults: map[string]int{}}
	for _, p := range run.Problems {
		switch {
		case errors.As(p, new(*transcript.UnknownTypeError)):
			c.Unknown++
		case errors.Is(p, transcript.ErrTruncated) && !errors.Is(p, transcript.ErrMalformed):
			// A torn tail that still decoded is counted with its event.
		default:
			c.Malformed++
		}
	}
	var pairs transcript.Pairer
	// A revised call or result is a new version of one counted already
	// (transcript.Pairer): its name, fidelity and outcome replace the
	// earlier one's, counted once.
	type counted struct{ name, fidelity, outcome string }
	var calls []counted         // by call number
	from, finished := "", false // a rebuild's original, and whether the run ended
	for _, ev := range run.Events {
		n, again, paired := pairs.Feed(ev)
		if ev.ParentRunID != "" {
			c.Child = true
		}
		c.EventTypes[string(ev.Type)]++
		switch p := ev.Payload.(type) {
		case *transcript.MessagePayload:
			for _, b := range p.Blocks {
				c.BlockTypes[string(b.Type)]++
			}
		case *transcript.ToolPayload:
			if ev.Type == transcript.ToolResult {
				outcome := transcript.ToolOutcome(p)
				if paired && n < len(calls) {
					if again {
						decr(c.ToolResults, calls[n].outcome)
					}
					calls[n].outcome = outcome
				}
				c.ToolResults[outcome]++
			}
			if ev.Type != transcript.ToolCall {
				continue
			}
			if again {
				decr(c.Tools, calls[n].name)
				decr(c.Fidelity, calls[n].fidelity)
				calls[n].name, calls[n].fidelity = p.Name, string(p.Fidelity)
			} else {
				calls = append(calls, counted{name: p.Name, fidelity: string(p.Fidelity)})
			}
			c.Tools[p.Name]++
			c.Fidelity[string(p.Fidelity)]++
		case *transcript.StepPayload:
			if old := runField(p, lifecycle.SupersedesField); ev.Type == transcript.StepCallWorkflowStarted && old != "" {
				c.Supersedes = append(c.Supersedes, old)
			}
			if by := runField(p, lifecycle.SupersededByField); ev.Type == transcript.RunCompleted && by != "" {
				c.SupersededBy = by
			}
			switch ev.Type {
			case transcript.RunStarted:
				from = runField(p, RenormalizedFromField)
			case transcript.RunCompleted:
				finished = true
			}
			if ev.Type == transcript.StepCompleted && p.Kind == transcript.KindAgent {
				if r, err := p.AgentResult(); err == nil && r != nil {
					c.Agents = append(c.Agents, AgentCounts{Provider: r.Provider, ProviderVersion: r.ProviderVersion,
						Usage: r.Usage, CostUSD: r.CostUSD, Unmapped: r.Unmapped})
				}
			}
		}
	}
	// Calls pair with results by transcript.Pairer's rule: a provider may
	// reuse a call id for a new call once the first is answered.
	c.SupersededBy = cmp.Or(c.SupersededBy, UnfinishedRebuild(from, finished))
	c.Dangling = len(pairs.Dangling())
	if len(c.Agents) == 0 {
		c.SubRunUsage = RunUsage(run)
	}
	return c
}

// UnfinishedRebuild is the run a rebuild by renormalize (from: its
// original, RenormalizedFromField) that has not ended stands for nothing
// beside: its original ("" for any other run). A renormalize writes
// run.completed whatever the rebuild's status, so a rebuild without one
// was killed (or is being written): it holds part of what its original
// holds, and its original, whole, is counted instead of it, so that no
// reader counts a half-written rebuild (RunNode.SupersededBy,
// RunCounts.SupersededBy).
func UnfinishedRebuild(from string, finished bool) string {
	if finished {
		return ""
	}
	return from
}

// decr takes one from m[k], deleting it at zero.
func decr(m map[string]int, k string) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

func (s *Stats) addCounts(id string, c *RunCounts) bool {
	if id != "" {
		if s.seen[id] {
			return false
		}
		s.seen[id] = true
	}
	s.Runs++
	if c.Child {
		s.SubRuns++
	}
	s.Events += c.Events
	s.Unknown += c.Unknown
	s.Malformed += c.Malformed
	s.Dangling += c.Dangling
	for _, m := range []struct{ to, from map[string]int }{
		{s.EventTypes, c.EventTypes}, {s.BlockTypes, c.BlockTypes}, {s.Tools, c.Tools},
		{s.Fidelity, c.Fidelity}, {s.ToolResults, c.ToolResults},
	} {
		for k, v := range m.from {
			m.to[k] += v
		}
	}
	// A child run that another holds again (a sub-agent's file archived
	// again at its call: the later link of its parent, counted before
	// it, supersedes it, and its end says so) has its agent steps'
	// figures counted in that run, not here.
	if held := c.Child && id != "" && (s.gone[id] || c.SupersededBy != ""); !held {
		for i := range c.Agents {
			s.addAgent(&c.Agents[i])
		}
	}
	s.addSubRunUsage(id, c)
	s.sumInAll()
	return true
}

// runField is the run id a step payload's field names
// (lifecycle.SupersedesField, lifecycle.SupersededByField), or "".
func runField(p *transcript.StepPayload, field string) string {
	var id string
	if raw := p.Extra[field]; raw != nil && json.Unmarshal(raw, &id) == nil {
		return id
	}
	return ""
}

// addSubRunUsage counts a run's SubRunUsage, unless it is superseded,
// and leaves out the usage of the runs c says are superseded, counted
// before or after.
func (s *Stats) addSubRunUsage(id string, c *RunCounts) {
	gone := c.Supersedes
	if c.SupersededBy != "" && id != "" {
		gone = append(slices.Clone(gone), id)
	}
	recount := false // a run counted already is found superseded
	for _, g := range gone {
		if !s.gone[g] {
			s.gone[g] = true
			_, counted := s.subUsage[g]
			recount = recount || counted
		}
	}
	if !c.SubRunUsage.IsZero() {
		if id == "" {
			id = fmt.Sprintf("\x00%d", len(s.subUsage)) // a run without an id: counted on its own
		}
		s.subUsage[id] = c.SubRunUsage
		if !recount && !s.gone[id] {
			if s.SubRunUsage == nil {
				s.SubRunUsage = &transcript.Usage{}
			}
			s.SubRunUsage.Add(c.SubRunUsage)
		}
	}
	if !recount {
		return
	}
	var u transcript.Usage
	for rid, ru := range s.subUsage {
		if !s.gone[rid] {
			u.Add(ru)
		}
	}
	s.SubRunUsage = nil
	if !u.IsZero() {
		s.SubRunUsage = &u
	}
}

func (s *Stats) addAgent(r *AgentCounts) {
	s.AgentSteps++
	prov := cmp.Or(r.Provider, "unknown")
	if !r.Usage.IsZero() {
		u := s.Usage[prov]
		if u == nil {
			u = &transcript.Usage{}
			s.Usage[prov] = u
		}
		u.Add(r.Usage)
		s.agentsUsage.Add(r.Usage) // UsageInAll is summed once the run is counted (addCounts)
	}
	if r.CostUSD != nil {
		m := prices.MicroOfUSD(*r.CostUSD)
		s.statedMicro[prov] += m
		s.statedMicro[""] += m
		s.Cost[prov] = float64(s.statedMicro[prov]) / 1e6
		s.CostUSD = float64(s.statedMicro[""]) / 1e6
	}
	for native, n := range r.Unmapped {
		s.drift[driftKey{prov, r.ProviderVersion, native}] += n
	}
	s.Drift = s.Drift[:0]
	for k, n := range s.drift {
		s.Drift = append(s.Drift, DriftRow{Provider: k.provider, ProviderVersion: k.version, NativeType: k.native, Count: n})
	}
	slices.SortFunc(s.Drift, func(a, b DriftRow) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ProviderVersion, b.ProviderVersion),
			cmp.Compare(b.Count, a.Count), cmp.Compare(a.NativeType, b.NativeType))
	})
}

// Counted is a map entry in a stable order for printing.
type Counted struct {
	Key   string
	Count int
}

// Sorted returns m's entries by descending count, then by key.
func Sorted(m map[string]int) []Counted {
	out := make([]Counted, 0, len(m))
	for k, v := range m {
		out = append(out, Counted{k, v})
	}
	slices.SortFunc(out, func(a, b Counted) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key)) })
	return out
}

// sumInAll makes UsageInAll again from the agents' usage and SubRunUsage,
// which a run found superseded can make smaller (addSubRunUsage).
func (s *Stats) sumInAll() {
	var u transcript.Usage
	u.Add(&s.agentsUsage)
	u.Add(s.SubRunUsage)
	s.UsageInAll = nil
	if !u.IsZero() {
		s.UsageInAll = &u
	}
}

// TreeTime is the latest modification time of a run's file and its
// child runs' (files gives them; the zero time when none can be read),
// for Superseded: a sync that archived more into a session after it was
// rebuilt may have written only to a child run of it (a sub-agent file's
// run), not to the session's own file.
func TreeTime(files func(id string) []string) func(id string) time.Time {
	return func(id string) time.Time {
		var t time.Time
		for _, f := range files(id) {
			if fi, err := os.Stat(f); err == nil && fi.ModTime().After(t) {
				t = fi.ModTime()
			}
		}
		return t
	}
}

// Superseded returns the listed runs that another stands for, so that a
// session is counted once: a run whose end names the run that holds it
// again (RunHead.SupersededBy), a run another's start names among the
// ended runs it holds again (RunHead.SupersedesRuns: a session of an
// agent's other store, a repair of a damaged run that had ended; unless
// that other run's own end names a run superseding it), and a run A rebuilt as B
// (B.RenormalizedFrom is A) is superseded by B when both are listed,
// unless A's tree was written after B's (a sync kept archiving the
// session into A, or into a sub-agent file's child run of A, after the
// rebuild): then B is superseded by A. Of a chain of rebuilds only the
// newest stands. A top-level run recorded from an agent's output (twasm
// record: not Archived, nor rebuilt from an archived run) whose agent
// steps each name a session (none Unkeyed) that a listed top-level run
// archived from the agent's store holds (the same provider and session
// id, RunHead.Sessions; that run not ended superseded) is superseded by
// it: the agent wrote the session to its store too (claude -p, codex
// exec, goose run, ...), and the archived run holds the recorded turns
// again, with every other turn of the session. heads are the listed runs
// by id; modTime is when a run's tree was last written (its file's and
// its child runs' latest time).
func Superseded(heads map[string]RunHead, modTime func(id string) time.Time) map[string]bool {
	out := map[string]bool{}
	recordedAgain(heads, out)
	for id, h := range heads {
		// A run whose own end names another standing for it holds
		// nothing its start claimed (a repair's new run a kill cut
		// short before its first part, ended superseded by the run it
		// was to hold again): that run stands.
		for _, old := range h.SupersedesRuns {
			if _, ok := heads[old]; ok && old != id && (h.SupersededBy == "" || h.SupersededBy == id) {
				out[old] = true
			}
		}
		if h.SupersededBy != "" && h.SupersededBy != id {
			// Its end says another run holds what it holds (a
			// sub-agent's file archived again as a child run).
			out[id] = true
			continue
		}
		from := h.RenormalizedFrom
		if from == "" || from == id {
			continue
		}
		if _, ok := heads[from]; !ok {
			continue
		}
		if modTime(from).After(modTime(id)) {
			out[id] = true
		} else {
			out[from] = true
		}
	}
	return out
}

// recordedAgain marks in out the recorded runs of heads that a run
// archived from the agent's store holds again (see Superseded).
func recordedAgain(heads map[string]RunHead, out map[string]bool) {
	archived := func(h RunHead) bool {
		if h.Archived {
			return true
		}
		from, ok := heads[h.RenormalizedFrom]
		return ok && h.RenormalizedFrom != h.RunID && from.Archived
	}
	var held map[string]bool // session keys an archived top-level run holds
	for _, h := range heads {
		if h.ParentRunID != "" || h.SupersededBy != "" || len(h.Sessions) == 0 || !archived(h) {
			continue
		}
		if held == nil {
			held = map[string]bool{}
		}
		for _, k := range h.Sessions {
			held[k] = true
		}
	}
	if held == nil {
		return
	}
	for id, h := range heads {
		if h.ParentRunID != "" || h.Unkeyed || len(h.Sessions) == 0 || archived(h) {
			continue
		}
		all := true
		for _, k := range h.Sessions {
			all = all && held[k]
		}
		if all {
			out[id] = true
		}
	}
}
