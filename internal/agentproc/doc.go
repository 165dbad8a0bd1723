// Package agentproc runs an agent CLI as a child process for `twasm
// record -- CMD`: its stdout is handed over chunk by chunk as it arrives
// (so events reach the transcript while the agent runs), its stderr
// separately (it is kept, never parsed as provider output).
//
// The child runs in a process group of its own. SIGINT, SIGTERM and
// SIGHUP sent to twasm are forwarded to that group, once each: a Ctrl-C at
// the terminal signals twasm's group only, so the agent gets it once, from
// twasm, and can finish its own way while twasm keeps reading and can
// still write the end of the transcript. Cancelling the context kills the
// group. After the child exits, output is read for at most WaitDelay more
// (default 2 s): a process it started that still holds the pipes does not
// keep twasm waiting (Result.OutputLeftOpen says it happened). Chunks are
// handed over until Run returns, never after.
//
// Stdin is connected to twasm's stdin only when asked: agent CLIs such as
// codex wait for stdin when it is not redirected. A child in its own
// process group that reads the terminal is stopped by SIGTTIN, so agents
// are run non-interactively.
package agentproc
