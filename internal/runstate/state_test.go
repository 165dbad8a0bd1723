package runstate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

func step(seq uint64, t transcript.EventType, path string, iter int, child string) *transcript.Event {
	return &transcript.Event{Seq: seq, Type: t, Path: path, Iteration: iter, ChildRunID: child,
		Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}}
}

func TestApplyTracksBrackets(t *testing.T) {
	const child = "0b6e4b0e-6f0a-4c2e-9d1f-2a3b4c5d6e7f"
	tests := []struct {
		name     string
		events   []*transcript.Event
		open     []string // path@iteration of the brackets left open, in seq order
		finished bool
	}{
		{"empty run", []*transcript.Event{step(1, transcript.RunStarted, "", 0, ""), step(2, transcript.RunCompleted, "", 0, "")}, nil, true},
		{"step closed", []*transcript.Event{
			step(1, transcript.RunStarted, "", 0, ""), step(2, transcript.StepStarted, "a", 0, ""), step(3, transcript.StepCompleted, "a", 0, ""),
		}, nil, false},
		{"iterations are told apart", []*transcript.Event{
			step(1, transcript.RunStarted, "", 0, ""), step(2, transcript.StepStarted, "a", 0, ""), step(3, transcript.StepStarted, "a", 1, ""),
			step(4, transcript.StepCompleted, "a", 0, ""),
		}, []string{"a@1"}, false},
		{"a completion closes the innermost match", []*transcript.Event{
			step(1, transcript.RunStarted, "", 0, ""), step(2, transcript.StepStarted, "a", 0, ""), step(3, transcript.StepStarted, "a.b", 0, ""),
			step(4, transcript.StepStarted, "a", 0, ""), step(5, transcript.StepCompleted, "a", 0, ""),
		}, []string{"a@0", "a.b@0"}, false},
		{"a sub-run link closes by its child run", []*transcript.Event{
			step(1, transcript.RunStarted, "", 0, ""), step(2, transcript.StepCallWorkflowStarted, "w", 0, child),
			step(3, transcript.StepCompleted, "w", 0, ""), // a step.completed does not close a sub-run link
		}, []string{"w@0"}, false},
		{"sub-run link closed", []*transcript.Event{
			step(1, transcript.RunStarted, "", 0, ""), step(2, transcript.StepCallWorkflowStarted, "w", 0, child),
			step(3, transcript.StepCallWorkflowCompleted, "other", 3, child),
		}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			for _, ev := range tt.events {
				h := HeadOf(ev)
				if !Brackets(h.Type) {
					t.Fatalf("Brackets(%q) = false", h.Type)
				}
				s.Apply(&h)
			}
			var open []string
			for _, b := range s.Open {
				open = append(open, fmt.Sprintf("%s@%d", b.Path, b.Iteration))
			}
			if fmt.Sprint(open) != fmt.Sprint(tt.open) {
				t.Errorf("open = %v, want %v", open, tt.open)
			}
			if s.Finished != tt.finished || s.First != transcript.RunStarted || s.LastSeq != tt.events[len(tt.events)-1].Seq {
				t.Errorf("state = %+v", s)
			}
		})
	}
	if Brackets(string(transcript.ToolCall)) {
		t.Error("Brackets(tool.call) = true")
	}
}

func TestCloneSharesNothing(t *testing.T) {
	s := State{Open: []Bracket{{Path: "a"}}}
	c := s.Clone()
	c.Open[0].Path = "b"
	if s.Open[0].Path != "a" {
		t.Error("Clone shares Open with its source")
	}
}

func TestEnd(t *testing.T) {
	const run, parent = "run", "parent"
	st := State{Open: []Bracket{
		{Seq: 2, Type: transcript.StepStarted, Path: "a", Name: "a", Kind: transcript.KindAgent},
		{Seq: 3, Type: transcript.StepCallWorkflowStarted, Path: "a.w", Iteration: 2, ChildRunID: "child", Name: "w", Kind: transcript.KindCallWorkflow},
	}}
	_, err := End(st, run, parent, "wf", transcript.StatusOK, "", false)
	var open *OpenError
	if !errors.As(err, &open) || len(open.Open) != 2 {
		t.Fatalf("End with open brackets = %v, want an *OpenError naming both", err)
	}
	for _, want := range []string{`step "a" (seq 2)`, `sub-run child at "a.w" iteration 2 (seq 3)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	evs, err := End(st, run, parent, "wf", transcript.StatusError, "boom", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.EventType{transcript.StepCallWorkflowCompleted, transcript.StepCompleted, transcript.RunCompleted}
	if len(evs) != len(want) {
		t.Fatalf("End gave %d events, want %d", len(evs), len(want))
	}
	for i, ev := range evs {
		if ev.Type != want[i] || ev.ParentRunID != parent {
			t.Errorf("event %d = %s (parent %q), want %s (parent %q)", i, ev.Type, ev.ParentRunID, want[i], parent)
		}
	}
	if p := evs[0].Step(); p.Status != transcript.StatusCancelled || evs[0].ChildRunID != "child" || evs[0].Iteration != 2 {
		t.Errorf("sub-run completion = %+v %+v", evs[0], p)
	}
	if p := evs[2].Step(); evs[2].RunID != run || p.Status != transcript.StatusError || p.Error != "boom" || p.Name != "wf" {
		t.Errorf("run.completed = %+v %+v", evs[2], p)
	}
}

type statusErr struct{ status string }

func (e statusErr) Error() string  { return "stopped: " + e.status }
func (e statusErr) Status() string { return e.status }

func TestOutcome(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name       string
		err, ctx   error
		status     string
		textPrefix string
	}{
		{"nil", nil, nil, transcript.StatusOK, ""},
		{"plain", errors.New("boom"), nil, transcript.StatusError, "boom"},
		{"canceled", fmt.Errorf("run: %w", context.Canceled), nil, transcript.StatusCancelled, "run:"},
		{"killed while its context is done", errors.New("signal: killed"), ctx.Err(), transcript.StatusCancelled, "signal"},
		{"incomplete", fmt.Errorf("agent: %w", statusErr{transcript.StatusIncomplete}), nil, transcript.StatusIncomplete, "agent:"},
		{"a status outside the two is error", statusErr{transcript.StatusOK}, nil, transcript.StatusError, "stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, text := Outcome(tt.err, tt.ctx)
			if status != tt.status || !strings.HasPrefix(text, tt.textPrefix) {
				t.Errorf("Outcome = %q, %q; want %q, %q...", status, text, tt.status, tt.textPrefix)
			}
		})
	}
}
