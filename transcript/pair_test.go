package transcript

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pairOp is one tool event fed to a Pairer: a call or a result of id by
// the step at path and iteration.
type pairOp struct {
	call      bool
	id, path  string
	iteration int
}

// pairOps reads "c<id>[@path[.iteration]]" (a call) and "r<id>..." (a
// result), separated by spaces.
func pairOps(t *testing.T, s string) []pairOp {
	t.Helper()
	var ops []pairOp
	for _, f := range strings.Fields(s) {
		op := pairOp{call: f[0] == 'c'}
		id, step, _ := strings.Cut(f[1:], "@")
		op.id = id
		if path, iter, ok := strings.Cut(step, "."); ok {
			n, err := strconv.Atoi(iter)
			if err != nil {
				t.Fatalf("op %q: %v", f, err)
			}
			op.path, op.iteration = path, n
		} else {
			op.path = step
		}
		ops = append(ops, op)
	}
	return ops
}

// feed gives ops to p and returns, for each result in order, the number
// of the call it answers (-1: none).
func feed(p *Pairer, ops []pairOp) []int {
	answers := []int{}
	for _, op := range ops {
		if op.call {
			p.Call(op.id, op.path, op.iteration)
			continue
		}
		n, ok := p.Result(op.id, op.path, op.iteration)
		if !ok {
			n = -1
		}
		answers = append(answers, n)
	}
	return answers
}

func TestPairer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ops      string
		answers  []int // per result, the call it answers
		dangling []int
	}{
		{"answered", "ca ra", []int{0}, nil},
		{"reused after its result, both answered", "ca ra ca ra", []int{0, 1}, nil},
		{"reused after its result, the second unanswered", "ca ra ca", []int{0}, []int{1}},
		{"reused while open: first in, first out", "ca ca ra ra", []int{0, 1}, nil},
		{"reused while open, one result", "ca ca ra", []int{0}, []int{1}},
		{"a result before its call answers none", "ra ca", []int{-1}, []int{0}},
		{"a second result answers none", "ca ra ra", []int{0, -1}, nil},
		{"two ids", "ca cb rb", []int{1}, []int{0}},
		{"results out of call order", "ca cb rb ra", []int{1, 0}, nil},
		{"the call of the result's own step first", "ca@x ca@y ra@y", []int{1}, []int{0}},
		{"another step's call when its own has none", "ca@x ra@y", []int{0}, nil},
		{"the iteration is part of the step", "ca@x.0 ca@x.1 ra@x.1 ra@x.0", []int{1, 0}, nil},
		{"an empty id pairs like any other", "c c r", []int{0}, []int{1}},
		{"three calls of one id, the middle one's result missing", "ca ra ca ca ra", []int{0, 1}, []int{2}},
		{"no events", "", []int{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Pairer
			ops := pairOps(t, tc.ops)
			got := feed(&p, ops)
			if !slices.Equal(got, tc.answers) {
				t.Errorf("answers %v, want %v", got, tc.answers)
			}
			if d := p.Dangling(); !slices.Equal(d, tc.dangling) {
				t.Errorf("dangling %v, want %v", d, tc.dangling)
			}
			calls := 0
			for _, op := range ops {
				if op.call {
					calls++
				}
			}
			if p.Calls() != calls {
				t.Errorf("Calls() %d, want %d", p.Calls(), calls)
			}
		})
	}
}

func TestPairerWaiting(t *testing.T) {
	var p Pairer
	feed(&p, pairOps(t, "ca cb ca ra ca"))
	if w := p.Waiting("a"); !slices.Equal(w, []int{2, 3}) {
		t.Errorf("Waiting(a) %v, want [2 3]", w)
	}
	if w := p.Waiting("b"); !slices.Equal(w, []int{1}) {
		t.Errorf("Waiting(b) %v, want [1]", w)
	}
	if w := p.Waiting("z"); len(w) != 0 {
		t.Errorf("Waiting(z) %v, want none", w)
	}
}

func TestPairEvents(t *testing.T) {
	tool := func(typ EventType, id string) *Event {
		return &Event{Type: typ, Path: "s", Payload: &ToolPayload{Name: "bash", CallID: id}}
	}
	c1, r1, c2, r2, c3 := tool(ToolCall, "a"), tool(ToolResult, "a"), tool(ToolCall, "a"), tool(ToolResult, "a"), tool(ToolCall, "a")
	orphan := tool(ToolResult, "b")
	msg := &Event{Type: MessageAssistant, Payload: &MessagePayload{Role: "assistant"}}
	got := PairEvents([]*Event{orphan, c1, msg, r1, c2, r2, c3})
	if len(got) != 2 || got[c1] != r1 || got[c2] != r2 || got[c3] != nil {
		t.Fatalf("PairEvents: %d pairs, c1->%p (r1 %p), c2->%p (r2 %p), c3->%p", len(got), got[c1], r1, got[c2], r2, got[c3])
	}
}

