package export

import (
	"context"

	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/transcript"
)

// RunVisit is what a format does with one run of a tree ([Walk]): Event
// receives the run's events in file order, masked when the run says so;
// End receives the outcome of reading them (nil, or why the run could not
// be read whole) and returns the run's outcome, its own error or that
// one. End is called once the run's visit has begun, whatever happens,
// so that it can clean up. Either may be nil.
type RunVisit struct {
	Event func(ev *transcript.Event) error
	End   func(readErr error) error
}

// Visit begins the visit of run r, at depth 0 for the root. An error ends
// the walk; one that wraps fs.ErrNotExist, for a child run, reports the
// link as missing instead.
type Visit func(ctx context.Context, r Run, depth int) (RunVisit, error)

// Walk streams run, then each child run it links to (a step.started or
// step.call_workflow.started naming a child_run_id, in file order), by
// runtree's rules: depth first, each run once, at most runtree.MaxDepth
// deep, a child id checked before it names a file. A link not followed
// (missing, a cycle, too deep, an invalid id, a file that is not a
// transcript) is returned in skipped and the rest of the tree is walked.
// An export format is a Visit: it holds one run's state at a time, so a
// tree of any size streams in bounded memory. ExportDir is one.
func Walk(ctx context.Context, run Run, visit Visit) (skipped []*runtree.ChildError, err error) {
	type visited = runtree.Visited[Run, struct{}]
	_, err = runtree.Walk(ctx, run, func(ctx context.Context, r Run, depth int) (visited, error) {
		var v visited
		rv, err := visit(ctx, r, depth)
		if err != nil {
			return v, err
		}
		var children []string
		err = runEvents(ctx, r, func(ev *transcript.Event) error {
			if v.ID == "" {
				v.ID = ev.RunID
			}
			if ev.ChildRunID != "" && (ev.Type == transcript.StepStarted || ev.Type == transcript.StepCallWorkflowStarted) {
				children = append(children, ev.ChildRunID)
			}
			if rv.Event == nil {
				return nil
			}
			return rv.Event(ev)
		})
		if rv.End != nil {
			err = rv.End(err)
		}
		if err != nil {
			return v, err
		}
		for _, c := range children {
			v.Links = append(v.Links, link(r, c, func(_ struct{}, ce *runtree.ChildError) {
				if ce != nil {
					skipped = append(skipped, ce)
				}
			}))
		}
		return v, nil
	})
	return skipped, err
}
