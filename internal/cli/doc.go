// Package cli is the twasm command line: the root command, its persistent
// flags, the mapping of errors to exit codes, and the registration of every
// subcommand (commands.go). Each subcommand lives in its own package under
// internal/cli/<name>, GitHub-CLI style, and shares internal/views with the
// rest of twasm.
package cli
