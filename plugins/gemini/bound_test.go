//go:build !wasip1

package gemini

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// agentsAtEnd is a normalizer whose sub-agents are counted at the end of
// the input, before End closes the open ones (once the last batch's
// results, which wait for the next event, are reported).
type agentsAtEnd struct {
	*normalizer
	kept, ids int
}

func (a *agentsAtEnd) End(out *sdk.Out) error {
	a.releaseResults(false, out)
	a.kept, a.ids = len(a.agents), len(a.scopes)
	return a.normalizer.End(out)
}

// TestStreamAgentsBounded feeds a stream whose sub-agent calls all reuse
// the id call_1, 3 and 300 of them, each answered: every one opens a
// scope of its own (call_1, call_1#2, ...), and a closed one is kept no
// more, so one count, of one id, is all that stays (before, every call
// added a sub-agent: the memory of the wasm module grew without bound,
// TestPluginMemoryFlat).
func TestStreamAgentsBounded(t *testing.T) {
	ev := func(typ, rest string) string {
		return `{"type":"` + typ + `","timestamp":"2026-06-01T08:00:01.000Z",` + rest + `}`
	}
	use := ev("tool_use", `"tool_name":"codebase_investigator","tool_id":"call_1","parameters":{"objective":"Map it."}`)
	res := ev("tool_result", `"tool_id":"call_1","status":"success","output":"Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\nDone."`)
	for _, calls := range []int{3, 300} {
		lines := []string{ev("init", `"session_id":"s1","model":"m"`), ev("message", `"role":"user","content":"Go."`)}
		for range calls {
			lines = append(lines, use, res)
		}
		var a *agentsAtEnd
		p := Plugin
		p.New = func(abi.BeginOptions) sdk.Normalizer { a = &agentsAtEnd{normalizer: newNormalizer()}; return a }
		r, err := sdktest.Run(context.Background(), p, "gemini", []byte(strings.Join(lines, "\n")+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		scopes := map[string]bool{}
		for _, e := range r.Events {
			scopes[e.Scope] = true
		}
		if !scopes["call_1"] || !scopes["call_1#"+strconv.Itoa(calls)] || len(scopes) != calls+1 {
			t.Errorf("%d calls: events in %d scopes, want the run's and call_1 to call_1#%d", calls, len(scopes), calls)
		}
		if a.kept != 0 || a.ids != 1 {
			t.Errorf("%d calls: %d sub-agents and %d ids kept at the end, want 0 and 1", calls, a.kept, a.ids)
		}
	}
}
