// Package cmdutil holds what every twasm command shares: the Factory of
// dependencies, the typed errors that decide the exit code, run argument
// resolution and output helpers.
package cmdutil
