package lifecycle

import (
	"context"

	"github.com/twasm/twasm/internal/fanout"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Record writes ev as an event of the run itself, outside any step (path
// "", iteration 0): the shape of a sub-agent's child run, whose messages
// and tool calls belong to no workflow step. run.* and step.* events are
// refused with [ErrReservedType], as for [Step.Record].
func (r *Run) Record(ctx context.Context, ev *transcript.Event) error {
	return r.root.Record(ctx, ev)
}

// Subscribe returns a live subscription to the events this process writes
// into the run's file (not those of its child runs), in seq order, with the
// recorder's drop-newest policy for slow readers. It is closed when the
// run ends or detaches.
func (r *Run) Subscribe(opts ...fanout.SubOption) *fanout.Subscription[transcript.Event] {
	return r.rec.Subscribe(opts...)
}

// Recorder returns the recorder writing the run's file, for its statistics
// and repairs.
func (r *Run) Recorder() *recorder.Recorder { return r.rec }
