package runstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twasm/twasm/transcript"
)

// Bracket is a step or call_workflow step that has started and not yet
// completed: a step.started without its step.completed (same path and
// iteration), or a step.call_workflow.started without its
// step.call_workflow.completed (same child run, or same path and
// iteration).
type Bracket struct {
	Seq        uint64               `json:"seq"`
	Type       transcript.EventType `json:"type"` // step.started or step.call_workflow.started
	Path       string               `json:"path"`
	Iteration  int                  `json:"iteration"`
	Attempt    int                  `json:"attempt,omitempty"`
	Name       string               `json:"name"`
	Kind       transcript.StepKind  `json:"kind"`
	ChildRunID string               `json:"child_run_id,omitempty"`
}

// Completion returns the event that closes b with the given status and
// error text: step.completed or step.call_workflow.completed, at b's path
// and iteration.
func (b Bracket) Completion(status, errText string) *transcript.Event {
	t := transcript.StepCompleted
	if b.Type == transcript.StepCallWorkflowStarted {
		t = transcript.StepCallWorkflowCompleted
	}
	return &transcript.Event{
		Type: t, Path: b.Path, Iteration: b.Iteration, ChildRunID: b.ChildRunID,
		Payload: &transcript.StepPayload{Name: b.Name, Kind: b.Kind, Status: status, Error: errText, Attempt: b.Attempt},
	}
}

