package export

import (
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// An archived session with no run.completed has its latest part's
// status, unless a step is open; any other run has none.
func TestOpenSession(t *testing.T) {
	started := func(source bool) *transcript.Event {
		p := &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow}
		if source {
			p.Extra = map[string]json.RawMessage{"source": json.RawMessage(`{"provider":"claude"}`)}
		}
		return &transcript.Event{Type: transcript.RunStarted, Payload: p}
	}
	step := func(typ transcript.EventType, path string, iter int, status string) *transcript.Event {
		p := &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}
		if status != "" {
			p.Status = transcript.StatusOK
			p.Result, _ = json.Marshal(&transcript.AgentResult{Provider: "claude", Status: status})
		}
		return &transcript.Event{Type: typ, Path: path, Iteration: iter, Payload: p}
	}
	tests := []struct {
		name string
		evs  []*transcript.Event
		want string
		ok   bool
	}{
		{"recorded run", []*transcript.Event{started(false), step(transcript.StepStarted, "agent", 0, ""), step(transcript.StepCompleted, "agent", 0, "ok")}, "", false},
		{"session, no part yet", []*transcript.Event{started(true)}, "", false},
		{"session, parts", []*transcript.Event{started(true),
			step(transcript.StepStarted, "agent", 0, ""), step(transcript.StepCompleted, "agent", 0, "ok"),
			step(transcript.StepStarted, "agent", 1, ""), step(transcript.StepCompleted, "agent", 1, "incomplete")}, "incomplete", true},
		{"session, part being written", []*transcript.Event{started(true),
			step(transcript.StepStarted, "agent", 0, ""), step(transcript.StepCompleted, "agent", 0, "error"),
			step(transcript.StepStarted, "agent", 1, "")}, "", false},
		{"nested step does not count", []*transcript.Event{started(true),
			step(transcript.StepStarted, "agent", 0, ""), step(transcript.StepCompleted, "agent", 0, "error"),
			step(transcript.StepStarted, "agent.sub", 0, ""), step(transcript.StepCompleted, "agent.sub", 0, "ok")}, "error", true},
	}
	for _, tc := range tests {
		var o openSession
		for _, ev := range tc.evs {
			o.note(ev)
		}
		got, ok := o.sessionStatus()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
