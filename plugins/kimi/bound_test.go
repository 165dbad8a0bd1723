//go:build !wasip1

package kimi

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestAgentScopeNames checks the names of new sub-agent scopes: a name,
// then name#2, name#3, ..., skipping a name a scope has already, even
// when an Agent call's id is itself of that form.
func TestAgentScopeNames(t *testing.T) {
	tests := []struct {
		names, want []string
	}{
		{[]string{"call_1", "call_1", "call_1"}, []string{"call_1", "call_1#2", "call_1#3"}},
		{[]string{"a#2", "a", "a", "a"}, []string{"a#2", "a", "a#3", "a#4"}},
		{[]string{"a", "a", "a#2", "a#2"}, []string{"a", "a#2", "a#2#2", "a#2#3"}},
		{[]string{"a#02", "a", "a"}, []string{"a#02", "a", "a#2"}},
		{[]string{"a", "b", "a", "b"}, []string{"a", "b", "a#2", "b#2"}},
	}
	for _, tt := range tests {
		var n normalizer
		for i, name := range tt.names {
			if got := n.agentScope(name); got != tt.want[i] {
				t.Errorf("%q: scope %d is %q, want %q", tt.names, i, got, tt.want[i])
			}
		}
	}
}

// endState is a normalizer whose state is read at the end of the input,
// before End closes what is open.
type endState struct {
	*normalizer
	counts
}

// counts are how many tallies, sub-agents (known, and open) and scope
// names a normalizer keeps.
type counts struct{ tallies, agents, running, names int }

func (e *endState) End(out *sdk.Out) error {
	for _, m := range e.calls {
		e.counts.tallies += len(m)
	}
	for _, m := range e.normalizer.agents {
		e.counts.agents += len(m)
	}
	e.counts.running, e.counts.names = len(e.normalizer.running), len(e.normalizer.names)
	return e.normalizer.End(out)
}

// TestReusedAgentIDBounded feeds a Kimi CLI log whose Agent calls reuse
// their ids once and 50 times over in one input: a closed sub-agent's
// scope keeps no state, so the calls' tallies, the sub-agents known and
// the scope names kept are as many after 50 passes as after one (before,
// every pass added a scope's tallies and a sub-agent: the memory of the
// wasm module grew without bound, TestPluginMemoryFlat).
func TestReusedAgentIDBounded(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "kimi", "legacy_subagent_call_id_reused.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	state := func(reps int) counts {
		var e *endState
		p := Plugin
		p.New = func(abi.BeginOptions) sdk.Normalizer { e = &endState{normalizer: &normalizer{}}; return e }
		if _, err := sdktest.Run(context.Background(), p, "kimi", bytes.Repeat(raw, reps)); err != nil {
			t.Fatal(err)
		}
		return e.counts
	}
	one, many := state(1), state(50)
	if one.tallies == 0 || one.agents == 0 {
		t.Fatalf("one pass: %+v, want tallies and sub-agents", one)
	}
	if many != one {
		t.Errorf("50 passes: %+v, want as after one: %+v", many, one)
	}
}
