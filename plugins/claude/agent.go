package claude

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// keepProgress is how many agent_progress message uuids are remembered
// to drop a message that a later progress record repeats.
const keepProgress = 1024

// progress handles a session-log progress record. An agent_progress
// record carries one message of a Task/Agent sub-agent's conversation
// (Claude Code 2.1.x), linked to the call that started it by
// parentToolUseID: it goes to that call's scope, as a stream-json line
// with that parent_tool_use_id would. Other progress records (hook,
// bash, MCP and search progress) report live progress of a tool whose
// result the log records anyway.
func (n *normalizer) progress(v abi.Value, out *sdk.Out) {
	// A progress record does not close the step's open message: Claude
	// runs a tool as soon as its tool_use block is complete, so the
	// message's later blocks (another tool_use, with the usage of the
	// whole message) may follow its tools' progress (see idleClose).
	data := n.get(v, kData)
	f := n.members(data)
	dt, msg, prompt, agent := f[kType], f[kMessage], f[kPrompt], f[kAgentId]
	if !dt.Is("agent_progress") {
		n.ignore("progress/"+sdk.TypeName(dt), out)
		return
	}
	parent := n.scopeID(n.get(v, kParentToolUseIDCamel))
	scope := ""
	if parent != "" {
		scope = n.subScope(parent)
	} else {
		scope = "agent-" + agent.String()
	}
	if _, seen := n.scopes[scope]; !seen {
		n.openScope(scope, parent, "", "", prompt.String(), n.get(v, kTimestamp), out)
	}
	if msg.Kind() != abi.KindObject {
		// A progress record with no message (an agent starting).
		return
	}
	if u := n.get(msg, kUuid); u.Kind() == abi.KindString {
		id := u.String()
		if n.progressSeen[id] {
			n.ignore("progress/agent_progress", out) // a message repeated
			return
		}
		n.progressSeen[id] = true
		if old, ok := n.progressIDs.push(id, keepProgress); ok {
			delete(n.progressSeen, old)
		}
	}
	switch t := n.get(msg, kType); {
	case t.Is("assistant"):
		n.assistantIn(msg, scope, out)
	case t.Is("user"):
		n.userIn(msg, scope, out)
	default:
		out.Unmapped(sdk.S("progress/agent_progress/" + sdk.TypeName(t)))
	}
}

// isAgentTask reports whether a task_started record's task_type names a
// sub-agent (local_agent, remote_agent; missing in older CLIs) rather
// than a background shell (local_bash).
func isAgentTask(tt abi.Value) bool {
	if tt.Kind() != abi.KindString {
		return true
	}
	s := tt.String()
	for i := 0; i+5 <= len(s); i++ {
		if s[i:i+5] == "agent" {
			return true
		}
	}
	return false
}

// permCall is a can_use_tool request for a call not (yet) in the input.
type permCall struct {
	id, name string
	input    sdk.Str
	perm     *perm
}

// perm is what a can_use_tool request and the SDK's answer say of one
// call: kept with the call it asked about (call.perm), so by scope and id
// as the call is, or with its permCall until that call shows up.
type perm struct {
	asked bool   // asked, and not (yet) allowed
	deny  string // the denial's message
}

// controlRequest handles a control_request line of the SDK's control
// protocol. can_use_tool asks the SDK whether a tool call may run: the
// call waits for approval (spec §6.12).
func (n *normalizer) controlRequest(v abi.Value, out *sdk.Out) {
	n.setFormat(fmtStream, out)
	rid := n.get(v, kRequestId).String()
	f := n.members(n.get(v, kRequest))
	if !f[kSubtype].Is("can_use_tool") {
		// interrupt, initialize, hook_callback, mcp_message, ...: the
		// protocol's plumbing.
		n.ignore("control_request", out)
		return
	}
	id := f[kToolUseId].String()
	if id == "" {
		n.ignore("control_request", out)
		return
	}
	// Known: the request's outcome shows on the call's result.
	n.ignore("control_request/can_use_tool", out)
	p := &perm{asked: true}
	n.permReq[rid] = p
	if c := n.askedCall(id, f[kAgentIdSnake].String()); c != nil {
		c.perm = p
		return
	}
	for i := range n.permCalls {
		if n.permCalls[i].id == id {
			// Asked again: the latest request stands.
			n.permCalls[i].perm = p
			return
		}
	}
	n.permCalls = append(n.permCalls, permCall{id: id, name: f[kToolName].String(), input: sdk.JSON(f[kInput]).Keep(), perm: p})
}

