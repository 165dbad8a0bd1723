// Command workflow records a small, made-up code-review workflow with the
// lifecycle API: every step kind (agent, command, operation, terminal,
// parallel, for_each, while, call_workflow and a custom "webhook" kind), a
// retried step, a prompt with a system prompt, a routed tool call and a
// two-level sub-workflow (the child calls a grandchild). Nothing real is
// run: the steps only record what a workflow engine would.
//
//	go run ./examples/workflow [-storage DIR]
//
// The run id goes to stderr, the transcript paths (parent first) to
// stdout, one per line.
package main
