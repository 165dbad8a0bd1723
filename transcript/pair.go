package transcript

import (
	"bytes"
	"slices"
)

// RevisedField is the payload field (true) that marks a message, a
// tool.call or a tool.result as a new version of one the transcript
// holds before it, with the same provider id (the message id, the call
// id): the agent changed it in place (a document it rewrites at every
// turn, a database row updated), and a later read of it archived the
// changed version. Both versions stay in the transcript; a reader keeps
// the latest and counts it once ([Pairer]).
const RevisedField = "revised"

// Revised reports whether the payload is marked revised ([RevisedField]).
func (p *ToolPayload) Revised() bool {
	return p != nil && bytes.Equal(bytes.TrimSpace(p.Extra[RevisedField]), []byte("true"))
}

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
//   - A call or result marked revised ([RevisedField]: the archive read
//     it again, changed, from a document or database row the agent
//     rewrote) is a new version of one fed before, not one more:
//     a revised call is the latest call of its id again (it keeps that
//     call's number, and its result or its waiting for one), and a
//     revised result answers again the call the latest result of its id
//     answered (its outcome replaces that result's). [Pairer.Feed],
//     [Pairer.ReviseCall] and [Pairer.ReviseResult] say so (again), so
//     that a reader counts it once and keeps its latest version. With
//     no earlier call (result) of its id fed, a revised one is read as
//     an ordinary one.
//
// An empty call id pairs like any other; a caller for which an empty id
// cannot pair leaves such events out. A Pairer holds the calls waiting
// for a result, and for each call id the numbers of its latest call and
// of the call its latest result answered. The zero value is ready to
// use.
type Pairer struct {
	waiting map[string][]pairCall // by call id, in call order
	latest  map[string]int        // call id -> number of its latest call
	// answered is, by call id, the number of the call its latest result
	// answered.
	answered map[string]int
	calls    int
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
	if p.latest == nil {
		p.latest = map[string]int{}
	}
	n := p.calls
	p.calls++
	p.waiting[callID] = append(p.waiting[callID], pairCall{n: n, path: path, iteration: iteration})
	p.latest[callID] = n
	return n
}

// ReviseCall feeds a tool call marked revised: again is true when it is
// a new version of the latest call of callID, whose number it returns
// (a call still waiting for its result now waits as the step at path and
// iteration); with no call of callID fed before, it is fed as by Call.
func (p *Pairer) ReviseCall(callID, path string, iteration int) (n int, again bool) {
	n, ok := p.latest[callID]
	if !ok {
		return p.Call(callID, path, iteration), false
	}
	w := p.waiting[callID]
	if i := slices.IndexFunc(w, func(c pairCall) bool { return c.n == n }); i >= 0 {
		w[i].path, w[i].iteration = path, iteration
	}
	return n, true
}

// ReviseResult feeds a tool result marked revised: again is true when it
// is a new version of the latest result of callID, and it returns the
// number of the call that result answered (the new outcome replaces the
// earlier); with no result of callID fed before, it is fed as by Result.
func (p *Pairer) ReviseResult(callID, path string, iteration int) (n int, again, ok bool) {
	if n, ok := p.answered[callID]; ok {
		return n, true, true
	}
	n, ok = p.Result(callID, path, iteration)
	return n, false, ok
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
	if p.answered == nil {
		p.answered = map[string]int{}
	}
	p.answered[callID] = n
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
// A revised call or result is fed as such ([Pairer.Feed]).
func (p *Pairer) Add(ev *Event) (int, bool) {
	n, _, ok := p.Feed(ev)
	return n, ok
}

// Feed is [Pairer.Add] that also says whether ev, marked revised, is a
// new version of a call or result fed before (again): a reader counts
// it once, and keeps its latest version (the call's input, the result's
// outcome).
func (p *Pairer) Feed(ev *Event) (n int, again, ok bool) {
	t := ev.Tool()
	if t == nil {
		return -1, false, false
	}
	revised := t.Revised()
	switch {
	case ev.Type == ToolCall && revised:
		n, again = p.ReviseCall(t.CallID, ev.Path, ev.Iteration)
		return n, again, true
	case ev.Type == ToolCall:
		return p.Call(t.CallID, ev.Path, ev.Iteration), false, true
	case ev.Type == ToolResult && revised:
		return p.ReviseResult(t.CallID, ev.Path, ev.Iteration)
	case ev.Type == ToolResult:
		n, ok = p.Result(t.CallID, ev.Path, ev.Iteration)
		return n, false, ok
	}
	return -1, false, false
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

// Calls returns how many calls were fed (a revised call that is a new
// version of one fed before is not one more).
func (p *Pairer) Calls() int { return p.calls }

// PairEvents pairs the tool events of evs (one run's, in file order) and
// returns, for each tool.call event, the tool.result event that answers
// it; a dangling call has none. Every version of a revised call maps to
// the call's latest result (a revised result's, when there is one).
func PairEvents(evs []*Event) map[*Event]*Event {
	var p Pairer
	var calls [][]*Event // by call number, its versions
	out := map[*Event]*Event{}
	for _, ev := range evs {
		n, again, ok := p.Feed(ev)
		switch {
		case !ok:
		case ev.Type == ToolCall && again:
			if r, ok := out[calls[n][0]]; ok {
				out[ev] = r
			}
			calls[n] = append(calls[n], ev)
		case ev.Type == ToolCall:
			calls = append(calls, []*Event{ev})
		default:
			for _, c := range calls[n] {
				out[c] = ev
			}
		}
	}
	return out
}

// Superseded returns the tool events of evs (one run's, in file order)
// that a later revised one replaces ([RevisedField]): each version of a
// call but its latest, and a result whose outcome a revised result
// replaced. A reader that shows each call once shows its latest version,
// with its latest result (PairEvents), and leaves these out.
func Superseded(evs []*Event) map[*Event]bool {
	var p Pairer
	out := map[*Event]bool{}
	var call, result []*Event // by call number, its latest version, its result
	for _, ev := range evs {
		n, again, ok := p.Feed(ev)
		switch {
		case !ok:
		case ev.Type == ToolCall && again:
			out[call[n]] = true
			call[n] = ev
		case ev.Type == ToolCall:
			call, result = append(call, ev), append(result, nil)
		default:
			if again && result[n] != nil {
				out[result[n]] = true
			}
			result[n] = ev
		}
	}
	return out
}
