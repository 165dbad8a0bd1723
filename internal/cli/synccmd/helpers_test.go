package synccmd_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// doctorStore is one store of `twasm doctor --json`.
type doctorStore = clitest.DoctorStore

// doctorStores runs `twasm doctor --json`, which must leave the agent's
// files under dir as they were, and returns its stores by name.
func doctorStores(t *testing.T, h *clitest.Home, dir string) map[string]doctorStore {
	t.Helper()
	var r clitest.Result
	clitest.Unchanged(t, dir, "doctor", func() { r = h.OK("doctor", "--json") })
	return clitest.DoctorStores(t, r.Out)
}

// syncOutcomes runs `twasm sync`, which must leave the agent's files
// under dir as they were, and returns its outcomes (clitest.Outcomes).
func syncOutcomes(t *testing.T, h *clitest.Home, dir string) map[string][]string {
	t.Helper()
	var r clitest.Result
	clitest.Unchanged(t, dir, "sync", func() { r = h.OK("sync") })
	return clitest.Outcomes(r.Out)
}

// got0 is the first of ids, failing the test when there is none.
func got0(t *testing.T, ids []string) string {
	t.Helper()
	if len(ids) == 0 {
		t.Fatal("no run")
	}
	return ids[0]
}

// runTally is what a synced session's run holds, counted for the sync
// tests: calls by id, each call's one result, assistant messages, the
// agent step results (one per part) and their output tokens.
type runTally struct {
	calls     map[string]int
	results   map[string]*transcript.ToolPayload
	responses int
	parts     []*transcript.AgentResult
	output    int64
}

// tallyRun validates the run at path and counts it; a second result for
// a call, and a call without exactly one call and one result, fail t.
func tallyRun(t *testing.T, path string) runTally {
	t.Helper()
	clitest.Validate(t, path)
	r := runTally{calls: map[string]int{}, results: map[string]*transcript.ToolPayload{}}
	for _, ev := range clitest.ReadRun(t, path) {
		switch ev.Type {
		case transcript.ToolCall:
			r.calls[ev.Tool().CallID]++
		case transcript.ToolResult:
			if r.results[ev.Tool().CallID] != nil {
				t.Errorf("call %s: a second result", ev.Tool().CallID)
			}
			r.results[ev.Tool().CallID] = ev.Tool()
		case transcript.MessageAssistant:
			r.responses++
		case transcript.StepCompleted:
			if res, err := ev.Step().AgentResult(); err == nil && res != nil {
				r.parts = append(r.parts, res)
				if res.Usage != nil && res.Usage.OutputTokens != nil {
					r.output += *res.Usage.OutputTokens
				}
			}
		}
	}
	for id, n := range r.calls {
		if n != 1 || r.results[id] == nil {
			t.Errorf("call %s: %d calls, result %v (want one each)", id, n, r.results[id])
		}
	}
	return r
}
