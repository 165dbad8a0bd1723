package copilot

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// usageTotals keeps the step's token figures. Copilot states usage twice:
// per API call (assistant.usage, stdout only) and as totals per model
// (session.shutdown modelMetrics). The shutdown totals are the session's
// so far: a process resumed with --resume starts from the totals it
// restored, so its shutdown repeats the earlier figures plus its own
// (seen in real events.jsonl logs). So each model's figures at a
// shutdown replace that model's earlier ones when none went down, and
// are added to them when one did (a counter that started again); the
// per-call figures since the last shutdown are added until the next
// shutdown covers them. The step's usage is reported in "set" mode after
// every change, so nothing is counted twice.
type usageTotals struct {
	models   []modelTotal // per model, in order of appearance
	calls    sdk.Usage    // assistant.usage since the last shutdown
	orphans  sdk.Usage    // per-call figures no shutdown covered (a process that died)
	messages sdk.Int      // outputTokens of assistant messages, the fallback
	// sub is the outputTokens of the sub-agents' messages: their child
	// runs count them (spec §6.10), and the shutdown's totals, which
	// count every call of the session, theirs too, leave them out.
	sub sdk.Int
	any bool // assistant.usage or a shutdown was seen
}

// modelTotal is one model's figures: closed are the counters that
// started again since, last the latest cumulative figures.
type modelTotal struct {
	name         string
	closed, last sdk.Usage
}

// figures reads Copilot's usage object. inputTokens is every input
// token, cached included (cacheWriteTokens and cacheReadTokens are parts
// of it: a real log states inputTokens 12612 with cacheWriteTokens 12602
// and 10 fresh tokens).
func figures(u abi.Value) sdk.Usage {
	return sdk.Usage{
		Input:      sdk.IntOf(u.Get("inputTokens")),
		CacheRead:  sdk.IntOf(u.Get("cacheReadTokens")),
		CacheWrite: sdk.IntOf(u.Get("cacheWriteTokens")),
		Output:     sdk.IntOf(u.Get("outputTokens")),
		Reasoning:  sdk.IntOf(u.Get("reasoningTokens")),
	}
}

// total is the step's usage so far. A shutdown's totals count the
// sub-agents' calls too (a real log's modelMetrics outputTokens is the
// sum of every message's, the sub-agents' included), which their child
// runs count from their messages: their output is left out of the
// step's, so the session's tokens count once. Per-call figures alone
// (no shutdown) are kept as stated: no capture shows whether Copilot
// writes assistant.usage for a sub-agent's calls.
func (t *usageTotals) total() sdk.Usage {
	u := t.orphans.Plus(t.calls)
	for _, m := range t.models {
		u = u.Plus(m.closed).Plus(m.last)
	}
	if len(t.models) > 0 {
		u.Output = less(u.Output, t.sub)
	}
	return u
}

// less is a minus b, when both are set and a holds b; else a as it is.
func less(a, b sdk.Int) sdk.Int {
	x, okA := a.Value()
	y, okB := b.Value()
	if !okA || !okB || y > x {
		return a
	}
	return sdk.N(x - y)
}

// call adds one assistant.usage event; it reports whether it reported
// the usage (not for an event with no figures).
func (t *usageTotals) call(d abi.Value, out *sdk.Out) bool {
	f := figures(d)
	if f == (sdk.Usage{}) {
		return false
	}
	t.any = true
	t.calls = t.calls.Plus(f)
	out.Usage(t.total(), sdk.ModeSet)
	return true
}

// shutdown reads the totals of every model a shutdown states; it reports
// whether it reported the usage.
func (t *usageTotals) shutdown(metrics abi.Value, out *sdk.Out) bool {
	seen := false
	it := metrics.Iter()
	for it.Next() {
		f := figures(it.Value().Get("usage"))
		if f == (sdk.Usage{}) {
			continue
		}
		seen = true
		name := string(sdk.AppendText(nil, it.Key()))
		m := t.model(name)
		if decreased(f, m.last) {
			m.closed = m.closed.Plus(m.last)
		}
		m.last = f
	}
	if !seen {
		// No totals: the per-call figures are all there is.
		t.orphans = t.orphans.Plus(t.calls)
	}
	t.calls = sdk.Usage{}
	t.any = t.any || seen || t.orphans != sdk.Usage{}
	if t.any {
		out.Usage(t.total(), sdk.ModeSet)
	}
	return t.any
}

// model returns the totals of the named model, added on first use.
func (t *usageTotals) model(name string) *modelTotal {
	for i := range t.models {
		if t.models[i].name == name {
			return &t.models[i]
		}
	}
	t.models = append(t.models, modelTotal{name: name})
	return &t.models[len(t.models)-1]
}

// decreased reports whether any figure of now is below the same figure
// of before: the counter started again.
func decreased(now, before sdk.Usage) bool {
	pairs := [...][2]sdk.Int{{now.Input, before.Input}, {now.CacheRead, before.CacheRead}, {now.CacheWrite, before.CacheWrite}, {now.Output, before.Output}, {now.Reasoning, before.Reasoning}}
	for _, p := range pairs {
		a, okA := p[0].Value()
		b, okB := p[1].Value()
		if okA && okB && a < b {
			return true
		}
	}
	return false
}

// segment starts a new process without a shutdown before it (a resumed
// log whose previous process died): the per-call figures of the old one
// stand.
func (t *usageTotals) segment() {
	t.orphans = t.orphans.Plus(t.calls)
	t.calls = sdk.Usage{}
}

// messageOutput notes a message's outputTokens, the only figure a stream
// without usage events states; sub says the message is a sub-agent's.
func (t *usageTotals) messageOutput(n sdk.Int, sub bool) {
	if sub {
		t.sub = t.sub.Plus(n)
		return
	}
	t.messages = t.messages.Plus(n)
}

// end reports the fallback: the sum of the main agent's per-message
// output tokens (the sub-agents' count in their child runs).
func (t *usageTotals) end(out *sdk.Out) {
	if !t.any {
		out.Usage(sdk.Usage{Output: t.messages}, sdk.ModeSet)
	}
}
