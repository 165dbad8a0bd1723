// Package runctl is the cross-process end of a run's life that only
// twasm's command line drives: `twasm run begin --parent` ([BeginChild])
// and `twasm run end` ([End]). It is built on package lifecycle's public
// API (Attach, Start, Run.Detach) and on the recorder's critical section
// (Recorder.RecordFunc with internal/runstate), so that, as for a run a
// Go program owns, run.completed is written once and nothing follows it,
// however many processes end the run at the same time.
package runctl
