package codex

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// collab follows the sub-agents a completed collab_tool_call names
// (spec §6.10). `codex exec --json` streams only the parent thread: a
// sub-agent runs in a thread of its own (receiver_thread_ids) whose
// messages and tool calls are not in this stream. So its child run holds
// what the stream states about it: the prompt the parent gave it (the
// spawn_agent item's prompt), the final message a later call reports
// (agents_states[thread].message, as wait returns it) and its outcome.
// A spawn opens the scope, linked to the spawn_agent call; the first
// terminal state any call reports (wait, close_agent) closes it.
func (n *normalizer) collab(out *sdk.Out, call sdk.Str, item abi.Value) {
	if sdk.Name(item.Get("tool")) == "spawn_agent" {
		it := item.Get("receiver_thread_ids").Iter()
		for it.Next() {
			if id := it.Value(); id.Kind() == abi.KindString && !id.Is("") {
				n.openAgent(out, id, call, sdk.S("spawn_agent"), item.Get("prompt"))
			}
		}
	}
	st := item.Get("agents_states").Iter()
	for st.Next() {
		id, state := st.Key(), st.Value()
		status, errText := agentStatus(state)
		var msg abi.Value
		if status == sdk.StatusOK {
			msg = state.Get("message")
		}
		n.agentOutcome(out, id, call, status, errText, msg)
	}
}

// agentOutcome closes the scope of sub-agent thread id with the outcome
// a call reported: its final message (message, a string), then its
// status (an error reported as the provider's, in the scope). Nothing
// while status is "" (pending_init, running: not over yet), nor for a
// scope closed already. A thread first seen here (spawned before this
// stream began: a resumed thread) opens its scope here, linked to call,
// with no name: what spawned it is not known.
func (n *normalizer) agentOutcome(out *sdk.Out, id abi.Value, call sdk.Str, status string, errText sdk.Str, message abi.Value) {
	if status == "" || id.Kind() != abi.KindString || id.Is("") {
		return
	}
	i, known := n.agents[sdk.View(id)]
	if !known {
		i = n.openAgent(out, id, call, sdk.Str{}, abi.Value{})
	}
	if !n.agentList[i].open {
		return
	}
	scope := sdk.Text(id)
	if message.Kind() == abi.KindString && !message.Is("") {
		key := n.newKey()
		out.Open(key, sdk.Message{ID: key, Scope: scope})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(message)})
		out.Close(key, sdk.MessageEnd{})
	}
	if status == sdk.StatusError {
		out.Error(sdk.ProviderError{Message: errText, Scope: scope})
	}
	n.agentList[i].open = false
	out.ScopeClose(scope, status, errText)
}

// subAgent is a sub-agent's scope: its thread id, and whether the scope
// is still open.
type subAgent struct {
	id   string
	open bool
}

// openAgent opens the scope of sub-agent thread id, started by call and
// named name, and writes the prompt the parent gave it as its first message.user. It
// returns the sub-agent's index in agentList.
func (n *normalizer) openAgent(out *sdk.Out, id abi.Value, call, name sdk.Str, prompt abi.Value) int {
	if i, known := n.agents[sdk.View(id)]; known {
		return i
	}
	if n.agents == nil {
		n.agents = map[string]int{}
	}
	k := strings.Clone(sdk.View(id))
	i := len(n.agentList)
	n.agents[k] = i
	n.agentList = append(n.agentList, subAgent{id: k, open: true})
	scope := sdk.Text(id)
	out.ScopeOpen(scope, call, name, sdk.Str{})
	if prompt.Kind() != abi.KindString || prompt.Is("") {
		return i
	}
	key := n.newKey()
	out.Open(key, sdk.Message{ID: key, User: true, Scope: scope})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(prompt), Origin: sdk.OriginPrompt})
	out.Close(key, sdk.MessageEnd{})
	return i
}

