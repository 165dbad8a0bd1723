package qwen

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Sub-agents (spec §6.10). Qwen Code runs a sub-agent as one call of the
// parent's agent tool (named task before 0.x): {description, prompt,
// subagent_type}. Its own turns are not in the chat (the CLI empties
// the display's toolCalls before it records the result); the call
// states what the parent asked and the result what the agent answered:
// resultDisplay {type: "task_execution", subagentName, status
// (completed, failed, cancelled, background), terminateReason, result}.
// So the call opens a scope, whose child run holds the prompt as its
// message.user and the result as its answer, and the result closes it
// with its status.

// isAgent reports whether a tool runs a sub-agent.
func isAgent(name string) bool { return name == "agent" || name == "task" }

// subAgent is the scope of the sub-agent a call runs: the call's key
// (callKey), the scope's name and whether it is still open.
type subAgent struct {
	key, scope string
	open       bool
}

// agent is the index in agents of the latest sub-agent call of key, -1
// when none (a chat has few: a linear search).
func (n *normalizer) agent(key string) int {
	for i := len(n.agents) - 1; i >= 0; i-- {
		if n.agents[i].key == key {
			return i
		}
	}
	return -1
}

// startAgent opens the scope of the sub-agent call id (of key, callKey)
// runs, once per call (a call repeated while its scope is open is that
// call), with the parent's prompt as its first message. The scope is
// named by the call's id; a call that reuses the id of an earlier one
// (servers make ids unique per response, not per session), or whose id
// named another scope already, by the id and a number (call_1#2,
// call_1#3, ...).
func (n *normalizer) startAgent(key string, id, args abi.Value, r record, out *sdk.Out) {
	if i := n.agent(key); i >= 0 && n.agents[i].open {
		return
	}
	a := subAgent{key: strings.Clone(key), scope: id.String(), open: true}
	for k := 2; n.scopeTaken(a.scope); k++ {
		a.scope = id.String() + "#" + strconv.Itoa(k)
	}
	n.agents = append(n.agents, a)
	scope := sdk.S(a.scope)
	name := sdk.StringOf(args.Get("subagent_type"))
	if name.IsEmpty() {
		name = sdk.S("agent")
	}
	out.ScopeOpen(scope, sdk.Text(id), name, sdk.StringOf(args.Get("description")))
	if p := sdk.StringOf(args.Get("prompt")); !p.IsEmpty() {
		key := sdk.S("agent-" + a.scope)
		out.Open(key, sdk.Message{User: true, Scope: scope, Time: r.ts})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: p, Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
	}
}

// scopeTaken reports whether a sub-agent's scope is named s already.
func (n *normalizer) scopeTaken(s string) bool {
	for _, a := range n.agents {
		if a.scope == s {
			return true
		}
	}
	return false
}

// callKey is the key of call id made in scope (unset: the session's own)
// in calls and resulted: the id itself, else the scope and the id.
func callKey(scope sdk.Str, id string) string {
	if !scope.IsSet() || scope.IsEmpty() {
		return id
	}
	return scope.String() + "\x00" + id
}

// endAgent closes the scope of sub-agent a, whose call res answers: its
// result is the child's answer, its status the display's (the call's
// when the call itself failed).
func (n *normalizer) endAgent(a *subAgent, res sdk.ToolResult, d abi.Value, out *sdk.Out) {
	a.open = false
	scope := sdk.S(a.scope)
	answer := sdk.StringOf(d.Get("result"))
	if answer.IsEmpty() && !res.IsError {
		answer = res.Output
	}
	if !answer.IsEmpty() {
		key := sdk.S("agent-" + a.scope + "-result")
		out.Open(key, sdk.Message{Scope: scope, Time: res.Time})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: answer})
		out.Close(key, sdk.MessageEnd{})
	}
	status, errText := sdk.StatusOK, sdk.Str{}
	reason := sdk.StringOf(d.Get("terminateReason"))
	st := d.Get("status")
	switch {
	case res.IsError:
		status, errText = res.Status.String(), res.Error
		if status == toolDenied {
			status = toolCancelled // refused before it ran
		}
	case st.Is("failed"):
		status, errText = sdk.StatusError, sdk.S("sub-agent failed")
		if !reason.IsEmpty() {
			errText = sdk.S("sub-agent failed: " + reason.String())
		}
	case st.Is("cancelled"):
		status, errText = toolCancelled, sdk.S("sub-agent cancelled")
	case st.Is("background"), st.Is("running"):
		status, errText = sdk.StatusIncomplete, sdk.S("the sub-agent went on in the background; its result is not in this call's")
	}
	out.ScopeClose(scope, status, errText)
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.legacy != nil {
		return n.legacy.End(out)
	}
	if n.hl.on {
		n.headlessEnd(out)
		return nil
	}
	n.release(out)
	for i := range n.agents {
		if a := &n.agents[i]; a.open {
			a.open = false
			out.ScopeClose(sdk.S(a.scope), sdk.StatusIncomplete, sdk.S("the input ended before the sub-agent's result was recorded"))
		}
	}
	return nil
}
