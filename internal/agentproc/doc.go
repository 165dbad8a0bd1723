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
// group. After the child exits, the pipes are read to their end, but a
// read waits at most WaitDelay (default 2 s) for them: a process it
// started that holds a pipe open and silent does not keep twasm waiting
// (Result.OutputLeftOpen says it happened), while what the pipes hold is
// read however long the callbacks take to handle it (on a busy machine
// normalizing a chunk may take seconds: the agent's last lines are never
// dropped for that). The pipes are twasm's own, read by Run's goroutines;
// the callbacks run one at a time, and never after Run returns.
//
// Stdin is connected to twasm's stdin only when asked: agent CLIs such as
// codex wait for stdin when it is not redirected. A child in its own
// process group that reads the terminal is stopped by SIGTTIN, so agents
// are run non-interactively.
package agentproc