// FuzzPairer checks the Pairer against the rule written the slow way: a
// result answers the earliest unanswered call of its id and step, else
// the earliest unanswered call of its id, else none.
func FuzzPairer(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1})
	f.Add([]byte{0, 0, 1, 1})
	f.Add([]byte{0, 8, 9, 1})
	f.Add([]byte{1, 0, 2, 3, 2, 5, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		// Each byte is an event: bit 0 a result, bits 1-2 the id, bit 3
		// the path, bit 4 the iteration.
		type call struct {
			op       pairOp
			answered bool
		}
		var p Pairer
		var calls []*call
		for _, b := range in {
			op := pairOp{call: b&1 == 0, id: string(rune('a' + b>>1&3)), path: string(rune('x' + b>>3&1)), iteration: int(b >> 4 & 1)}
			if op.call {
				if n := p.Call(op.id, op.path, op.iteration); n != len(calls) {
					t.Fatalf("call numbered %d, want %d", n, len(calls))
				}
				calls = append(calls, &call{op: op})
				continue
			}
			want := -1
			for i, c := range calls {
				if c.answered || c.op.id != op.id {
					continue
				}
				if c.op.path == op.path && c.op.iteration == op.iteration {
					want = i
					break
				}
				if want < 0 {
					want = i
				}
			}
			got, ok := p.Result(op.id, op.path, op.iteration)
			if ok != (want >= 0) || ok && got != want {
				t.Fatalf("%v: result answers %d (%v), want %d", in, got, ok, want)
			}
			if ok {
				calls[want].answered = true
			}
		}
		var dangling []int
		for i, c := range calls {
			if !c.answered {
				dangling = append(dangling, i)
			}
		}
		if d := p.Dangling(); !slices.Equal(d, dangling) {
			t.Fatalf("%v: dangling %v, want %v", in, d, dangling)
		}
	})
}

// TestPairerRevised: a call or result marked revised (the archive read
// it again, changed, from a rewritten document or an updated row) is a
// new version of the latest one of its id, not one more: it is counted
// once, and a revised result's outcome replaces the earlier one's.
func TestPairerRevised(t *testing.T) {
	// Ops: "c<id>" a call, "C<id>" a revised call, "r<id>" a result,
	// "R<id>" a revised result; "@path[.iteration]" as in pairOps.
	for _, tc := range []struct {
		name     string
		ops      string
		nums     []int  // per op, the call's number or the call answered (-1: none)
		again    []bool // per op
		dangling []int
		calls    int
	}{
		{"a streaming call finished in the next part", "ca@s.0 Ca@s.1 ra@s.1", []int{0, 0, 0}, []bool{false, true, false}, nil, 1},
		{"a streaming call still dangling", "ca Ca", []int{0, 0}, []bool{false, true}, []int{0}, 1},
		{"a call revised after its result stays answered", "ca ra Ca", []int{0, 0, 0}, []bool{false, false, true}, nil, 1},
		{"a revised result replaces the outcome", "ca ra Ra", []int{0, 0, 0}, []bool{false, false, true}, nil, 1},
		{"call and result revised", "ca ra Ca Ra", []int{0, 0, 0, 0}, []bool{false, false, true, true}, nil, 1},
		{"the latest call of a reused id", "ca ra ca Ca ra", []int{0, 0, 1, 1, 1}, []bool{false, false, false, true, false}, nil, 2},
		{"a revised call with no earlier one is a call", "Ca ra", []int{0, 0}, []bool{false, false}, nil, 1},
		{"a revised result with no earlier one answers", "ca Ra", []int{0, 0}, []bool{false, false}, nil, 1},
		{"a revised result with no call answers none", "Ra", []int{-1}, []bool{false}, nil, 0},
		{"another id is not revised", "ca Cb rb", []int{0, 1, 1}, []bool{false, false, false}, []int{0}, 2},
		{"a revised call waits as its new step", "ca@x Ca@y ca@x ra@y", []int{0, 0, 1, 0}, []bool{false, true, false, false}, []int{1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Pairer
			var nums []int
			var again []bool
			for _, f := range strings.Fields(tc.ops) {
				op := pairOps(t, strings.ToLower(f[:1])+f[1:])[0]
				typ := ToolResult
				if op.call {
					typ = ToolCall
				}
				tp := &ToolPayload{Name: "bash", CallID: op.id}
				if f[0] == 'C' || f[0] == 'R' {
					tp.Extra = map[string]json.RawMessage{RevisedField: json.RawMessage("true")}
				}
				n, a, ok := p.Feed(&Event{Type: typ, Path: op.path, Iteration: op.iteration, Payload: tp})
				if !ok {
					n = -1
				}
				nums, again = append(nums, n), append(again, a)
			}
			if !slices.Equal(nums, tc.nums) || !slices.Equal(again, tc.again) {
				t.Errorf("numbers %v again %v, want %v %v", nums, again, tc.nums, tc.again)
			}
			if d := p.Dangling(); !slices.Equal(d, tc.dangling) {
				t.Errorf("dangling %v, want %v", d, tc.dangling)
			}
			if p.Calls() != tc.calls {
				t.Errorf("Calls() %d, want %d", p.Calls(), tc.calls)
			}
		})
	}
}

// TestPairEventsRevised: every version of a revised call maps to the
// latest result, and so does the call of a revised result.
func TestPairEventsRevised(t *testing.T) {
	tool := func(typ EventType, revised bool) *Event {
		tp := &ToolPayload{Name: "bash", CallID: "a"}
		if revised {
			tp.Extra = map[string]json.RawMessage{RevisedField: json.RawMessage("true")}
		}
		return &Event{Type: typ, Path: "s", Payload: tp}
	}
	c1, r1, c2, r2 := tool(ToolCall, false), tool(ToolResult, false), tool(ToolCall, true), tool(ToolResult, true)
	got := PairEvents([]*Event{c1, r1, c2, r2})
	if len(got) != 2 || got[c1] != r2 || got[c2] != r2 {
		t.Fatalf("PairEvents: %d pairs, c1->%p, c2->%p, want both r2 %p (r1 %p)", len(got), got[c1], got[c2], r2, r1)
	}
}
