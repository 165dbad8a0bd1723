package lifecycle

import (
	"context"

	"github.com/twasm/twasm/transcript"
)

// Record writes ev as an event of the run itself, outside any step (path
// "", iteration 0): the shape of a sub-agent's child run, whose messages
// and tool calls belong to no workflow step. run.* and step.* events are
// refused with [ErrReservedType], as for [Step.Record].
func (r *Run) Record(ctx context.Context, ev *transcript.Event) error {
	return r.root.Record(ctx, ev)
}
