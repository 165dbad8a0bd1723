// Package viewstest builds transcript files for the tests of the views
// and of the read commands: a parent run with an agent step, tool pairs,
// a dangling call, an unknown event type and a malformed line, linked to a
// child run through a call_workflow step; and the storage of generated
// Claude Code sessions the archive benchmarks share (ClaudeSessions,
// TWASM_BENCH_SESSIONS of them).
package viewstest
