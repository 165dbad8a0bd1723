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
// at the same time, no wait bounding a hang of a blocking open) belongs
// beside its command instead, over internal/testing/clitest, as the
// moved sync, import, search, usage, renormalize, run, view, ls, export,
// record, validate, plugins and golden ones are; the helpers here that
// run no process call clitest's. What stays: signals and exit codes of
// the binary (record, sync --watch, the sandbox's, the killed archives),
// a wrapped agent's stdin and stdout (fakeagent), terminals, fsync order,
// a second process at the same time (sync --wait, run end while
// recording, tail -f, serve), cold compilation caches, FIFOs and
// non-regular configs whose regression would hang, a small tmpfs filled
// up, the collector the OTLP exports go to, the README's commands, the
// captures harness (and the check of reassembled lines built on it), the
// plugin template's make golden, the built binary's version stamp and a
// shell pipeline of the binary (tools --help's jq example).
package e2e
