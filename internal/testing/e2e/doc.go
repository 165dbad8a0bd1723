// Package e2e holds the end-to-end tests of the twasm command line: they
// build the binary (with every plugin of the repository bundled) and drive
// it as a subprocess, with a fake agent that replays real-shaped provider
// streams (fakeagent, a program of its own that the tests build without
// the race detector). TestCaptures is the captures harness: every real
// capture of testdata/captures (with its expectations) and of
// ../shared/fixtures is recorded and imported through the wasm plugins
// and checked (testdata/captures/README.md). The package has no code
// outside its tests and fakeagent. A check that needs no process of
// twasm's own (no signal, terminal, fsync order, sandbox or second process
// at the same time) belongs beside its command instead, over
// internal/testing/clitest, as the moved sync, search, usage, renormalize,
// run, view and ls ones are; the
// helpers here that run no process call clitest's.
package e2e
