// Package lifecycle is the run and step API for Go programs that embed
// twasm, typically a workflow engine: it writes the run.*, step.* and
// step.call_workflow.* events of a transcript so that the caller cannot
// get the brackets, paths or links wrong, and stamps every message and
// tool event with the step that produced it. A library user records a
// workflow with it; package transcript reads the result back.
//
//	err := lifecycle.Do(ctx, recorder.NewStore(dir), lifecycle.RunOptions{Name: "review"},
//		func(ctx context.Context, run *lifecycle.Step) error {
//			return run.Step(ctx, "review", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
//				return s.UserMessage(ctx, "Review this diff.", "You are a reviewer.")
//			})
//		})
//
// This is where a program that records its own workflow starts. twasm's
// public packages are transcript, recorder, lifecycle, capture and host; a
// plugin author imports abi/sdk, abi and golden; each plugins/<provider>
// package exports its normalizer. Everything else in the module is internal
// (README, Layout).
//
// # Model
//
// A [Run] is one transcript file. Steps form a tree under it, started
// from the run's root scope ([Run.Root], which [Do] hands to its function)
// or from another step: [Step.Step], [Step.ForEach], [Step.While],
// [Step.Parallel], [Step.CallWorkflow] (a child run in its own file) and
// [Step.SubRun] (a child run the caller ends). A step's function receives
// a [*Step] through which it records messages ([Step.UserMessage],
// [Step.AssistantMessage]), tool calls (through a [Router]) and any other
// message.* or tool.* event ([Step.Record]; [Step.RecordBatch] for events
// that are ready together, written with one lock and one write). Step
// kinds are the built-in ones of [transcript.StepKind] (a terminal step
// is a step of kind [transcript.KindTerminal]) or any custom kind that
// passes its Valid. Retries, a retry delay, a called workflow's name,
// fail-fast parallel branches and ending the run with the step (one
// write and one fsync for the step's completion and run.completed) are
// set with [StepOptions], the last argument of the methods that start a
// step; the zero value is the default.
//
// # Invariants
//
// The run bracket is always written. run.started is the first line of
// every file (schema [transcript.Schema], producer "twasm" and its
// version) and run.completed the last one, with status ok, error or
// cancelled and the error text, whether the body returns, fails, is
// cancelled, panics or calls runtime.Goexit. An error whose Status
// method says incomplete or cancelled ends its step or run with that
// status (capture's does for an agent that stopped without a terminal
// event: incomplete, spec 6.7). [Do] and the child runs of
// [Step.CallWorkflow] guarantee it; with [Start], defer [Run.End]. A
// panic is recorded as "panic: <value>" and then continues. Ending is
// idempotent. A cancelled context never prevents the bracket from being
// written: bracket events are recorded with context.WithoutCancel.
//
// A step with [StepOptions].EndRun ends the run when its last attempt
// returns: its completion and run.completed are one batch, written as
// [Run.Finish] with the step's error would write them (the run's status
// and text, whatever is still open closed first), and a later Finish or
// End writes nothing; a step that panics or calls runtime.Goexit ends as
// without it.
//
// run.completed is written once and nothing follows it, across processes:
// the end is decided inside the recorder's critical section
// (recorder.Recorder.RecordFunc) against the run state of the whole file,
// and the recorder refuses any append once run.completed is in the file
// ([recorder.ErrRunFinished]). Ending a run whose file still has open steps or
// sub-run links writes their completions first, as cancelled, innermost
// first, in the same critical section. (`twasm run end`, which ends a run
// another process began, instead refuses with an error naming them unless
// --cancel-open is given, because another process may still be recording
// them; it is internal/runctl, built on this package's Attach and the same
// critical section.)
//
// Step brackets nest inside it. Each step attempt writes step.started and
// step.completed (step.call_workflow.* for call_workflow steps), also on
// error, panic, Goexit or cancellation. When the context is already done
// a step is not run, but it is still recorded, as cancelled. Everything a
// step records lies between its two lines: once a step (or run) has
// ended, recording through it fails with [ErrEnded] rather than writing
// outside the bracket. Callers cannot write run.* or step.* events
// themselves ([ErrReservedType]).
//
// Status: nil is ok; an error is "cancelled" when it is a context error or
// the step's context is done, else "error".
//
// # Path and iteration
//
// path is the dot-separated chain of step names from the top of the run:
// "review", "fanout.branch_a", "per_file.lint". Names are single path
// segments (no '.', no whitespace). Loop indexes are never part of the
// path; run.* events have path "".
//
// iteration is the zero-based index of the innermost loop enclosing the
// event or, outside every loop, of the retry attempt; 0 when there is
// neither:
//
//   - A for_each or while step's own step.started/step.completed carry the
//     iteration of the scope it runs in. Iteration i of its body sees the
//     loop step with iteration i: events recorded through it and child
//     steps ("per_file.lint") carry i, down to the next inner loop.
//   - A step given [StepOptions].Retries writes one step.started /
//     step.completed pair per attempt, each with the zero-based attempt
//     in the payload (the encoder leaves out attempt 0). Outside any loop
//     the attempts are the innermost "loop": attempt k and everything
//     inside it carry iteration k.
//   - Inside a loop the loop index wins: a retried "per_file.lint" at
//     index 3 writes iteration 3 for every attempt, told apart by the
//     payload's attempt. Letting the retry win there would make lint at
//     index 3, attempt 0 indistinguishable from lint at index 0; with
//     this rule (path, iteration, attempt) names every step attempt
//     exactly once, and message and tool events of a step attempt are
//     the ones between its step.started and step.completed with the same
//     path and iteration (attempts of one step never overlap).
//   - Parallel branches are child steps "<parallel>.<branch>" and inherit
//     the parallel step's iteration.
//
// # Runs across processes
//
// `twasm run begin` and `twasm record --run-id` are [Start] +
// [Run.Detach] and [Attach] + [Run.StepAt] + [Run.Detach]; a run begun
// as the child of a run in another process (`twasm run begin --parent`)
// is started with [RunOptions].ParentRunID once its parent holds the
// link. Ending such a run, and writing that link, is internal/runctl's
// (`twasm run end`, `twasm run begin --parent`). Attach creates nothing
// (a missing run matches fs.ErrNotExist) and reads the run's name, parent
// and state from the recorder's checkpoint and the lines after it, not
// from the whole file. [Run.StepAt] checks a step path given from outside
// before anything is written.
//
// # Child runs
//
// [Step.CallWorkflow] creates a child run file in the same store, with a
// new run id. The parent's step.call_workflow.started and
// step.call_workflow.completed carry child_run_id at the call_workflow
// step's path; every line of the child file carries parent_run_id. Child
// runs can call workflows in turn, to any depth; each file links only to
// its direct parent. [Step.SubRun] opens such a child imperatively for
// work whose end the caller controls (a provider's sub-agent); it is
// linked the same way, through a call_workflow step "<step>.<name>" whose
// completion is written when the child ends.
//
// # Concurrency
//
// A Run, its Steps and a Router are safe for concurrent use: parallel
// branches run in their own goroutines and record into the same file
// through the recorder, which serialises writes and assigns seq in file
// order. A Step must not be used after its function returns (records
// fail with [ErrEnded]); a goroutine started inside a step must be waited
// for before the step returns. A Run must not be used after it ends.
package lifecycle
