package codex

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// execUsage reads a Codex usage object. Every figure the object states is
// kept, 0 included (cache_write_input_tokens is often a stated 0).
func execUsage(u abi.Value) sdk.Usage {
	return sdk.Usage{
		Input:      sdk.IntOf(u.Get("input_tokens")),
		CacheRead:  sdk.IntOf(u.Get("cached_input_tokens")),
		CacheWrite: sdk.IntOf(u.Get("cache_write_input_tokens")),
		Output:     sdk.IntOf(u.Get("output_tokens")),
		Reasoning:  sdk.IntOf(u.Get("reasoning_output_tokens")),
		Total:      sdk.IntOf(u.Get("total_tokens")),
	}
}

// counter turns Codex's cumulative token counters (exec-json
// turn.completed usage, token_count total_token_usage) into the step's
// total. A counter runs for one process: a second user turn in another
// process, or a resumed session, starts it again, so a total that goes
// down (or that equals the per-response figure beside it after other
// responses were counted) starts a new segment, and the step's usage is
// the sum of every segment's last total. A repeated snapshot (Codex
// writes the same token_count more than once) changes nothing. A count
// with only a per-response figure (last_token_usage) adds it.
//
// A forked sub-agent's rollout starts with its parent's counts, and its
// own continue the parent's last total: base is the usage counted when
// the copy ended (rebase), which the step's usage leaves out. A user's
// fork (inherits) starts its running total from its parent's last
// (last_token_info_from_rollout), which its rollout need not hold (0.158+
// forks reference the parent's history instead of copying it): its first
// count's total less that count's response (total_token_usage less
// last_token_usage) is what it inherited, the base.
type counter struct {
	closed   sdk.Usage // ended segments and per-response additions
	current  sdk.Usage // the running total of the current segment
	base     sdk.Usage // counted before the rollout's own lines (rebase)
	prev     [5]int64  // the last total seen, to compare
	seen     bool
	inherits bool // a user's fork, whose first count's total starts from its parent's

	// pending is the usage of the last response a 0.158+
	// token_usage_record stated that no token_count has stated yet
	// (pendingSet); responses holds the response ids of the records
	// read (see record).
	pending    sdk.Usage
	pendingSet bool
	responses  map[string]bool
}

// snapshot is u's figures as numbers (an unset figure is -1).
func snapshot(u sdk.Usage) [5]int64 {
	var s [5]int64
	for i, f := range [...]sdk.Int{u.Input, u.CacheRead, u.CacheWrite, u.Output, u.Reasoning} {
		v, ok := f.Value()
		if !ok {
			v = -1
		}
		s[i] = v
	}
	return s
}

// total reads one counter report: total is the running total (an object,
// or missing), last the figure of the latest response (or missing). It
// reports the step's usage so far, in set mode, and whether it reported
// anything (a repeated snapshot or a report with no figures does not).
func (c *counter) total(out *sdk.Out, total, last abi.Value) bool {
	if !c.add(total, last) {
		return false
	}
	c.report(out)
	return true
}

// report reports the step's usage so far, in set mode.
func (c *counter) report(out *sdk.Out) {
	out.Usage(minus(c.closed.Plus(c.current), c.base), sdk.ModeSet)
}

// record reads a 0.158+ token_usage_record: one model response's usage
// (usage), written when the response completed. Codex writes one for
// every response that reports usage, and adds the same usage to the
// running total of token_count (as that count's last_token_usage) only
// for the responses of a turn's sampling and of a local compaction: a
// remote compaction's response (and an isolated image analysis's, a
// provider handoff's) has its record and no token_count. So a record
// stays pending until a token_count states it (add), and one no
// token_count stated when the next record comes or the turn ends (flush)
// is added to the step's usage. A response id read before (a copy of
// the record) counts nothing. It reports whether it reported usage (the
// previous record's, flushed).
func (c *counter) record(out *sdk.Out, id, usage abi.Value) bool {
	if usage.Kind() != abi.KindObject {
		return false
	}
	if id.Kind() == abi.KindString && len(id.Raw()) > 2 {
		if c.responses == nil {
			c.responses = map[string]bool{}
		}
		if c.responses[string(id.Raw())] {
			return false
		}
		c.responses[string(id.Raw())] = true
	}
	flushed := c.flush(out)
	c.pending, c.pendingSet = execUsage(usage), true
	return flushed
}

// flush adds the pending record's usage, which no token_count stated, to
// the step's usage and reports it; it reports whether there was one.
func (c *counter) flush(out *sdk.Out) bool {
	if !c.pendingSet {
		return false
	}
	c.closed = c.closed.Plus(c.pending)
	c.pendingSet = false
	c.report(out)
	return true
}

// stated clears the pending record when last (a token_count's
// last_token_usage, counted) states its usage.
func (c *counter) stated(last abi.Value) {
	if c.pendingSet && last.Kind() == abi.KindObject && snapshot(execUsage(last)) == snapshot(c.pending) {
		c.pendingSet = false
	}
}

// rebase leaves what was counted so far out of the usage reported from
// now on.
func (c *counter) rebase() { c.base = c.closed.Plus(c.current) }

// add counts one counter report (see total) without reporting it, and
// says whether it changed the count.
func (c *counter) add(total, last abi.Value) bool {
	inherits := c.inherits // only the rollout's first count starts from the parent's total
	c.inherits = false
	switch {
	case total.Kind() == abi.KindObject:
		t := execUsage(total)
		s := snapshot(t)
		if c.seen && s == c.prev {
			return false
		}
		if inherits && last.Kind() == abi.KindObject {
			c.base = minus(t, execUsage(last))
		}
		restart := false
		if c.seen {
			for i := range s {
				if s[i] >= 0 && c.prev[i] >= 0 && s[i] < c.prev[i] {
					restart = true
				}
			}
			if last.Kind() == abi.KindObject && snapshot(execUsage(last)) == s {
				restart = true
			}
		}
		if restart {
			c.closed = c.closed.Plus(c.current)
		}
		c.current, c.prev, c.seen = t, s, true
		c.stated(last)
	case last.Kind() == abi.KindObject:
		c.closed = c.closed.Plus(execUsage(last))
		c.stated(last)
	default:
		return false
	}
	return true
}

// minus is u less b, figure by figure (a figure u does not state stays
// unstated). The counts only grow, so no figure of u is below b's.
func minus(u, b sdk.Usage) sdk.Usage {
	sub := func(x, y sdk.Int) sdk.Int {
		v, ok := x.Value()
		if !ok {
			return x
		}
		w, _ := y.Value()
		return sdk.N(v - w)
	}
	u.Input = sub(u.Input, b.Input)
	u.CacheRead = sub(u.CacheRead, b.CacheRead)
	u.CacheWrite = sub(u.CacheWrite, b.CacheWrite)
	u.Output = sub(u.Output, b.Output)
	u.Reasoning = sub(u.Reasoning, b.Reasoning)
	u.Uncached = sub(u.Uncached, b.Uncached)
	u.CacheWrite1h = sub(u.CacheWrite1h, b.CacheWrite1h)
	u.Total = sub(u.Total, b.Total)
	return u
}
