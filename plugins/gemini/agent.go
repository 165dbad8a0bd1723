package gemini

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Sub-agents (spec §6.10). The Gemini CLI runs a sub-agent
// (codebase_investigator, ...) as one tool call of the parent:
// delegate_to_agent {agent_name, <the agent's inputs>}, invoke_agent
// {agent_name, prompt} (0.39 and later), or a tool named after the
// agent. Its own turns are in neither the stream nor the session file
// (0.37 and later write them to a chat of their own, which the host
// archives as the child run when the call's record names it by its
// agentId: such a call opens no scope); the call states what the parent
// gave it and what it returned:
// "Subagent '<name>' finished.\nTermination Reason: GOAL\nResult:\n..."
// (the display string says the same over more lines). So the call opens a
// scope, whose child run holds the input as its message.user, the result
// as its answer, and the termination reason as its status.

// agentName is the sub-agent a call runs, unset for any other call:
// delegate_to_agent's or invoke_agent's agent_name (builds of early
// 2026; 0.39 and later), a built-in agent's tool
// (codebase_investigator, generalist), or any tool whose result (known
// at the call in a session file) is a sub-agent's report.
func agentName(name, args, output abi.Value) sdk.Str {
	switch sdk.Name(name) {
	case "delegate_to_agent", "invoke_agent":
		if a := sdk.StringOf(args.Get("agent_name")); !a.IsEmpty() {
			return a
		}
		return sdk.Text(name)
	case "codebase_investigator", "generalist":
		return sdk.Text(name)
	}
	if output.Kind() == abi.KindString && agentReport(output.Raw()) {
		return sdk.Text(name)
	}
	return sdk.Str{}
}

// agentReport reports whether a tool's output (its raw JSON string) is a
// sub-agent's report: "... finished.\nTermination Reason: <REASON>".
func agentReport(raw []byte) bool {
	i := bytes.Index(raw, []byte("Termination Reason:"))
	return i > 0 && bytes.Contains(raw[:i], []byte("finished"))
}

// agentPrompt is what the parent asked of the sub-agent: its objective,
// else the first other text input, else its inputs as JSON.
func agentPrompt(args abi.Value) sdk.Str {
	if o := sdk.StringOf(args.Get("objective")); !o.IsEmpty() {
		return o
	}
	it := args.Iter()
	for it.Next() {
		if k, v := it.Key(), it.Value(); !k.Is("agent_name") && v.Kind() == abi.KindString && !v.Is("") {
			return sdk.Text(v)
		}
	}
	if args.Kind() == abi.KindObject && args.Len() > 0 {
		return sdk.JSON(args)
	}
	return sdk.Str{}
}

// startAgent opens the scope of the sub-agent call id runs, if it runs
// one, once per call, with the parent's prompt as its first message.
// output is the call's result when it is known at the call (session
// files); rec is the key of the record holding the call in a session
// file (resultKey), nil for a stream's tool_use. A call is the one an
// earlier call of its id started when its record is that call's (a
// record appended again, a document read again) or, with no record
// (stream), when that scope is still open (a call repeated before its
// result); else it is a call that reuses the id, whose sub-agent has a
// scope of its own: id#2, id#3, ... (agentScope).
func (n *normalizer) startAgent(id, name, args, output abi.Value, rec []byte, ts sdk.Str, out *sdk.Out) {
	agent := agentName(name, args, output)
	if agent.IsEmpty() {
		return
	}
	if rec != nil {
		if n.agentOf(rec) >= 0 {
			return // a JSONL session record written again
		}
	} else if i := n.agent(sdk.View(id)); i >= 0 && n.agents[i].open {
		return // the call repeated before its result
	}
	idS := id.String()
	scope := n.agentScope(idS)
	if n.scopes == nil {
		n.scopes = map[string]int{}
	}
	n.scopes[idS]++
	n.agents = append(n.agents, subAgent{id: idS, rec: string(rec), scope: scope, k: n.scopes[idS], open: true})
	out.ScopeOpen(sdk.S(scope), sdk.Text(id), agent, sdk.Str{})
	if p := agentPrompt(args); !p.IsEmpty() {
		key := sdk.S(n.newKey("a"))
		out.Open(key, sdk.Message{ID: key, User: true, Scope: sdk.S(scope), Time: ts})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: p, Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
	}
}

