package synccmd_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// pairedCall is a tool call of a run as every reader counts it
// (transcript.Pairer): its latest input, and its latest result's output
// and status (answered: it has one).
type pairedCall struct {
	ID, Input, Output, Status string
	Answered                  bool
}

// pairedRun is a run's transcript read through transcript.Pairer, over
// all of its parts: its calls in order, each once (a revised version
// replaces the one before), how many the Pairer leaves without a
// result, and its last agent step result's status and dangling calls.
type pairedRun struct {
	Calls          []pairedCall
	PairerDangling int
	Status         string
	Dangling       []string
}

func readPaired(t *testing.T, path string) pairedRun {
	t.Helper()
	var r pairedRun
	var pairs transcript.Pairer
	for _, ev := range clitest.ReadRun(t, path) {
		if ev.Type == transcript.StepCompleted {
			if res, err := ev.Step().AgentResult(); err == nil && res != nil {
				r.Status, r.Dangling = res.Status, res.Dangling
			}
		}
		n, again, ok := pairs.Feed(ev)
		if !ok {
			continue
		}
		p := ev.Tool()
		switch {
		case ev.Type == transcript.ToolCall && again:
			r.Calls[n].Input = string(p.Input)
		case ev.Type == transcript.ToolCall:
			r.Calls = append(r.Calls, pairedCall{ID: p.CallID, Input: string(p.Input)})
		default:
			r.Calls[n].Output, r.Calls[n].Status, r.Calls[n].Answered = p.Output, p.Status, true
		}
	}
	r.PairerDangling = len(pairs.Dangling())
	return r
}