// askedCall is the call a permission request for call id asks about. A
// request names the call by its id alone (and, in newer SDKs, agent_id
// when a sub-agent asks): the step's call of id, unless a sub-agent asks
// or that call is a Task or Agent call whose sub-agent runs already (it
// was allowed before it started); else the call of id of a sub-agent
// still running (the one agent_id names, a Task/Agent call's without a
// result, then one opened without a starting call, the oldest first);
// nil when none is known: the call has not shown up yet.
func (n *normalizer) askedCall(id, agent string) *call {
	if c := n.calls[id]; c != nil && agent == "" && (c.subName() == "" || !n.scopes[c.subName()]) {
		return c
	}
	if agent != "" {
		if s := n.calls[callKey("agent-"+agent, id)]; s != nil {
			return s
		}
	}
	return n.subCall(id)
}

// anyCall is the call of id in the step's own scope, else in the scope
// of a sub-agent still running (a Task/Agent call without a result, then
// one opened without a starting call), the oldest first; nil when none
// is known: a permission denial names a call by its id alone. Such
// scopes are few; the scan is short.
func (n *normalizer) anyCall(id string) *call {
	if c := n.calls[id]; c != nil {
		return c
	}
	return n.subCall(id)
}

// subCall is the call of id of a sub-agent still running (a Task/Agent
// call's without a result, then one opened without a starting call), the
// oldest first; nil when none is.
func (n *normalizer) subCall(id string) *call {
	for _, t := range n.tasks {
		if c := n.calls[callKey(t.subName(), id)]; c != nil {
			return c
		}
	}
	for _, s := range n.orphans {
		if c := n.calls[callKey(s, id)]; c != nil {
			return c
		}
	}
	return nil
}

// controlResponse handles the SDK's answer to a control request, when
// the capture holds both directions.
func (n *normalizer) controlResponse(v abi.Value, out *sdk.Out) {
	n.setFormat(fmtStream, out)
	f := n.members(n.get(v, kResponse))
	rid, inner := f[kRequestId].String(), f[kResponse]
	p, ok := n.permReq[rid]
	if !ok {
		n.ignore("control_response", out)
		return
	}
	delete(n.permReq, rid)
	n.ignore("control_response", out)
	switch b := inner.Get("behavior"); {
	case b.Is("allow"):
		p.asked = false
	case b.Is("deny"):
		m := inner.Get("message").String()
		if m == "" {
			m = "permission denied"
		}
		p.deny = m
	}
}

// endPermissions reports the calls that waited for approval and never
// appeared otherwise: dangling tool.calls.
func (n *normalizer) endPermissions(out *sdk.Out) {
	pending := n.permCalls
	n.permCalls = nil // noteCall below would drop them as it goes
	for _, p := range pending {
		if n.anyCall(p.id) != nil {
			// A call of its id is known (a Task call running the
			// sub-agent that asked): the asked one is not it, and
			// writing it again would make that call twice.
			continue
		}
		c := n.noteCall("", p.id, p.name, abi.Value{})
		c.reported = true
		in := p.input
		if !in.IsSet() {
			in = emptyObject()
		}
		out.ToolCall(sdk.ToolCall{CallID: sdk.S(p.id), Name: sdk.S(p.name), Input: in, Kind: kindOf(p.name)})
	}
}

// denials handles a result's permission_denials: calls a permission rule
// or the SDK refused. A call already answered keeps its result; one
// without a result gets a denied one; in a result-only json output the
// call is not in the input at all, and is reported from the denial.
func (n *normalizer) denials(list abi.Value, out *sdk.Out) {
	it := list.Iter()
	for it.Next() {
		d := it.Value()
		id := d.Get("tool_use_id").String()
		if id == "" {
			continue
		}
		c := n.anyCall(id)
		if c == nil {
			if n.sawMessages {
				continue // answered and forgotten (see keepDone)
			}
			name := d.Get("tool_name").String()
			c = n.noteCall("", id, name, abi.Value{})
			c.reported = true
			in := sdk.JSON(d.Get("tool_input"))
			if !in.IsSet() {
				in = emptyObject()
			}
			out.ToolCall(sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: in, Kind: kindOf(name)})
		} else if c.resulted {
			continue
		}
		c.resulted = true
		out.ToolResult(sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S(c.name), Status: sdk.S(toolDenied), IsError: true,
			Error: sdk.S("permission denied")})
		n.done(c, false)
	}
}

