package transcript

import (
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
