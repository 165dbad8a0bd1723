package amp

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Tool result statuses, as the transcript names them.
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// call reports the tool.call of a tool_use block of message key, and
// whether it did; a Task call opens its sub-agent's scope. A call the
// message had reported is not reported again (a later version of the
// thread). Another message naming the id of a call that has its result
// is a new call (model servers make ids unique per response, not per
// session: a local one names every call call_1), as the host reads it;
// one naming a call still without its result is that call.
func (n *normalizer) call(b abi.Value, key string, ts sdk.Str, out *sdk.Out) bool {
	id, name, args := b.Get("id"), b.Get("name"), b.Get("input")
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("amp tool_use without id (" + sdk.TypeName(name) + "): no tool.call reported")
		return true
	}
	if !n.tell(key, id) {
		return false
	}
	if _, ok := n.calls[sdk.View(id)]; ok && !n.resulted[sdk.View(id)] {
		return false // a repeat before the call's result
	}
	if n.calls == nil {
		n.calls = map[string]string{}
	}
	n.calls[id.String()] = name.String()
	delete(n.resulted, sdk.View(id))
	tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(args), Kind: kindOf(sdk.View(name)), Scope: n.scope, Time: ts}
	if tc.Kind == "execute" {
		tc.Command = sdk.StringOf(args.Get("cmd"))
		if tc.Command.IsEmpty() {
			tc.Command = sdk.StringOf(args.Get("command"))
		}
	}
	out.ToolCall(tc)
	if name.Is("Task") {
		// A new call: a Task call reusing the id of an earlier one
		// runs a sub-agent of its own.
		n.startAgent(id, args, ts, out)
	}
	return true
}

// tell notes that message key reported the call or the result of call
// id, and reports whether it had not before.
func (n *normalizer) tell(key string, id abi.Value) bool {
	k := key + "\x00" + sdk.View(id)
	if n.told[k] {
		return false
	}
	if n.told == nil {
		n.told = map[string]bool{}
	}
	n.told[k] = true
	return true
}

// kindOf is the transcript's kind of an Amp tool.
func kindOf(name string) string {
	switch name {
	case "Bash", "shell_command":
		return "execute"
	case "Read", "read_file", "list_directory", "read_mcp_resource", "get_diagnostics", "read_thread", "todo_read":
		return "read"
	case "edit_file", "create_file", "undo_edit", "format_file", "apply_patch":
		return "edit"
	case "Grep", "grep", "glob", "codebase_search_agent", "finder", "find_thread":
		return "search"
	case "read_web_page", "web_search":
		return "fetch"
	case "todo_write":
		return "think"
	}
	return "other"
}

// result reports a tool_result block of message key: {toolUseID, run
// {status, result, progress, error {message}, reason}}, once per
// message and call (a later version of the thread holds it again), and
// only for a call still without its result (a result sent again is
// not the call reusing its id: that call comes first). It reports
// whether it said anything.
func (n *normalizer) result(b abi.Value, key string, ts sdk.Str, out *sdk.Out) bool {
	id := b.Get("toolUseID")
	if id.Kind() != abi.KindString || id.Is("") {
		id = b.Get("tool_use_id")
	}
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("amp tool_result without a call id: no tool.result reported")
		return true
	}
	if n.resulted[sdk.View(id)] || n.told[key+"\x00"+sdk.View(id)] {
		return false
	}
	run := b.Get("run")
	st := run.Get("status")
	res := sdk.ToolResult{CallID: sdk.Text(id), Name: sdk.S(n.calls[sdk.View(id)]), Scope: n.scope, Time: ts}
	res.Output = resultText(run.Get("result"))
	if !res.Output.IsSet() {
		// A run that states only its progress (the last output it
		// streamed).
		res.Output = resultText(run.Get("progress"))
	}
	switch {
	case !run.Exists() && b.Get("content").Exists():
		// Anthropic's own shape {tool_use_id, content, is_error}, as
		// a thread converted from another agent holds it.
		res.Output = blocksText(b.Get("content"))
		res.Status = sdk.S(toolOK)
		if b.Get("is_error").Truthy() {
			res.IsError, res.Status, res.Error = true, sdk.S(toolError), res.Output
			if res.Error.IsEmpty() {
				res.Error = sdk.S("the tool call failed")
			}
		}
	case st.Is("done"):
		res.Status = sdk.S(toolOK)
		{
			code := sdk.IntOf(run.Path("result", "exitCode"))
			res.ExitCode = code
			if c, ok := code.Value(); ok && c != 0 {
				res.IsError, res.Status = true, sdk.S(toolError)
				res.Error = sdk.S("exit code " + strconv.FormatInt(c, 10))
			}
		}
	case st.Is("error"):
		res.IsError, res.Status = true, sdk.S(toolError)
		res.Error = errText(run.Get("error"))
		if res.Error.IsEmpty() {
			res.Error = sdk.S("the tool call failed")
		}
	case st.Is("cancelled"):
		res.IsError, res.Status = true, sdk.S(toolCancelled)
		res.Error = reason(run, "the tool call was cancelled")
	case st.Is("rejected-by-user"):
		res.IsError, res.Status = true, sdk.S(toolDenied)
		res.Error = reason(run, "the user rejected the tool call")
	case st.Is("in-progress"), st.Is("queued"), st.Is("blocked-on-user"), !st.Exists() && !res.Output.IsSet():
		// Still running when the thread was written: the next version
		// of the document holds its result.
		return false
	default:
		out.Warn("amp tool run status " + sdk.TypeName(st) + " for call " + id.String() + ": not read as a result")
		return true
	}
	if n.resulted == nil {
		n.resulted = map[string]bool{}
	}
	n.resulted[id.String()] = true
	n.tell(key, id)
	out.ToolResult(res)
	if i := n.agent(sdk.View(id)); i >= 0 && n.agents[i].open {
		n.endAgent(&n.agents[i], res, out)
	}
	return true
}

