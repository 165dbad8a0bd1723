// Package clitest runs the whole twasm command line in the test's own
// process (cli.Main over in-memory streams, with the real bundled plugins
// through wazero and real files), for the end-to-end checks of a command
// that need no process of their own: no signal, no terminal, no fsync
// order, no sandbox, no second process at the same time. Those stay in
// internal/testing/e2e, which builds the binary.
//
// It imports internal/cli, which imports every command: a command's tests
// use it from their external test package (package <cmd>_test).
package clitest
