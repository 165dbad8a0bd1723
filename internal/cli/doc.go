// Package cli is the twasm command line: the root command, its persistent
// flags, the mapping of errors to exit codes, and the registration of every
// subcommand (commands.go). Each subcommand lives in its own package under
// internal/cli/<name>, GitHub-CLI style, and shares internal/views with the
// rest of twasm.
//
// Conventions every command keeps (cmdutil holds the shared pieces):
//
//   - A RUN argument is resolved by cmdutil.Factory.ResolveRun: a path, a
//     run id or a unique start of one, or "latest" (the newest run.started of a
//     top-level run: a child run is reached through its parent or by id).
//     The storage root is --storage, $TWASM_STORAGE, $XDG_DATA_HOME/twasm or
//     ~/.local/share/twasm; a missing root is an error that says how to set
//     it.
//   - Data on stdout, diagnostics on stderr; exit codes in cmdutil/errors.go.
//   - record and import end with cmdutil.ReportStep: one stderr line with
//     what a user must know about the step, exit 1 when the plugin
//     understood no line.
//   - Two hidden persistent flags, for developers finding where a
//     command's time goes (profile.go): --cpuprofile FILE writes a CPU
//     profile (go tool pprof) and --exectrace FILE an execution trace (go
//     tool trace) of the command, from its flags parsed to its return
//     (process start-up and package initialisation are before it).
package cli
