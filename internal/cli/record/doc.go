// Package record implements `twasm record`: normalize an agent's output
// into a transcript, wrapping the agent CLI as a child process or reading a
// saved output.
package record
