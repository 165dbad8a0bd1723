package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// Run ids used by the tests: UUID v4, so the validator raises no format
// warning about them.
const (
	runA   = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	runB   = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	runC   = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	runOld = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

var t0 = time.Date(2025, 5, 1, 12, 0, 0, 123e6, time.UTC)

// mk builds a valid event of type t with a payload of the right family.
func mk(seq uint64, run string, t EventType, path string, iter int) *Event {
	e := &Event{Seq: seq, RunID: run, Type: t, Path: path, Iteration: iter, Timestamp: t0.Add(time.Duration(seq) * time.Second)}
	switch t.payloadKind() {
	case payloadStep:
		p := &StepPayload{Name: path, Kind: KindAgent}
		switch t {
		case RunStarted:
			p.Name, p.Kind, p.Schema, p.Producer = "wf", KindWorkflow, Schema, &Producer{Name: "twasm", Version: "0.1.0"}
		case RunCompleted:
			p.Name, p.Kind, p.Status = "wf", KindWorkflow, StatusOK
		case StepCompleted:
			p.Status = StatusOK
		case StepCallWorkflowStarted, StepCallWorkflowCompleted:
			p.Kind = KindCallWorkflow
		}
		e.Payload = p
	case payloadMessage:
		role := "assistant"
		if t == MessageUser {
			role = "user"
		}
		e.Payload = &MessagePayload{Role: role, Blocks: []Block{TextBlock("hello")}}
	case payloadTool:
		e.Payload = &ToolPayload{Name: "bash", CallID: "call-1", Fidelity: FidelityAgentEmitted, Input: json.RawMessage(`{"cmd":"ls"}`)}
	}
	return e
}

func withCall(e *Event, id string) *Event {
	e.Tool().CallID = id
	return e
}

func withChild(e *Event, child string) *Event {
	e.ChildRunID = child
	return e
}

func withParent(e *Event, parent string) *Event {
	e.ParentRunID = parent
	return e
}

// jsonl encodes events as a transcript file.
func jsonl(t testing.TB, evs ...*Event) []byte {
	t.Helper()
	var b []byte
	for _, e := range evs {
		var err error
		b, err = AppendEvent(b, e)
		if err != nil {
			t.Fatalf("AppendEvent(%s seq %d): %v", e.Type, e.Seq, err)
		}
		b = append(b, '\n')
	}
	return b
}

// seqRun renumbers evs 1..N and sets their run id.
func seqRun(run string, evs ...*Event) []*Event {
	for i, e := range evs {
		e.Seq = uint64(i + 1)
		e.RunID = run
	}
	return evs
}

// goodRun is a finished run with one agent step, a message and a tool pair.
func goodRun(run string) []*Event {
	return seqRun(run,
		mk(0, run, RunStarted, "", 0),
		mk(0, run, StepStarted, "review", 0),
		mk(0, run, MessageUser, "review", 0),
		mk(0, run, MessageAssistant, "review", 0),
		withCall(mk(0, run, ToolCall, "review", 0), "c1"),
		withCall(mk(0, run, ToolResult, "review", 0), "c1"),
		mk(0, run, StepCompleted, "review", 0),
		mk(0, run, RunCompleted, "", 0),
	)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func eq[T comparable](t testing.TB, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// Markers a test table gives in place of a sentinel, to match a typed
// error with errors.As.
var (
	errAnyUnknownEventType = errors.New("any *UnknownTypeError of an event")
	errAnyUnknownBlockType = errors.New("any *UnknownTypeError of a block")
)

// matches reports whether err matches target: a sentinel, or one of the
// markers above.
func matches(err, target error) bool {
	switch target {
	case errAnyUnknownEventType, errAnyUnknownBlockType:
		var ut *UnknownTypeError
		return errors.As(err, &ut) && (ut.Block < 0) == (target == errAnyUnknownEventType)
	}
	return errors.Is(err, target)
}

func isErr(t testing.TB, err, target error) {
	t.Helper()
	if !matches(err, target) {
		t.Fatalf("error %v does not match %v", err, target)
	}
}

func bytesEq(t testing.TB, got, want []byte, what string) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// withUsage sets a message event's usage.
func withUsage(e *Event, u Usage) *Event {
	e.Message().Usage = &u
	return e
}
