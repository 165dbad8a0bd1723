package copilot

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// agent is a sub-agent: a scope of its own, written to a child run.
type agent struct {
	id string // the scope: the events' agentId
	// prompt is the prompt the parent gave it (the task call's prompt
	// argument), written as its first message.user when the sub-agent's
	// own user.message does not come first.
	prompt   string
	prompted bool // its message.user is written
	open     bool // opened and not closed yet
}

// taskCall is what a call that starts a sub-agent says about it.
type taskCall struct {
	name, description, prompt string
}

// lineScope returns the sub-agent the current line belongs to: the
// envelope's agentId (absent for the main agent), else the deprecated
// data.parentToolCallId of older builds; nil for the main agent. A
// sub-agent seen for the first time without its subagent.started is
// opened here, linked to the call its id names when that call is known.
func (n *normalizer) lineScope(v, d abi.Value, out *sdk.Out) *agent {
	id := v.Get("agentId")
	if id.Kind() != abi.KindString || id.Is("") {
		id = d.Get("parentToolCallId")
		if id.Kind() != abi.KindString || id.Is("") {
			return nil
		}
	}
	if a := n.agents[sdk.View(id)]; a != nil {
		return a
	}
	return n.openAgent(id.String(), "", "", out)
}

// openAgent opens the scope of sub-agent id, started by tool call parent
// ("" when unknown: then id itself when it names a call, as agentId does
// in the 1.0.7x builds). Its name is the agent's (else the call's
// agent_type), its description the call's.
func (n *normalizer) openAgent(id, parent, name string, out *sdk.Out) *agent {
	a := &agent{id: id, open: true}
	n.agents[id] = a
	n.agentList = append(n.agentList, a)
	if parent == "" && n.hasCall(id) {
		parent = id
	}
	t := n.tasks[parent]
	var desc string
	if t != nil {
		if name == "" {
			name = t.name
		}
		desc, a.prompt = t.description, t.prompt
		delete(n.tasks, parent)
	}
	out.ScopeOpen(sdk.S(id), sdk.Opt(parent), sdk.Opt(name), sdk.Opt(desc))
	return a
}

// hasCall reports whether a call of id was reported, by the main agent
// or a sub-agent (a sub-agent's scope is named by the call that started
// it in some builds).
func (n *normalizer) hasCall(id string) bool {
	if n.calls[id] {
		return true
	}
	for _, a := range n.agentList {
		if n.calls[callKey(a, id)] {
			return true
		}
	}
	return false
}

// scopeOf is the Str of a's scope: unset for the main agent.
func scopeOf(a *agent) sdk.Str {
	if a == nil {
		return sdk.Str{}
	}
	return sdk.S(a.id)
}

// subagentStarted handles subagent.started: the scope of the sub-agent
// opens, linked to the call that started it (toolCallId). Its id is the
// envelope's agentId (the events it writes carry it), else the call's
// id (older builds tie them by parentToolCallId, the same id).
func (n *normalizer) subagentStarted(v, d abi.Value, out *sdk.Out) {
	call := sdk.StringOf(d.Get("toolCallId")).String()
	id := v.Get("agentId")
	sid := call
	if id.Kind() == abi.KindString && !id.Is("") {
		sid = id.String()
	}
	if sid == "" {
		out.Unmapped(sdk.S("subagent.started"))
		return
	}
	name := sdk.StringOf(d.Get("agentName")).String()
	if a := n.agents[sid]; a != nil {
		if a.open {
			// Opened already by one of its events, or started again.
			out.Ignored(sdk.S("subagent.started"))
			return
		}
		// A sub-agent named as one that ended: in the builds whose
		// agentId is the call's id, a call that reused the id (ids
		// unique per response, not per session) started it. Its scope
		// is its own, sid#2 (#3, ...), and the events naming sid go to
		// it from now on.
		scope := sid
		for k := 2; n.agents[scope] != nil; k++ {
			scope = sid + "#" + strconv.Itoa(k)
		}
		n.agents[sid] = n.openAgent(scope, call, name, out)
		return
	}
	n.openAgent(sid, call, name, out)
}

