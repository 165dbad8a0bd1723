package copilot

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// usageTotals keeps the step's token figures. Copilot states usage twice:
// per API call (assistant.usage) and as the process's totals
// (session.shutdown modelMetrics). A segment is one process's events (a
// log resumed with --resume holds several): its figure is the shutdown
// totals when it has them, which replace that segment's per-call sum,
// else the per-call sum. The step's usage is the sum over segments,
// reported in "set" mode after every change, so nothing is counted twice.
type usageTotals struct {
	closed   sdk.Usage // segments that ended with a shutdown
	calls    sdk.Usage // assistant.usage of the current segment
	messages sdk.Int   // outputTokens of assistant messages, the fallback
	any      bool      // assistant.usage or a shutdown was seen
}

// figures reads Copilot's usage object. inputTokens is taken as every
// input token, cached included (the OpenAI convention the CLI's figures
// follow: cacheReadTokens never exceeds inputTokens in captures).
func figures(u abi.Value) sdk.Usage {
	return sdk.Usage{
		Input:      sdk.IntOf(u.Get("inputTokens")),
		CacheRead:  sdk.IntOf(u.Get("cacheReadTokens")),
		CacheWrite: sdk.IntOf(u.Get("cacheWriteTokens")),
		Output:     sdk.IntOf(u.Get("outputTokens")),
		Reasoning:  sdk.IntOf(u.Get("reasoningTokens")),
	}
}

// call adds one assistant.usage event.
func (t *usageTotals) call(d abi.Value, out *sdk.Out) {
	f := figures(d)
	if f.IsZero() {
		return
	}
	t.any = true
	t.calls = t.calls.Plus(f)
	out.Usage(t.closed.Plus(t.calls), abi.ModeSet)
}

// shutdown ends a segment with the totals of every model it used.
func (t *usageTotals) shutdown(metrics abi.Value, out *sdk.Out) {
	var seg sdk.Usage
	for it := metrics.Iter(); it.Next(); {
		seg = seg.Plus(figures(it.Value().Get("usage")))
	}
	if seg.IsZero() {
		// No totals: the per-call figures are the segment's.
		seg = t.calls
	}
	t.any = t.any || !seg.IsZero()
	t.closed = t.closed.Plus(seg)
	t.calls = sdk.Usage{}
	out.Usage(t.closed, abi.ModeSet)
}

// segment starts a new segment without a shutdown (a resumed log whose
// previous process died): its per-call figures stand.
func (t *usageTotals) segment() {
	t.closed = t.closed.Plus(t.calls)
	t.calls = sdk.Usage{}
}

// messageOutput notes a message's outputTokens, the only figure a stream
// without usage events states.
func (t *usageTotals) messageOutput(n sdk.Int) { t.messages = t.messages.Plus(n) }

// end reports the fallback: the sum of per-message output tokens.
func (t *usageTotals) end(out *sdk.Out) {
	if !t.any {
		out.Usage(sdk.Usage{Output: t.messages}, abi.ModeSet)
	}
}
