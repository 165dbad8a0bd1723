// Package agentproc runs an agent CLI as a child process for `twasm
// record -- CMD`: its stdout is handed over chunk by chunk as it arrives
// (so events reach the transcript while the agent runs), its stderr
// separately (it is kept, never parsed as provider output), and SIGINT and
// SIGTERM sent to twasm are forwarded to it, so that the agent can finish
// its own way and twasm can still write the end of the transcript.
//
// Stdin is connected to twasm's stdin only when asked: agent CLIs such as
// codex wait for stdin when it is not redirected.
package agentproc
