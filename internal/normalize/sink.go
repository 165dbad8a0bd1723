package normalize

import (
	"context"

	"github.com/twasm/twasm/transcript"
)

// Scope describes a sub-agent: events reported in it belong to a child run.
type Scope struct {
	// ID is the plugin's scope id (for Claude, the parent tool use id).
	ID string
	// ParentToolID is the tool call of the step that started it.
	ParentToolID string
	// Name is the sub-agent's name or type; Description what it was asked.
	Name, Description string
}

// Sink receives what the assembler builds. Events carry Type, Payload and
// Timestamp (the provider's when known, else the time of assembly); the
// sink owns seq, run ids, path and iteration. Scope is "" for the step
// itself.
//
// Emit gets the events that are ready together, in order: consecutive
// events of one scope that the records of one plugin call completed, with
// nothing (another scope's event, a scope opening or closing) between
// them. A sink that writes a transcript writes them as one batch
// (lifecycle.Step.RecordBatch: one lock and one write); a failed Emit
// fails the stream. evs is reused after Emit returns; the events are not.
type Sink interface {
	Emit(ctx context.Context, scope string, evs []*transcript.Event) error
	OpenScope(ctx context.Context, s Scope) error
	CloseScope(ctx context.Context, scope, status, errText string) error
}

// A RawSink is a Sink that holds some of the raw lines back before it
// writes them (a redacting raw capture: capture.Options.Split). Before it
// is handed anything (Emit, OpenScope, CloseScope), RawLines gives it the
// last raw line what it is handed comes from (lines are numbered from 1,
// as the stream cut them), so that it writes the raw lines up to it
// first: a raw capture never lags what the transcript holds.
type RawSink interface {
	Sink
	RawLines(ctx context.Context, upto int) error
}

// Collected is one thing a Collector received, in order.
type Collected struct {
	Scope string
	// Event is set for an emitted event.
	Event *transcript.Event
	// Open is set for a scope opening, Close (status) for a closing.
	Open        *Scope
	Close       bool
	CloseStatus string
	CloseError  string
}

// Collector is a Sink that keeps everything in memory, in order (tests,
// golden files, conversions).
type Collector struct {
	Items []Collected
}

// Emit records evs.
func (c *Collector) Emit(_ context.Context, scope string, evs []*transcript.Event) error {
	for _, ev := range evs {
		c.Items = append(c.Items, Collected{Scope: scope, Event: ev})
	}
	return nil
}

// OpenScope records s.
func (c *Collector) OpenScope(_ context.Context, s Scope) error {
	c.Items = append(c.Items, Collected{Scope: s.ID, Open: &s})
	return nil
}

// CloseScope records a closing.
func (c *Collector) CloseScope(_ context.Context, scope, status, errText string) error {
	c.Items = append(c.Items, Collected{Scope: scope, Close: true, CloseStatus: status, CloseError: errText})
	return nil
}

// Events returns the events of one scope, in order.
func (c *Collector) Events(scope string) []*transcript.Event {
	var out []*transcript.Event
	for _, it := range c.Items {
		if it.Event != nil && it.Scope == scope {
			out = append(out, it.Event)
		}
	}
	return out
}
