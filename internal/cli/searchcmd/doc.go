// Package searchcmd implements `twasm search` over the storage's index
// (package internal/index), and Refresh, with which the commands that
// archive runs (import, sync) keep the index current. record creates a
// missing index with its run (RefreshRuns) and otherwise leaves the
// index to its readers, which check every transcript against it.
package searchcmd
