package transcript

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/twasm/twasm/internal/jsonstr"
)

func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	type inner struct {
		A int     `json:"a"`
		B *string `json:"b,omitempty"`
	}
	s := "x"
	tests := []any{
		nil, "plain", 42, -7, uint8(3), 1.5, true, false,
		[]int{1, 2}, []string(nil), map[string]int{"b": 2, "a": 1}, map[string]int(nil),
		inner{A: 1}, &inner{A: 2, B: &s}, []any{"a", 1, nil},
		json.RawMessage(`{"k": [1, 2]}`),
		AgentResult{Provider: "claude", Status: "ok", Usage: &Usage{InputTokens: new(int64(10))}, CostUSD: new(0.25),
			Unmapped: map[string]int{"x": 1}, Dangling: []string{"t1"}, ExitCode: new(0)},
	}
	for _, v := range tests {
		got, err := marshalValue(nil, v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		want, _ := json.Marshal(v)
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%#v: invalid JSON %s", v, got)
		}
		_ = json.Unmarshal(want, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("%#v: got %s, encoding/json %s", v, got, want)
		}
	}
}

func TestAgentResultKeepsInvalidUTF8(t *testing.T) {
	r := AgentResult{Provider: "codex", Status: "ok", FinalText: "nul\x00 bad\xff ansi\x1b[0m"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("invalid JSON %s", b)
	}
	ev := &Event{RunID: "r", Type: StepCompleted, Payload: &StepPayload{Name: "a", Kind: KindAgent, Result: b}}
	line, err := AppendEvent(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeEvent(line)
	if err != nil {
		t.Fatal(err)
	}
	raw := back.Step().Result
	// The final text's bytes are recoverable from the line.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	got, err := jsonstr.Unquote(m["final_text"])
	if err != nil || got != r.FinalText {
		t.Fatalf("final text %q (%v), want %q", got, err, r.FinalText)
	}
}

func TestAppendValueErrors(t *testing.T) {
	for _, v := range []any{math.NaN(), map[int]int{1: 1}, make(chan int)} {
		if _, err := marshalValue(nil, v); !errors.Is(err, ErrInvalidEvent) {
			t.Fatalf("%#v: %v", v, err)
		}
	}
	var deep any = 1
	for i := 0; i < 200; i++ {
		deep = []any{deep}
	}
	if _, err := marshalValue(nil, deep); err == nil {
		t.Fatal("no error for a value nested too deep")
	}
}
