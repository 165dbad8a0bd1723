// Command twasm records and reads AI coding-agent transcripts. Everything
// lives in internal/cli; main only hands over the process's streams.
package main
