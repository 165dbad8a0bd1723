// Command fakeagent is the agent CLI that internal/testing/e2e's tests
// wrap with `twasm record -- CMD`: it replays a provider stream (a
// capture, FAKE_INPUT) on stdout line by line as an agent would write
// it, and on request pauses, waits for a gate file, hangs, traps or
// counts SIGINT, writes to stderr, exits with a given code, leaves an
// orphan holding its output or only holds a transcript's file lock (the
// FAKE_* settings in its environment, listed in main.go).
//
// It is a program of its own, built by the e2e tests without the race
// detector, so that each of the few hundred agents they start costs
// what a small program's start does and not a race-instrumented test
// binary's (about 0.13 s of CPU each).
package main
