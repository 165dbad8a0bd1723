package transcript

import "slices"

// Pairer pairs tool calls with the results that answer them, by call id.
// It is the one rule every reader of a transcript uses (the validator,
// the views, the exports, the index, the tests), so that none of them
// pairs differently:
//
//   - Calls and results are fed in file (seq) order. Calls are numbered
//     from 0 in the order they are fed.
//   - A result answers a call of its id that has no result yet: the
//     earliest such call of the same step (path and iteration), else the
//     earliest of any step. Call ids are the provider's, unique only
//     within one provider session, and a provider may reuse an id for a
//     new call once the first is answered: the n-th call of an id is
//     answered by its n-th result.
//   - A result whose id has no call waiting answers none (its call is not
//     in the transcript, comes after it, or was answered already); it is
//     not kept for a later call.
//   - A call never answered dangles ([Pairer.Dangling]).
//
// An empty call id pairs like any other; a caller for which an empty id
// cannot pair leaves such events out. A Pairer holds only the calls
// waiting for a result. The zero value is ready to use.
type Pairer struct {
	waiting map[string][]pairCall // by call id, in call order
	calls   int
}

type pairCall struct {
	n         int
	path      string
	iteration int
}

// Call feeds a tool call of callID made by the step at path and
// iteration, and returns its number.
func (p *Pairer) Call(callID, path string, iteration int) int {
	if p.waiting == nil {
		p.waiting = map[string][]pairCall{}
	}
	n := p.calls
	p.calls++
	p.waiting[callID] = append(p.waiting[callID], pairCall{n: n, path: path, iteration: iteration})
	return n
}

// Result feeds a tool result of callID reported by the step at path and
// iteration, and returns the number of the call it answers, or false when
// it answers none.
func (p *Pairer) Result(callID, path string, iteration int) (int, bool) {
	w := p.waiting[callID]
	if len(w) == 0 {
		return -1, false
	}
	i := slices.IndexFunc(w, func(c pairCall) bool { return c.path == path && c.iteration == iteration })
	if i < 0 {
		i = 0
	}
	n := w[i].n
	if len(w) == 1 {
		delete(p.waiting, callID)
	} else {
		p.waiting[callID] = slices.Delete(w, i, i+1)
	}
	return n, true
}

// Add feeds ev when it is a tool.call or tool.result with a payload: for
// a call it returns the call's number, for a result the number of the
// call it answers; false when ev is neither, or a result answering none.
func (p *Pairer) Add(ev *Event) (int, bool) {
	t := ev.Tool()
	if t == nil {
		return -1, false
	}
	switch ev.Type {
	case ToolCall:
		return p.Call(t.CallID, ev.Path, ev.Iteration), true
	case ToolResult:
		return p.Result(t.CallID, ev.Path, ev.Iteration)
	}
	return -1, false
}

// Waiting returns the numbers of the calls of callID without a result
// yet, in call order.
func (p *Pairer) Waiting(callID string) []int {
	w := p.waiting[callID]
	out := make([]int, len(w))
	for i, c := range w {
		out[i] = c.n
	}
	return out
}

// Dangling returns the numbers of every call without a result yet, in
// call order.
func (p *Pairer) Dangling() []int {
	var out []int
	for _, w := range p.waiting {
		for _, c := range w {
			out = append(out, c.n)
		}
	}
	slices.Sort(out)
	return out
}

// Calls returns how many calls were fed.
func (p *Pairer) Calls() int { return p.calls }

// PairEvents pairs the tool events of evs (one run's, in file order) and
// returns, for each tool.call event, the tool.result event that answers
// it; a dangling call has none.
func PairEvents(evs []*Event) map[*Event]*Event {
	var p Pairer
	var calls []*Event
	out := map[*Event]*Event{}
	for _, ev := range evs {
		n, ok := p.Add(ev)
		switch {
		case !ok:
		case ev.Type == ToolCall:
			calls = append(calls, ev)
		default:
			out[calls[n]] = ev
		}
	}
	return out
}