// State is what the whole transcript says about its run, kept up to
// date by every critical section (this recorder's appends, and the lines
// other writers appended, read since): whether it started with run.started
// and has ended with run.completed, and which steps and sub-run links are
// still open.
type State struct {
	// First is the type of the first event of the file; "" when the file
	// holds none.
	First transcript.EventType `json:"first"`
	// Name and ParentRunID come from run.started.
	Name        string `json:"name"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	// Finished is set once run.completed is in the file.
	Finished bool `json:"finished"`
	// LastSeq is the seq of the last event.
	LastSeq uint64 `json:"last_seq"`
	// Open lists the open brackets in seq order.
	Open []Bracket `json:"open,omitempty"`
}

// Clone returns a copy of s that shares nothing with it.
func (s *State) Clone() State {
	c := *s
	c.Open = slices.Clone(s.Open)
	return c
}

// Head is the part of a transcript line the run state needs.
type Head struct {
	Seq         *uint64 `json:"seq"`
	RunID       string  `json:"run_id"`
	ParentRunID string  `json:"parent_run_id"`
	ChildRunID  string  `json:"child_run_id"`
	Type        string  `json:"type"`
	Path        string  `json:"path"`
	Iteration   int     `json:"iteration"`
	Payload     struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Attempt int    `json:"attempt"`
	} `json:"payload"`
}

// HeadOf is the Head of an event the recorder writes.
func HeadOf(ev *transcript.Event) Head {
	seq := ev.Seq
	h := Head{Seq: &seq, RunID: ev.RunID, ParentRunID: ev.ParentRunID, ChildRunID: ev.ChildRunID,
		Type: string(ev.Type), Path: ev.Path, Iteration: ev.Iteration}
	if p := ev.Step(); p != nil {
		h.Payload.Name, h.Payload.Kind, h.Payload.Attempt = p.Name, string(p.Kind), p.Attempt
	}
	return h
}

// Apply updates s with one line that carries a seq.
func (s *State) Apply(h *Head) {
	t := transcript.EventType(h.Type)
	s.LastSeq = *h.Seq
	if s.First == "" {
		s.First = t
		if t == transcript.RunStarted {
			s.ParentRunID, s.Name = h.ParentRunID, h.Payload.Name
		}
	}
	switch t {
	case transcript.RunCompleted:
		s.Finished = true
	case transcript.StepStarted, transcript.StepCallWorkflowStarted:
		s.Open = append(s.Open, Bracket{Seq: *h.Seq, Type: t, Path: h.Path, Iteration: h.Iteration, ChildRunID: h.ChildRunID,
			Name: h.Payload.Name, Kind: transcript.StepKind(h.Payload.Kind), Attempt: h.Payload.Attempt})
	case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
		start := transcript.StepStarted
		if t == transcript.StepCallWorkflowCompleted {
			start = transcript.StepCallWorkflowStarted
		}
		for i := len(s.Open) - 1; i >= 0; i-- {
			b := s.Open[i]
			if b.Type != start {
				continue
			}
			same := b.Path == h.Path && b.Iteration == h.Iteration
			if start == transcript.StepCallWorkflowStarted && h.ChildRunID != "" {
				same = b.ChildRunID == h.ChildRunID
			}
			if same {
				s.Open = slices.Delete(s.Open, i, i+1)
				break
			}
		}
	}
}

// Brackets reports whether an event of type t changes the run state beyond
// its seq, so that a line of another writer must be decoded.
func Brackets(t string) bool {
	switch transcript.EventType(t) {
	case transcript.RunStarted, transcript.RunCompleted, transcript.StepStarted, transcript.StepCompleted,
		transcript.StepCallWorkflowStarted, transcript.StepCallWorkflowCompleted:
		return true
	}
	return false
}

// OpenError refuses to end a run whose steps or sub-runs are still open
// (their step.completed or step.call_workflow.completed is not in the
// file): another process may still be recording them, or was killed
// before it could close them. It names each of them.
type OpenError struct {
	RunID string
	Open  []Bracket
}

func (e *OpenError) Error() string {
	parts := make([]string, 0, len(e.Open))
	for _, b := range e.Open {
		it := ""
		if b.Iteration != 0 {
			it = fmt.Sprintf(" iteration %d", b.Iteration)
		}
		if b.Type == transcript.StepCallWorkflowStarted {
			parts = append(parts, fmt.Sprintf("sub-run %s at %q%s (seq %d)", b.ChildRunID, b.Path, it, b.Seq))
		} else {
			parts = append(parts, fmt.Sprintf("step %q%s (seq %d)", b.Path, it, b.Seq))
		}
	}
	return fmt.Sprintf("run %s still has %d open: %s", e.RunID, len(e.Open), strings.Join(parts, ", "))
}

// End returns the batch that ends a run whose file says st, to be written
// in the critical section that read st (recorder.Recorder.RecordFunc):
// the completions of the steps and sub-run links still open, innermost
// first, as cancelled, then run.completed (named name, with status and
// the error text), every one carrying parentID. With open brackets and cancelOpen unset it returns an
// *OpenError naming them instead. The caller checks st.Finished first.
func End(st State, runID, parentID, name, status, text string, cancelOpen bool) ([]*transcript.Event, error) {
	if len(st.Open) > 0 && !cancelOpen {
		return nil, &OpenError{RunID: runID, Open: st.Open}
	}
	evs := make([]*transcript.Event, 0, len(st.Open)+1)
	for i := len(st.Open) - 1; i >= 0; i-- { // innermost first
		ev := st.Open[i].Completion(transcript.StatusCancelled, "the run ended before this completed")
		ev.ParentRunID = parentID
		evs = append(evs, ev)
	}
	return append(evs, &transcript.Event{
		Type:        transcript.RunCompleted,
		RunID:       runID,
		ParentRunID: parentID,
		Payload: &transcript.StepPayload{
			Name:   name,
			Kind:   transcript.KindWorkflow,
			Status: status,
			Error:  text,
		},
	}), nil
}

// statusError is an error that states the status of what it ended: an
// agent step whose agent stopped without a terminal event is incomplete,
// not failed (spec 6.7), and capture's agent errors say so.
type statusError interface {
	error
	Status() string
}

// Outcome maps the error a run or step ended with to its recorded status
// and error text. ctxErr is the error of the context the work ran under:
// a failure while that context is done is a cancellation, whatever the
// error says (a killed child process reports "signal: killed", not
// context.Canceled). An error in the chain with a Status method naming
// incomplete or cancelled records that status; anything else is error.
func Outcome(err, ctxErr error) (status, text string) {
	switch {
	case err == nil:
		return transcript.StatusOK, ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), ctxErr != nil:
		return transcript.StatusCancelled, err.Error()
	}
	if se := statusError(nil); errors.As(err, &se) {
		switch st := se.Status(); st {
		case transcript.StatusIncomplete, transcript.StatusCancelled:
			return st, err.Error()
		}
	}
	return transcript.StatusError, err.Error()
}
