package qwen

import (
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

// startAgent opens the scope of the sub-agent call id runs, once, with
// the parent's prompt as its first message.
func (n *normalizer) startAgent(id, args abi.Value, r record, out *sdk.Out) {
	if _, seen := n.agents[sdk.View(id)]; seen {
		return
	}
	if n.agents == nil {
		n.agents = map[string]bool{}
	}
	n.agents[id.String()] = true
	n.agentIDs = append(n.agentIDs, id.String())
	scope := sdk.Text(id)
	name := sdk.StringOf(args.Get("subagent_type"))
	if name.IsEmpty() {
		name = sdk.S("agent")
	}
	out.ScopeOpen(scope, scope, name, sdk.StringOf(args.Get("description")))
	if p := sdk.StringOf(args.Get("prompt")); !p.IsEmpty() {
		key := sdk.S("agent-" + id.String())
		out.Open(key, sdk.Message{User: true, Scope: scope, Time: r.ts})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: p, Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
	}
}

// endAgent closes the scope of the sub-agent call res answers: its
// result is the child's answer, its status the display's (the call's
// when the call itself failed).
func (n *normalizer) endAgent(res sdk.ToolResult, d abi.Value, out *sdk.Out) {
	id := res.CallID.String()
	n.agents[id] = false
	answer := sdk.StringOf(d.Get("result"))
	if answer.IsEmpty() && !res.IsError {
		answer = res.Output
	}
	if !answer.IsEmpty() {
		key := sdk.S("agent-" + id + "-result")
		out.Open(key, sdk.Message{Scope: res.CallID, Time: res.Time})
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
	out.ScopeClose(res.CallID, status, errText)
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.legacy != nil {
		return n.legacy.End(out)
	}
	for _, id := range n.agentIDs {
		if n.agents[id] {
			n.agents[id] = false
			out.ScopeClose(sdk.S(id), sdk.StatusIncomplete, sdk.S("the input ended before the sub-agent's result was recorded"))
		}
	}
	return nil
}
