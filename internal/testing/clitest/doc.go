// Package clitest runs the whole twasm command line in the test's own
// process (cli.Main over in-memory streams, with the real bundled plugins
// through wazero and real files), for the end-to-end checks of a command
// that need no process of their own: no signal, no terminal, no fsync
// order, no sandbox, no second process at the same time. Those stay in
// internal/testing/e2e, which builds the binary.
//
// It imports internal/cli, which imports every command: a command's tests
// use it from their external test package (package <cmd>_test).
//
// Its helpers that run no process (a home of agents' stores, an agent's
// SQLite database, a Claude Code session log made to size, what a
// storage root archived, a run's events, record's --json summary, a
// test plugin built to a file, a run's raw capture damaged) are e2e's too, which calls them instead
// of copies. Root is found from the test's directory (its nearest
// go.mod), so a test that changes directory takes an absolute path of
// it first.
package clitest