// endAgent closes the scope of the sub-agent call r answers, if one is
// open: the result it returned becomes its answer, and its status is the
// call's when the call failed, else its termination reason's. rec is the
// key of the record holding the call (session files), nil for a
// stream's result, which answers the latest call of its id.
func (n *normalizer) endAgent(r sdk.ToolResult, rec []byte, out *sdk.Out) {
	i := n.agentOf(rec)
	if rec == nil {
		i = n.agent(r.CallID.String())
	}
	if i < 0 || !n.agents[i].open {
		return
	}
	scope := sdk.S(n.agents[i].scope)
	if n.agents[i].rec == "" {
		// A stream's scope, closed, is never written to again (a later
		// call of the id opens a scope of its own): forgotten, so that
		// a stream whose calls reuse an id keeps bounded state. A session
		// record's stays, closed: the record may be read again.
		n.agents = append(n.agents[:i], n.agents[i+1:]...)
	} else {
		n.agents[i].open = false
	}
	reason, result := agentOutcome(r.Output.String())
	if result != "" {
		key := sdk.S(n.newKey("a"))
		out.Open(key, sdk.Message{ID: key, Scope: scope, Time: r.Time})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.S(result)})
		out.Close(key, sdk.MessageEnd{})
	}
	status, errText := sdk.StatusOK, sdk.Str{}
	switch {
	case r.IsError:
		status, errText = r.Status.String(), r.Error
		if status == toolDenied {
			status = toolCancelled // refused before it ran
		}
	case reason == "" || reason == "GOAL":
	case reason == "ABORTED" || reason == "TIMEOUT" || reason == "CANCELLED":
		status, errText = toolCancelled, sdk.S("sub-agent terminated: "+reason)
	default: // ERROR, MAX_TURNS, ERROR_NO_COMPLETE_TASK_CALL
		status, errText = sdk.StatusError, sdk.S("sub-agent terminated: "+reason)
	}
	out.ScopeClose(scope, status, errText)
}

// agentOutcome reads a sub-agent call's output: the termination reason
// after "Termination Reason:" and the result after the "Result:" line
// that follows it; both "" when the output states none.
func agentOutcome(s string) (reason, result string) {
	const reasonTag, resultTag = "Termination Reason:", "Result:"
	i := strings.Index(s, reasonTag)
	if i < 0 {
		return "", ""
	}
	s = strings.TrimLeft(s[i+len(reasonTag):], " \t\r\n")
	j := 0
	for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] == '_') {
		j++
	}
	// The reason is ASCII letters: upper-cased here, as strings.ToUpper
	// would, without linking Unicode's case tables (7 KB of the module).
	up := []byte(s[:j])
	for k, c := range up {
		if c >= 'a' && c <= 'z' {
			up[k] = c - 'a' + 'A'
		}
	}
	reason, s = string(up), s[j:]
	if k := strings.Index(s, resultTag); k >= 0 {
		result = strings.TrimSpace(s[k+len(resultTag):])
	}
	return reason, result
}

// endAgents closes, at the end of the input, the scopes of the sub-agents
// whose call never got a result: incomplete, never ok.
func (n *normalizer) endAgents(out *sdk.Out) {
	for i := range n.agents {
		if a := &n.agents[i]; a.open {
			a.open = false
			out.ScopeClose(sdk.S(a.scope), sdk.StatusIncomplete, sdk.S("the input ended before the sub-agent's result was reported"))
		}
	}
}

// subAgent is a sub-agent's scope: the id of the call that runs it, the
// key of the session record holding the call ("" in a stream), the
// scope's name, which of the id's scopes it is (1, 2, ...: scopes), and
// whether the scope is still open.
type subAgent struct {
	id, rec, scope string
	k              int
	open           bool
}

// agent is the index in agents of the sub-agent the latest call of id
// runs, -1 when none or its scope has closed (k: a stream's closed
// scopes are dropped; a session has few: a linear search).
func (n *normalizer) agent(id string) int {
	for i := len(n.agents) - 1; i >= 0; i-- {
		if n.agents[i].id == id {
			if n.agents[i].k != n.scopes[id] {
				return -1
			}
			return i
		}
	}
	return -1
}

// agentOf is the index in agents of the sub-agent the call of session
// record key rec runs, -1 when none (or rec is nil).
func (n *normalizer) agentOf(rec []byte) int {
	if rec == nil {
		return -1
	}
	for i := range n.agents {
		if n.agents[i].rec == string(rec) {
			return i
		}
	}
	return -1
}

// agentScope names the scope of a new sub-agent of a call of id: id for
// the first, id#2, id#3, ... for the calls that reuse it (scopes counts
// the scopes opened per id).
func (n *normalizer) agentScope(id string) string {
	k := n.scopes[id] + 1
	if k == 1 {
		return id
	}
	return id + "#" + strconv.Itoa(k)
}