// agentStatus maps a sub-agent's state (agents_states) to its run's
// status and error: "" while it has not finished.
func agentStatus(state abi.Value) (string, sdk.Str) {
	msg := state.Get("message")
	switch sdk.Name(state.Get("status")) {
	case "completed":
		return sdk.StatusOK, sdk.Str{}
	case "errored":
		return sdk.StatusError, strOr(errorText(msg), "sub-agent failed")
	case "not_found":
		return sdk.StatusError, sdk.S("sub-agent not found")
	case "shutdown", "interrupted":
		return toolCancelled, sdk.S("sub-agent " + sdk.Name(state.Get("status")))
	}
	return "", sdk.Str{}
}

// closeAgents closes, when a turn ends, the scopes of the sub-agents
// whose outcome the stream never reported: incomplete, never ok.
func (n *normalizer) closeAgents(out *sdk.Out) {
	for i := range n.agentList {
		if a := &n.agentList[i]; a.open {
			a.open = false
			out.ScopeClose(sdk.S(a.id), sdk.StatusIncomplete, sdk.S("the stream ended before the sub-agent's outcome was reported"))
		}
	}
}

// The legacy event stream ({"id","msg"}, the app server's codex/event)
// reports the multi-agent tools by their protocol events
// (protocol/src/protocol.rs): a begin event when the call starts and an
// end event with its outcome, and no other record of the call. A begin
// (or, without one, the end) is the tool call, named as the model calls
// the tool (spawn_agent, send_input, wait, close_agent, resume_agent),
// its input what the event states of the call; the end is its result.
// A spawned sub-agent's thread (new_thread_id) is a scope linked to the
// spawn call, as exec-json's (collab): its prompt, what send_input sent
// it, and the outcome a wait or a close reports (a final message, an
// error) are the child run's; the sub-agent's own work is in its own
// thread, not in this stream.

// collabTool is the tool a multi-agent begin or end event is of.
func collabTool(typ string) string {
	switch strings.TrimSuffix(strings.TrimSuffix(typ, "_begin"), "_end") {
	case "collab_agent_spawn":
		return "spawn_agent"
	case "collab_agent_interaction":
		return "send_input"
	case "collab_waiting":
		return "wait"
	case "collab_close":
		return "close_agent"
	case "collab_resume":
		return "resume_agent"
	}
	return "collab"
}

// collabBegin reports a multi-agent tool's call from its begin event.
func (n *normalizer) collabBegin(out *sdk.Out, msg abi.Value) {
	if !n.firstLegacy(msg.Get("call_id")) {
		out.Ignored(sdk.Text(msg.Get("type")))
		return
	}
	n.toolMessage(out, sdk.Text(msg.Get("call_id")), sdk.S(collabTool(sdk.Name(msg.Get("type")))), "other", collabInput(msg))
}

// collabInput is what a begin or end event states of the call: the
// message sent (prompt), the receiver(s), the model asked for.
func collabInput(msg abi.Value) sdk.Str {
	return object(member{"prompt", msg.Get("prompt")}, member{"receiver_thread_id", msg.Get("receiver_thread_id")},
		member{"receiver_thread_ids", msg.Get("receiver_thread_ids")}, member{"model", msg.Get("model")})
}

