package copilot

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// input is a tool's arguments as JSON: an object stays one, a string
// holding JSON becomes that JSON (sdk.JSON), a missing value is {}.
func input(args abi.Value) sdk.Str {
	if !args.Exists() || args.IsNull() {
		return sdk.S("{}")
	}
	return sdk.JSON(args)
}

// call reports the tool.call of toolCallId once (toolRequests and
// tool.execution_start both name it), then any result that arrived first.
func (n *normalizer) call(id, name, args abi.Value, ts sdk.Str, out *sdk.Out) {
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("copilot tool call without toolCallId: no tool.call reported")
		return
	}
	sid := id.String()
	if n.calls[sid] {
		return
	}
	n.calls[sid] = true
	nm := name.String()
	tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(args), Kind: kindOf(nm), Time: ts}
	if tc.Kind == "execute" {
		tc.Command = command(args)
	}
	out.ToolCall(tc)
	if r := n.held[sid]; r != nil {
		out.ToolResult(*r)
		delete(n.held, sid)
	}
}

// command is arguments.command, whether arguments is an object or a JSON
// string.
func command(args abi.Value) sdk.Str {
	if args.Kind() == abi.KindString {
		b := sdk.AppendText(nil, args)
		doc, ok := sdk.Parse(b)
		if !ok {
			return sdk.Str{}
		}
		return sdk.StringOf(doc.Root().Get("command")).Keep()
	}
	return sdk.StringOf(args.Get("command"))
}

// toolResult handles tool.execution_complete. A completion that arrives
// before its call (out of order) is held until the call is reported.
func (n *normalizer) toolResult(d abi.Value, ts sdk.Str, out *sdk.Out) {
	id := d.Get("toolCallId")
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("copilot tool result without toolCallId ignored")
		return
	}
	r := sdk.ToolResult{CallID: sdk.Text(id), Time: ts}
	res := d.Get("result")
	r.Output = sdk.StringOf(res.Get("content"))
	if r.Output.IsEmpty() {
		if dc := sdk.StringOf(res.Get("detailedContent")); !dc.IsEmpty() {
			r.Output = dc
		}
	}
	if r.Output.IsEmpty() && res.Kind() == abi.KindString {
		r.Output = sdk.Text(res)
	}
	e := d.Get("error")
	ok, known := d.Get("success").Bool()
	if !known {
		ok = !e.Exists() || e.IsNull()
	}
	if ok {
		r.Status = sdk.S("completed")
	} else {
		r.IsError = true
		r.Status = sdk.S("failed")
		if e.Get("code").Is("denied") {
			// The user (or a policy) refused the call.
			r.Status = sdk.S("declined")
		}
		r.Error = sdk.StringOf(e.Get("message"))
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(e)
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(e.Get("code"))
		}
	}
	sid := id.String()
	if n.calls[sid] {
		out.ToolResult(r)
		return
	}
	if n.held[sid] != nil {
		return // a second completion: the first one stands
	}
	r.CallID, r.Output, r.Error, r.Status, r.Time = r.CallID.Keep(), r.Output.Keep(), r.Error.Keep(), r.Status.Keep(), r.Time.Keep()
	n.held[sid] = &r
	n.order = append(n.order, sid)
}

// kindOf maps a Copilot CLI tool name to the transcript's tool kind.
// report_intent and the todo tools record the agent's plan, hence "think".
func kindOf(name string) string {
	switch name {
	case "bash", "shell", "powershell", "read_bash", "write_bash", "stop_bash":
		return "execute"
	case "view", "read", "read_file", "ls", "list_dir":
		return "read"
	case "edit", "create", "str_replace", "str_replace_editor", "write", "apply_patch":
		return "edit"
	case "grep", "glob", "search", "rg":
		return "search"
	case "web_fetch", "fetch", "web_search":
		return "fetch"
	case "report_intent", "think", "update_todo", "todo_write":
		return "think"
	}
	return "other"
}