// rateLimit handles a rate_limit_event: a rejected request is an error
// the provider reported; an allowed one (with or without a warning) is
// quota state the transcript has no place for.
func (n *normalizer) rateLimit(v abi.Value, out *sdk.Out) {
	info := n.get(v, kRateLimitInfo)
	st := info.Get("status")
	if !st.Is("rejected") {
		n.ignore("rate_limit_event", out)
		return
	}
	msg := "rate limit reached"
	if t := info.Get("rateLimitType").String(); t != "" {
		msg += " (" + t + ")"
	}
	if r, ok := info.Get("resetsAt").Int(); ok {
		msg += "; resets at unix time " + strconv.FormatInt(r, 10)
	}
	out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S("rate_limit")})
}

// apiRetry handles system/api_retry: a failed API request the CLI
// retries. The failure is an error the provider reported (rate limit,
// overload), even when a retry then succeeds.
func (n *normalizer) apiRetry(v abi.Value, out *sdk.Out) {
	msg := "API request failed"
	var code sdk.Str
	if st, ok := n.get(v, kErrorStatus).Int(); ok {
		msg += " with status " + strconv.FormatInt(st, 10)
		code = sdk.S(strconv.FormatInt(st, 10))
	}
	if e := n.get(v, kError); e.Exists() && e.Kind() != abi.KindNull {
		msg += ": " + sdk.Text(e).String()
	}
	if a, ok := n.get(v, kAttempt).Int(); ok {
		msg += "; retry " + strconv.FormatInt(a, 10)
		if m, ok := n.get(v, kMaxRetries).Int(); ok {
			msg += " of " + strconv.FormatInt(m, 10)
		}
	}
	out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: code})
}

// apiErrorRecord handles system/api_error (session logs of 2.1.1xx
// builds): a failed API request the CLI retries, with the API's error
// (error{status, error{error{type, message}}, type}) and the attempt
// (retryAttempt of maxRetries). Like api_retry, it is an error the
// provider reported, even when a retry then succeeds.
func (n *normalizer) apiErrorRecord(v abi.Value, out *sdk.Out) {
	e := n.get(v, kError)
	msg := "API request failed"
	var code sdk.Str
	st, hasStatus := e.Get("status").Int()
	if hasStatus {
		msg += " with status " + strconv.FormatInt(st, 10)
		code = sdk.S(strconv.FormatInt(st, 10))
	}
	inner := e.Path("error", "error")
	if !inner.Exists() {
		inner = e.Get("error")
	}
	t := sdk.StringOf(inner.Get("type"))
	if t.IsEmpty() {
		t = sdk.StringOf(e.Get("type"))
	}
	if !t.IsEmpty() {
		msg += ": " + t.String()
		code = t
	}
	if m := sdk.StringOf(inner.Get("message")); !m.IsEmpty() {
		msg += ": " + m.String()
	} else if m := sdk.StringOf(e.Get("message")); !m.IsEmpty() {
		msg += ": " + m.String()
	}
	if a, ok := n.get(v, kRetryAttempt).Int(); ok {
		msg += "; retry " + strconv.FormatInt(a, 10)
		if m, ok := n.get(v, kMaxRetriesCamel).Int(); ok {
			msg += " of " + strconv.FormatInt(m, 10)
		}
	}
	out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: code})
}

// ignore accounts for a line of a type the plugin knows and deliberately
// does not map (spec §6.8): it carries nothing the transcript has a
// place for.
func (n *normalizer) ignore(native string, out *sdk.Out) {
	out.Ignored(sdk.S(native))
}

// forkedHistory is the native name under which a record copied from
// another session (forkedFrom) is declared ignored.
const forkedHistory = "(forked history)"

// forked reads a record a fork copied from the session it was forked
// from (doc.go, Forks): /branch and --fork-session write the parent's
// conversation into the new session's file, each record with the new
// sessionId and forkedFrom {sessionId, messageUuid} naming where it came
// from. Its turns, tool calls and usage are the parent's (the parent's
// run holds them): it gives the session's format and metadata, and is
// declared ignored.
func (n *normalizer) forked(v abi.Value, out *sdk.Out) {
	n.claudeLine(v, out)
	n.ignore(forkedHistory, out)
}