// collabEnd reports a multi-agent tool's result from its end event (its
// call first, when no begin event came), and what it says of the
// sub-agents: a spawn opens the new thread's scope, linked to the call;
// send_input's message is the receiver's input; a wait's statuses and a
// close's status close the scopes of the sub-agents that finished.
func (n *normalizer) collabEnd(out *sdk.Out, msg abi.Value) {
	typ := sdk.Name(msg.Get("type"))
	callID := sdk.Text(msg.Get("call_id"))
	if n.firstLegacy(msg.Get("call_id")) {
		n.toolMessage(out, callID, sdk.S(collabTool(typ)), "other", collabInput(msg))
	}
	r := sdk.ToolResult{CallID: callID, Status: sdk.S(toolOK)}
	switch typ {
	case "collab_agent_spawn_end":
		r.Output = object(member{"new_thread_id", msg.Get("new_thread_id")}, member{"new_agent_nickname", msg.Get("new_agent_nickname")},
			member{"new_agent_role", msg.Get("new_agent_role")}, member{"status", msg.Get("status")})
		id := msg.Get("new_thread_id")
		if id.Kind() != abi.KindString || id.Is("") {
			r.Status, r.Error = sdk.S(toolError), sdk.S("no sub-agent was spawned")
			out.ToolResult(r)
			return
		}
		out.ToolResult(r)
		n.openAgent(out, id, callID, sdk.S("spawn_agent"), msg.Get("prompt"))
		n.protoAgentState(out, id, msg.Get("status"))
	case "collab_waiting_end":
		r.Output = sdk.JSON(msg.Get("statuses"))
		out.ToolResult(r)
		it := msg.Get("statuses").Iter()
		for it.Next() {
			n.protoAgentState(out, it.Key(), it.Value())
		}
	default: // send_input, close_agent, resume_agent
		recv := msg.Get("receiver_thread_id")
		st := msg.Get("status")
		r.Output = object(member{"receiver_thread_id", recv}, member{"status", st})
		if collabStatus(st) == "not_found" {
			r.Status, r.Error = sdk.S(toolError), sdk.S("sub-agent "+sdk.StringOf(recv).String()+" not found")
			out.ToolResult(r)
			return
		}
		out.ToolResult(r)
		if i, known := n.agents[sdk.View(recv)]; known && n.agentList[i].open && typ == "collab_agent_interaction_end" {
			if p := msg.Get("prompt"); p.Kind() == abi.KindString && !p.Is("") {
				key := n.newKey()
				out.Open(key, sdk.Message{ID: key, User: true, Scope: sdk.Text(recv)})
				out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(p), Origin: sdk.OriginPrompt})
				out.Close(key, sdk.MessageEnd{})
			}
		}
		if typ == "collab_close_end" {
			// Closed: what it had finished with, else stopped.
			n.protoAgentState(out, recv, st)
			n.closeAgent(out, recv, toolCancelled, sdk.S("sub-agent closed"))
		}
	}
}

// protoStatus maps a sub-agent's status as the protocol serializes it
// (AgentStatus: "pending_init", "running", "shutdown", "not_found",
// "interrupted", {"completed": message|null}, {"errored": message}) to
// its run's status, error and final message: "" while it has not
// finished.
func protoStatus(v abi.Value) (status string, errText sdk.Str, message abi.Value) {
	switch collabStatus(v) {
	case "completed":
		return sdk.StatusOK, sdk.Str{}, v.Get("completed")
	case "errored":
		return sdk.StatusError, strOr(errorText(v.Get("errored")), "sub-agent failed"), abi.Value{}
	case "not_found":
		return sdk.StatusError, sdk.S("sub-agent not found"), abi.Value{}
	case "shutdown", "interrupted":
		return toolCancelled, sdk.S("sub-agent " + collabStatus(v)), abi.Value{}
	}
	return "", sdk.Str{}, abi.Value{}
}

// protoAgentState closes the scope of sub-agent thread id when status v
// says it finished (agentOutcome). A thread not spawned in this stream
// opens its scope here, unlinked and unnamed: the event names no call
// that started it.
func (n *normalizer) protoAgentState(out *sdk.Out, id, v abi.Value) {
	status, errText, message := protoStatus(v)
	n.agentOutcome(out, id, sdk.Str{}, status, errText, message)
}

// closeAgent closes sub-agent thread id's scope, if still open, with
// status and err.
func (n *normalizer) closeAgent(out *sdk.Out, id abi.Value, status string, err sdk.Str) {
	if i, known := n.agents[sdk.View(id)]; known && n.agentList[i].open {
		n.agentList[i].open = false
		out.ScopeClose(sdk.Text(id), status, err)
	}
}
