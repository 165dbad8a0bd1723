package export

import (
	"context"

	"github.com/twasm/twasm/transcript"
)

// Settled reads run and returns its run id, the last seq of its
// transcript and the
// seq of the last event after which no step of the run was open (0: none
// yet): the furthest point up to which an export may send the run's
// spans and later go on from the next seq without cutting a step's span
// in two. A run that ended is settled at its run.completed. An export
// that keeps a cursor per run (`export otlp --new`) sends the range
// (cursor, settled] and stores settled as the new cursor.
func Settled(ctx context.Context, run Run) (id string, settled, last uint64, err error) {
	open := map[stepKey]int{}
	err = eachEvent(ctx, run.Path, func(ev *transcript.Event) error {
		if id == "" {
			id = ev.RunID
		}
		last = ev.Seq
		k := stepKey{ev.Path, ev.Iteration}
		switch ev.Type {
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			open[k]++
		case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
			if open[k]--; open[k] <= 0 {
				delete(open, k)
			}
		case transcript.RunCompleted:
			clear(open)
		}
		if len(open) == 0 {
			settled = ev.Seq
		}
		return nil
	})
	return id, settled, last, err
}
