// Package runstate is what a whole transcript says about its run: whether
// it started with run.started and ended with run.completed, its last seq,
// and the steps and sub-run links still open. Package recorder keeps it
// current under the file lock and in its checkpoint, and hands it to
// package lifecycle inside the critical section (Recorder.RecordFunc) so
// that a run is ended once, with its open brackets closed or named.
package runstate