// subagentEnd handles subagent.completed and subagent.failed: the scope
// closes with the sub-agent's outcome. A failure is also an error the
// provider reported, listed with the sub-agent's scope; a completion
// marked cancelled (torn down by an abort) is cancelled.
func (n *normalizer) subagentEnd(v, d abi.Value, failed bool, out *sdk.Out) {
	a := n.lineScope(v, d, out)
	if a == nil {
		// No agentId: the call's id names it.
		if id := d.Get("toolCallId"); id.Kind() == abi.KindString && !id.Is("") {
			if a = n.agents[sdk.View(id)]; a == nil {
				a = n.openAgent(id.String(), "", "", out)
			}
		}
	}
	status, e := sdk.StatusOK, sdk.Str{}
	if failed {
		ev := d.Get("error")
		if ev.Kind() == abi.KindObject {
			ev = ev.Get("message") // {message, code} in some builds
		}
		msg := sdk.StringOf(ev).String()
		if msg == "" {
			msg = "sub-agent failed"
		}
		status, e = sdk.StatusError, sdk.S(msg)
		out.Error(sdk.ProviderError{Message: sdk.S("sub-agent " + sdk.StringOf(d.Get("agentName")).String() + " failed: " + msg), Scope: scopeOf(a)})
	} else if d.Get("cancelled").Truthy() {
		status, e = statusCancelled, sdk.S("sub-agent cancelled")
	}
	switch {
	case a == nil && !failed:
		out.Unmapped(sdk.S("subagent.completed"))
	case a == nil:
	case !n.closeAgent(a, status, e, out) && !failed:
		out.Ignored(sdk.S("subagent.completed")) // closed already: a repeat
	}
}

// closeAgent closes a sub-agent's scope: its messages still open first,
// and its prompt when nothing wrote it (a sub-agent that failed before
// it started), the results it reported whose calls never came, then the
// scope with its status. It reports false when
// the scope was closed already.
func (n *normalizer) closeAgent(a *agent, status string, e sdk.Str, out *sdk.Out) bool {
	if !a.open {
		return false
	}
	n.prompt(a, sdk.Str{}, out)
	if len(n.skills) > 0 {
		n.skillFlush(a, out)
	}
	for i := 0; i < len(n.open); i++ {
		if m := n.open[i]; m.scope == a {
			n.closeMsg(m, sdk.MessageEnd{}, out)
			i--
		}
	}
	// Completions the sub-agent reported whose calls never came: the
	// host synthesizes their calls in its scope, while it is open.
	for _, key := range n.order {
		if r := n.held[key]; r != nil && r.Scope.String() == a.id {
			out.ToolResult(*r)
			delete(n.held, key)
		}
	}
	a.open = false
	out.ScopeClose(sdk.S(a.id), status, e)
	return true
}

// prompt writes sub-agent a's prompt, the task call's prompt argument, as
// its first message.user (at time ts), unless its own user.message did.
func (n *normalizer) prompt(a *agent, ts sdk.Str, out *sdk.Out) {
	if a == nil || a.prompted {
		return
	}
	a.prompted = true
	if a.prompt == "" {
		return
	}
	key := sdk.S(n.newKey("p"))
	out.Open(key, sdk.Message{User: true, Scope: sdk.S(a.id), Time: ts})
	out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.S(a.prompt), Origin: sdk.OriginPrompt})
	out.Close(key, sdk.MessageEnd{})
	a.prompt = ""
}

// noteTask remembers what a call that starts a sub-agent (its arguments
// hold a prompt: task, or a custom agent) says about it, until its
// subagent.started.
func (n *normalizer) noteTask(id string, args abi.Value) {
	if args.Kind() == abi.KindString {
		// Arguments sent as a JSON string.
		doc, ok := sdk.Parse(sdk.AppendText(nil, args))
		if !ok {
			return
		}
		args = doc.Root()
	}
	if args.Kind() != abi.KindObject {
		return
	}
	p := args.Get("prompt")
	if p.Kind() != abi.KindString || p.Is("") {
		return
	}
	t := &taskCall{prompt: p.String(), description: sdk.StringOf(args.Get("description")).String()}
	t.name = sdk.StringOf(args.Get("agent_type")).String()
	if t.description == "" {
		t.description = sdk.StringOf(args.Get("name")).String()
	}
	n.tasks[id] = t
}

// statusCancelled is the status of a sub-agent torn down before it
// finished (a child run's status; the SDK names ok, error, incomplete).
const statusCancelled = "cancelled"