// reason is a cancelled or rejected run's reason, else def.
func reason(run abi.Value, def string) sdk.Str {
	if r := errText(run.Get("reason")); !r.IsEmpty() {
		return r
	}
	return sdk.S(def)
}

// blocksText is an Anthropic tool_result's content as text: a list of
// text blocks is their texts joined with newlines; anything else is read
// as resultText reads it.
func blocksText(c abi.Value) sdk.Str {
	if c.Kind() != abi.KindArray || c.Len() == 0 {
		return resultText(c)
	}
	var b []byte
	it := c.Iter()
	for it.Next() {
		p := it.Value()
		if !p.Get("type").Is("text") || p.Get("text").Kind() != abi.KindString {
			return resultText(c)
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = sdk.AppendText(b, p.Get("text"))
	}
	return sdk.S(string(b))
}

// resultText is a run's result as text: a string as it is; an object's
// output (Bash), content (Read) or diff (edit_file) when it holds one as
// a string; else the value as JSON.
func resultText(r abi.Value) sdk.Str {
	switch r.Kind() {
	case abi.KindString:
		return sdk.Text(r)
	case abi.KindObject:
		for _, k := range [...]string{"output", "content", "diff"} {
			if f := r.Get(k); f.Kind() == abi.KindString {
				return sdk.Text(f)
			}
		}
		return sdk.JSON(r)
	case abi.KindArray:
		return sdk.JSON(r)
	}
	return sdk.Str{}
}

// subAgent is the scope of the sub-agent a Task call runs: the call's
// id, the scope's name and whether it is still open.
type subAgent struct {
	id, scope string
	open      bool
}

// agent is the index in agents of the latest Task call of id, -1 when
// none (a thread has few: a linear search).
func (n *normalizer) agent(id string) int {
	for i := len(n.agents) - 1; i >= 0; i-- {
		if n.agents[i].id == id {
			return i
		}
	}
	return -1
}

// startAgent opens the scope of the sub-agent a Task call runs, with the
// parent's prompt as its first message. Its own turns are not in the
// parent thread: the scope holds what the call states. The scope is
// named by the call's id, and, for a call that reuses the id of an
// earlier Task call, by the id and a number (call_1#2, call_1#3, ...).
func (n *normalizer) startAgent(id, args abi.Value, ts sdk.Str, out *sdk.Out) {
	a := subAgent{id: id.String(), open: true}
	a.scope = a.id
	if k := n.agent(a.id); k >= 0 {
		nth := 2
		for _, b := range n.agents[:k] {
			if b.id == a.id {
				nth++
			}
		}
		a.scope += "#" + strconv.Itoa(nth)
	}
	n.agents = append(n.agents, a)
	scope := sdk.S(a.scope)
	out.ScopeOpen(scope, sdk.Text(id), sdk.S("Task"), sdk.StringOf(args.Get("description")))
	if p := sdk.StringOf(args.Get("prompt")); !p.IsEmpty() {
		key := sdk.S("agent-" + a.scope)
		out.Open(key, sdk.Message{User: true, Scope: scope, Time: ts})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: p, Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
	}
}

// endAgent closes the scope a of the Task call res answers.
func (n *normalizer) endAgent(a *subAgent, res sdk.ToolResult, out *sdk.Out) {
	a.open = false
	scope := sdk.S(a.scope)
	if !res.IsError && !res.Output.IsEmpty() {
		key := sdk.S("agent-" + a.scope + "-result")
		out.Open(key, sdk.Message{Scope: scope, Time: res.Time})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: res.Output})
		out.Close(key, sdk.MessageEnd{})
	}
	switch {
	case !res.IsError:
		out.ScopeClose(scope, sdk.StatusOK, sdk.Str{})
	case res.Status.String() == toolError:
		out.ScopeClose(scope, sdk.StatusError, res.Error)
	default:
		out.ScopeClose(scope, toolCancelled, res.Error)
	}
}
