//go:build !wasip1

package copilot_test

import (
	"fmt"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestCallIDScopes checks session logs whose model server names every
// call call_1 and whose task call runs a sub-agent: the sub-agent's own
// call_1 is a call of its scope, answered there, while the task call
// waits in the main agent's scope for its own completion; a main call
// pending beside the task keeps its completion too. The sub-agent is
// named by its own agentId (1.0.9x) or by the task call's id (1.0.7x). A
// completion whose agent made no call of its id answers the call of
// another agent that waits for it, as before. A task call that reuses the
// id of one whose sub-agent ran starts a scope of its own (call_1#2) when
// the sub-agent is named by the call's id.
func TestCallIDScopes(t *testing.T) {
	n := 0
	ev := func(typ, agent, data string) string {
		n++
		a := ""
		if agent != "" {
			a = `,"agentId":"` + agent + `"`
		}
		return fmt.Sprintf(`{"type":%q,"data":%s,"id":"e0000028-0000-4000-8000-%012d","timestamp":"2026-08-06T09:00:%02d.000Z","parentId":null%s}`, typ, data, n, n%60, a)
	}
	msg := func(agent, id, content, calls string) string {
		return ev("assistant.message", agent, `{"messageId":"`+id+`","model":"m","content":"`+content+`","toolRequests":[`+calls+`]}`)
	}
	req := func(id, name, args string) string {
		return `{"toolCallId":"` + id + `","name":"` + name + `","arguments":` + args + `,"type":"function"}`
	}
	done := func(agent, id, output string) string {
		return ev("tool.execution_complete", agent, `{"toolCallId":"`+id+`","success":true,"result":{"content":"`+output+`"}}`)
	}
	const task = `{"description":"Read go.mod","prompt":"Read go.mod.","agent_type":"explore"}`
	run := func(agent, taskID, viewID string, beside bool) []string {
		calls := req(taskID, "task", task)
		if beside {
			calls = req("call_1", "bash", `{"command":"ls"}`) + "," + calls
		}
		lines := []string{
			ev("session.start", "", `{"sessionId":"s1","copilotVersion":"1.0.90"}`),
			ev("user.message", "", `{"content":"Go."}`),
			msg("", "m-1", "Delegating.", calls),
			ev("subagent.started", agent, `{"toolCallId":"`+taskID+`","agentName":"explore"}`),
			ev("user.message", agent, `{"content":"Read go.mod."}`),
			msg(agent, "m-s1", "", req(viewID, "view", `{"path":"go.mod"}`)),
			done(agent, viewID, "module m"),
			msg(agent, "m-s2", "module m", ""),
			ev("subagent.completed", agent, `{"toolCallId":"`+taskID+`","agentName":"explore"}`),
		}
		if beside {
			lines = append(lines, done("", "call_1", "main.go"))
		}
		return append(lines, done("", taskID, "module m"), msg("", "m-2", "The module is m.", ""))
	}
	// trace is the trace of run(agent, "call_1", view, false): the
	// sub-agent scope, its view call, the task's result.
	trace := func(scope, view string) []string {
		return []string{
			"main: call task call_1",
			"open " + scope + " by call_1",
			scope + ": call view " + view,
			scope + ": result view " + view + ": module m",
			"close " + scope + " ok",
			"main: result task call_1: module m",
		}
	}
	// beside is the trace of run("explore-1", "call_2", "call_1", true):
	// the main agent's call_1 runs beside the task call_2 whose
	// sub-agent makes a call_1 of its own.
	beside := []string{
		"main: call bash call_1",
		"main: call task call_2",
		"open explore-1 by call_2",
		"explore-1: call view call_1",
		"explore-1: result view call_1: module m",
		"close explore-1 ok",
		"main: result bash call_1: main.go",
		"main: result task call_2: module m",
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"the sub-agent's call reuses the task's id", run("explore-1", "call_1", "call_1", false), trace("explore-1", "call_1")},
		{"1.0.7x: the sub-agent named by the task's id", run("call_1", "call_1", "call_1", false), trace("call_1", "call_1")},
		{"a main call pending beside the task", run("explore-1", "call_2", "call_1", true), beside},
		{"a completion without agentId answers the sub-agent's call", func() []string {
			l := run("explore-1", "call_1", "call_9", false)
			l[6] = done("", "call_9", "module m")
			return l
		}(), trace("explore-1", "call_9")},
		{"a sub-agent's completion before its call is not a waiting main call's", func() []string {
			l := run("explore-1", "call_2", "call_1", true)
			l[5], l[6] = l[6], l[5]
			return l
		}(), beside},
		{"a sub-agent's completion held for its call is not the main agent's call's", func() []string {
			l := run("explore-1", "call_2", "call_1", false)
			// The sub-agent's completion comes first, then a call of
			// the main agent's reusing the id, then the sub-agent's call.
			l[5], l[6] = l[6], msg("", "m-x", "", req("call_1", "bash", `{"command":"ls"}`))
			l = append(l[:7], append([]string{msg("explore-1", "m-s1", "", req("call_1", "view", `{"path":"go.mod"}`))}, l[7:]...)...)
			return append(l[:len(l)-2], done("", "call_1", "main.go"), l[len(l)-2], l[len(l)-1])
		}(), []string{
			"main: call task call_2",
			"open explore-1 by call_2",
			"main: call bash call_1",
			"explore-1: call view call_1",
			"explore-1: result view call_1: module m",
			"close explore-1 ok",
			"main: result bash call_1: main.go",
			"main: result task call_2: module m",
		}},
		{"a sub-agent's completion whose call never came stays in its scope", func() []string {
			l := run("explore-1", "call_2", "call_1", false)
			return append(l[:5], l[6:]...) // no view call
		}(), []string{
			"main: call task call_2",
			"open explore-1 by call_2",
			"explore-1: call unknown call_1",
			"explore-1: result unknown call_1: module m",
			"close explore-1 ok",
			"main: result task call_2: module m",
		}},
		{"a completion without agentId held for the sub-agent's call", func() []string {
			l := run("explore-1", "call_1", "call_9", false)
			l[5], l[6] = done("", "call_9", "module m"), l[5]
			return l
		}(), trace("explore-1", "call_9")},
		{"1.0.7x: a task reusing the id of one whose sub-agent ran", func() []string {
			first := run("call_1", "call_1", "call_1", false)
			first = first[:len(first)-1] // the answer
			return append(first,
				msg("", "m-3", "Again.", req("call_1", "task", task)),
				ev("subagent.started", "call_1", `{"toolCallId":"call_1","agentName":"explore"}`),
				msg("call_1", "m-s3", "", req("call_1", "view", `{"path":"go.sum"}`)),
				done("call_1", "call_1", "no go.sum"),
				ev("subagent.completed", "call_1", `{"toolCallId":"call_1","agentName":"explore"}`),
				done("", "call_1", "none"))
		}(), []string{
			"main: call task call_1",
			"open call_1 by call_1",
			"call_1: call view call_1",
			"call_1: result view call_1: module m",
			"close call_1 ok",
			"main: result task call_1: module m",
			"main: call task call_1",
			"open call_1#2 by call_1",
			"call_1#2: call view call_1",
			"call_1#2: result view call_1: no go.sum",
			"close call_1#2 ok",
			"main: result task call_1: none",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, copilot.Plugin, "copilot", tt.lines, tt.want)
		})
	}
}
