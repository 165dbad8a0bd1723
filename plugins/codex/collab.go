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
		if status == "" || id.Is("") {
			continue // pending_init, running: not over yet
		}
		i, known := n.agents[sdk.View(id)]
		if !known {
			// Spawned before this stream began (a resumed thread): its
			// child run starts with what this call reports, linked to
			// this call, with no name: what spawned it is not known.
			i = n.openAgent(out, id, call, sdk.Str{}, abi.Value{})
		}
		if !n.agentList[i].open {
			continue // closed already
		}
		scope := sdk.Text(id)
		if msg := state.Get("message"); msg.Kind() == abi.KindString && !msg.Is("") && status == sdk.StatusOK {
			key := n.newKey()
			out.Open(key, sdk.Message{ID: key, Scope: scope})
			out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(msg)})
			out.Close(key, sdk.MessageEnd{})
		}
		if status == sdk.StatusError {
			out.Error(sdk.ProviderError{Message: errText, Scope: scope})
		}
		n.agentList[i].open = false
		out.ScopeClose(scope, status, errText)
	}
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
