package export

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// bashEvent is a bash tool call or result of step "agent" (iteration
// iter) at second s, as the agent emitted it; revised marks it a new
// version of an earlier one (transcript.RevisedField).
func bashEvent(typ transcript.EventType, s, iter int, id, cmd, status string, revised bool) *transcript.Event {
	p := &transcript.ToolPayload{Name: "bash", CallID: id, Command: cmd, Status: status, Fidelity: transcript.FidelityAgentEmitted}
	if revised {
		p.Extra = map[string]json.RawMessage{transcript.RevisedField: json.RawMessage("true")}
	}
	return &transcript.Event{Type: typ, Path: "agent", Iteration: iter, Timestamp: at(s), Payload: p}
}

// agentStepEvent is the start or the end (ok) of step "agent"
// (iteration iter) at second s.
func agentStepEvent(typ transcript.EventType, s, iter int) *transcript.Event {
	p := &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}
	if typ == transcript.StepCompleted {
		p.Status = "ok"
	}
	return &transcript.Event{Type: typ, Path: "agent", Iteration: iter, Timestamp: at(s), Payload: p}
}

// agentRun writes run rootID: workflow "s" started at second 0, evs,
// and its end (ok) at second end.
func agentRun(t *testing.T, end int, evs ...*transcript.Event) Run {
	t.Helper()
	all := append([]*transcript.Event{{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}}}, evs...)
	all = append(all, &transcript.Event{Type: transcript.RunCompleted, Timestamp: at(end), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Status: "ok"}})
	p := writeRun(t, t.TempDir(), rootID, all)
	return Run{Path: p, Dir: filepath.Dir(p)}
}
