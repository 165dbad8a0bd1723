// Package cmdutil holds what every twasm command shares: the Factory of
// dependencies, the typed errors that decide the exit code, run argument
// resolution, output helpers, and the selection flags of the commands
// that pick runs by when and where (Window: --since, --until and
// --project, as ls, stats, search and usage read them).
package cmdutil
