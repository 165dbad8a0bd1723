// Command twasm records and reads AI coding-agent transcripts. Everything
// lives in internal/cli; main only hands over the process's streams.
//
// Build it with make (`make bin/twasm` from the repository root), which
// builds the bundled plugins first and embeds them. A binary built with
// plain `go build ./cmd/twasm` has none: every command that needs a plugin
// (record, import, renormalize, sync, golden check, plugins list) fails,
// exit status 1, saying so and naming make, and writes no run
// (TestBuiltWithoutMake builds one and checks it).
package main
