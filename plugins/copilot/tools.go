package copilot

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// input is a tool's arguments as JSON: an object stays one, a string
// holding JSON becomes that JSON (sdk.JSON), a missing value is {}.
func input(args abi.Value) sdk.Str {
	if !args.Exists() || args.Kind() == abi.KindNull {
		return sdk.S("{}")
	}
	return sdk.JSON(args)
}

// call reports the tool.call of toolCallId once (toolRequests and
// tool.execution_start both name it), then any result that arrived first.
// It reports false when the call was reported already. A call naming the
// id of a call that has its result is a new call when reuse is set (a
// new message's toolRequests, a tool.execution_start): providers make
// ids unique per response, not per session (a custom model server names
// every call call_1), as the host reads them. A message read again (its
// messageId written already) names its own calls again: reuse is unset.
func (n *normalizer) call(id, name, args abi.Value, ts sdk.Str, reuse bool, out *sdk.Out) bool {
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("copilot tool call without toolCallId: no tool.call reported")
		return true
	}
	sid := id.String()
	key := callKey(n.cur, sid)
	if n.calls[key] {
		if !reuse || !n.completed[key] {
			return false
		}
		// The id's call has its result: this one is new, and what was
		// known of the old one's outcome is not its.
		delete(n.completed, key)
		delete(n.refused, key)
		delete(n.callAgent, key)
	}
	n.calls[key] = true
	if a := n.cur; a != nil {
		n.prompt(a, ts, out)
		n.callAgent[key] = a
	}
	nm := name.String()
	tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(args), Kind: kindOf(nm), Scope: scopeOf(n.cur), Time: ts}
	if tc.Kind == "execute" {
		tc.Command = command(args)
	} else if args.Kind() == abi.KindObject || args.Kind() == abi.KindString {
		// A call that may start a sub-agent (task, a custom agent).
		n.noteTask(sid, args)
	}
	out.ToolCall(tc)
	if hk := n.heldFor(n.cur, key, sid); hk != "" {
		r := n.held[hk]
		r.Scope = tc.Scope
		out.ToolResult(*r)
		delete(n.held, hk)
	}
	return true
}

// callKey is the key of call id made by agent a (nil: the main agent) in
// the maps kept per call: the id itself for the main agent, else the
// sub-agent's scope and the id. A sub-agent's calls may reuse the id of
// a call of its parent that waits for its result (the task call that
// started it, or a call run beside it): each is a call of its own.
func callKey(a *agent, id string) string {
	if a == nil {
		return id
	}
	return a.id + "\x00" + id
}

// heldFor is the key in held of the result held for call id whose key
// is key (a the agent that makes the call, nil for the main agent): the
// result held under key (its completion came from that agent), else,
// for a sub-agent's call, the one a line without agentId reported (held
// under id alone: builds that write no agentId on a sub-agent's
// completion); "" when none is. A completion whose line named a
// sub-agent answers that sub-agent's call only, and one without agentId
// never waits for another agent's call of its id: the main agent's own
// call of the id takes it.
func (n *normalizer) heldFor(a *agent, key, id string) string {
	if len(n.held) == 0 {
		return ""
	}
	if n.held[key] != nil {
		return key
	}
	if a != nil && n.held[id] != nil {
		return id
	}
	return ""
}

// callOf is the key of the call id that the result a line of the
// current agent reports answers: the agent's own call of id; else, for a
// line that names no agent (builds that write no agentId on a
// sub-agent's completion), a call of id still without its completion
// made by a sub-agent (the oldest first), else one that has it (a
// completion sent again, left to the host); "" when none is (then the
// result is held for its call). A line that names a sub-agent is that
// sub-agent's: it never answers another agent's call.
func (n *normalizer) callOf(id string) string {
	if key := callKey(n.cur, id); n.calls[key] {
		return key
	}
	if n.cur != nil {
		return ""
	}
	first := ""
	for _, a := range n.agentList {
		if key := callKey(a, id); n.calls[key] {
			if !n.completed[key] {
				return key
			}
			if first == "" {
				first = key
			}
		}
	}
	return first
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
	// The tool's name, for a call the log never showed (the host
	// synthesizes it): toolName where a build writes it, else the
	// telemetry's.
	r.Name = sdk.StringOf(d.Get("toolName"))
	if r.Name.IsEmpty() {
		r.Name = sdk.StringOf(d.Path("toolTelemetry", "properties", "tool"))
	}
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
		ok = !e.Exists() || e.Kind() == abi.KindNull
	}
	// The shell tools report success even when the command failed; the
	// exit code is the output's last line, and, in builds that state it
	// apart (shellExecution.exitCode, kept because the persisted output
	// may be stripped), that field.
	code, found := shellExit(r.Output.String())
	inOutput := found
	if c, stated := d.Path("shellExecution", "exitCode").Int(); stated {
		code, found = c, true
	}
	if found {
		r.ExitCode = sdk.N(code)
		if ok && code != 0 {
			ok = false
			msg := "exit code " + strconv.FormatInt(code, 10)
			if l := lastOutputLine(r.Output.String(), inOutput); l != "" {
				msg += ": " + l
			}
			r.Error = sdk.S(msg)
		}
	}
	if ok {
		r.Status = sdk.S(toolOK)
	} else if r.Error.IsSet() && !e.Exists() {
		r.IsError, r.Status = true, sdk.S(toolError)
	} else {
		r.IsError = true
		r.Status = sdk.S(toolStatus(e.Get("code")))
		r.Error = sdk.StringOf(e.Get("message"))
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(e)
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(e.Get("code"))
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.S("the tool call failed")
		}
	}
	sid := id.String()
	if key := n.callOf(sid); key != "" {
		// The result goes where its call is, whichever agent reports
		// it: the reporting agent's own call of the id first.
		n.completed[key] = true
		r.Scope = scopeOf(n.callAgent[key])
		out.ToolResult(r)
		return
	}
	key := callKey(n.cur, sid)
	n.completed[key] = true
	// Held (or a second completion of a held call: the first one
	// stands): the result is reported with its call, or at the end,
	// from the first completion; this line adds nothing now.
	out.Ignored(sdk.S("tool.execution_complete"))
	if n.held[key] != nil {
		return
	}
	r.CallID, r.Name, r.Output, r.Error, r.Status, r.Time = r.CallID.Keep(), r.Name.Keep(), r.Output.Keep(), r.Error.Keep(), r.Status.Keep(), r.Time.Keep()
	// In the scope of the agent that reported it, should its call never
	// come (the host synthesizes the call there).
	r.Scope = scopeOf(n.cur)
	n.held[key] = &r
	n.order = append(n.order, key)
}

// shellExit finds the exit code the shell tools append to their output as
// its last line: "<shellId: 0 completed with exit code 1>" (1.0.7x) or
// "<exited with exit code 1>" (earlier builds).
func shellExit(out string) (int64, bool) {
	line := strings.TrimRight(out, " \t\r\n")
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if !strings.HasPrefix(line, "<") || !strings.HasSuffix(line, ">") {
		return 0, false
	}
	i := strings.LastIndex(line, "exit code ")
	if i < 0 {
		return 0, false
	}
	return wire.ParseInt([]byte(strings.TrimSuffix(line[i+len("exit code "):], ">")))
}

// lastOutputLine is the last non-empty line of a shell output before its
// exit-code line (when exitLine says it ends with one), clipped: where a
// failing command usually says why.
func lastOutputLine(out string, exitLine bool) string {
	lines := strings.Split(strings.TrimRight(out, " \t\r\n"), "\n")
	last := len(lines) - 1
	if exitLine {
		last--
	}
	for i := last; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if len(l) > 300 {
				n := 300
				for n > 0 && l[n]&0xC0 == 0x80 {
					n--
				}
				l = l[:n]
			}
			return l
		}
	}
	return ""
}

// Tool result statuses: the closed set of the transcript format (spec §4).
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// toolStatus maps the error code of a failed tool execution: "denied"
// and "rejected" (the user or a policy refused it) are denied,
// cancellations and timeouts are cancelled, anything else ("failure") an
// error.
func toolStatus(code abi.Value) string {
	switch sdk.TypeName(code) {
	case "denied", "rejected", "permission_denied", "user_denied":
		return toolDenied
	case "cancelled", "canceled", "aborted", "interrupted", "timeout", "timed_out":
		return toolCancelled
	}
	return toolError
}

// toolDelta notes a streamed piece of a tool call (ephemeral, stdout
// only). The call is reported when its complete request arrives
// (toolRequests, tool.execution_start); one whose stream was cut before
// that is reported at the end (cutCalls).
func (n *normalizer) toolDelta(d abi.Value, ts sdk.Str) {
	id := d.Get("toolCallId")
	if id.Kind() != abi.KindString || id.Is("") || n.calls[callKey(n.cur, sdk.View(id))] {
		return
	}
	sid := id.String()
	var c *deltaCall
	for _, dc := range n.deltas {
		if dc.id == sid && dc.scope == n.cur {
			c = dc
			break
		}
	}
	if c == nil {
		c = &deltaCall{id: sid, ts: ts.String(), scope: n.cur}
		n.deltas = append(n.deltas, c)
	}
	if name := d.Get("toolName"); c.name == "" && name.Kind() == abi.KindString {
		c.name = name.String()
	}
	c.input = sdk.AppendText(c.input, d.Get("inputDelta"))
}

// cutCalls reports the calls whose stream was cut during
// assistant.tool_call_delta (spec §6.12): each one whose id and name are
// known becomes a tool_use block of the message being streamed (or of a
// message of its own) and a tool.call, which stays dangling. Its input is
// the JSON streamed so far when complete, else that text as a string.
func (n *normalizer) cutCalls(out *sdk.Out) {
	// The message each agent's cut calls go into.
	type target struct {
		scope *agent
		key   sdk.Str
		own   bool
		slot  int
	}
	var targets []target
	for _, c := range n.deltas {
		if c.name == "" || n.calls[callKey(c.scope, c.id)] {
			continue
		}
		// The arguments streamed so far: whole, else their complete
		// members, else the text as it is.
		args := c.input
		doc, parsed := sdk.Parse(args)
		if !parsed {
			if cut := completeMembers(args); cut != nil {
				args = cut
				doc, parsed = sdk.Parse(args)
			}
		}
		in := sdk.S(string(c.input))
		switch {
		case parsed:
			in = sdk.JSON(doc.Root())
		case len(c.input) == 0:
			in = sdk.S("{}")
		}
		ti := -1
		for i := range targets {
			if targets[i].scope == c.scope {
				ti = i
			}
		}
		if ti < 0 {
			t := target{scope: c.scope, slot: slotTools}
			if m := n.lastOpen(c.scope); m != nil {
				t.key = sdk.S(m.key)
			} else {
				n.prompt(c.scope, sdk.Str{}, out)
				t.key, t.own = sdk.S(n.newKey("a")), true
				out.Open(t.key, sdk.Message{Scope: scopeOf(c.scope)})
			}
			targets = append(targets, t)
			ti = len(targets) - 1
		}
		t := &targets[ti]
		out.Block(t.key, t.slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(c.name), ToolID: sdk.S(c.id), ToolInput: in})
		t.slot++
		n.calls[callKey(c.scope, c.id)] = true
		if c.scope != nil {
			n.callAgent[callKey(c.scope, c.id)] = c.scope
		}
		tc := sdk.ToolCall{CallID: sdk.S(c.id), Name: sdk.S(c.name), Input: in, Kind: kindOf(c.name), Scope: scopeOf(c.scope)}
		if c.ts != "" {
			tc.Time = sdk.S(c.ts)
		}
		if parsed && tc.Kind == "execute" {
			tc.Command = sdk.StringOf(doc.Root().Get("command"))
		}
		out.ToolCall(tc)
		out.Warn("copilot: the stream was cut while tool call " + c.id + " (" + c.name + ") was streamed; recorded from its deltas")
	}
	for _, t := range targets {
		if t.own {
			out.Close(t.key, sdk.MessageEnd{})
		}
	}
	n.deltas = nil
}

// completeMembers returns the members of a JSON object cut off while it
// streamed that arrived whole (`{"command":"ls","descr` gives
// `{"command":"ls"}`), or nil when there is none.
func completeMembers(b []byte) []byte {
	depth, inStr, esc, last := 0, false, false, -1
	for i, c := range b {
		switch {
		case esc:
			esc = false
		case inStr:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 1:
			last = i
		}
	}
	if last < 0 || len(b) == 0 || b[0] != '{' {
		return nil
	}
	out := make([]byte, 0, last+1)
	out = append(out, b[:last]...)
	return append(out, '}')
}

// permission handles permission.completed: a call the permission check
// refused ("denied-by-rules", "denied-interactively-by-user", ...) or
// cancelled never runs. Its tool.execution_complete usually follows and
// is the result; when none does (the session ended at the prompt), this
// outcome is reported at the end, so the call is not left dangling.
func (n *normalizer) permission(d abi.Value, ts sdk.Str, out *sdk.Out) {
	id := d.Get("toolCallId")
	kind := d.Path("result", "kind")
	if id.Kind() != abi.KindString || id.Is("") || kind.Is("approved") || kind.Kind() != abi.KindString {
		out.Ignored(sdk.S("permission.completed"))
		return
	}
	k := kind.String()
	st := toolDenied
	if k == "cancelled" {
		st = toolCancelled
	} else if !strings.HasPrefix(k, "denied") {
		out.Ignored(sdk.S("permission.completed"))
		return
	}
	msg := "permission " + k
	for _, v := range [...]abi.Value{d.Path("result", "feedback"), d.Path("result", "message"), d.Path("result", "reason")} {
		if v.Kind() == abi.KindString && !v.Is("") {
			msg += ": " + v.String()
			break
		}
	}
	sid := id.String()
	key := n.callOf(sid)
	if key == "" {
		key = callKey(n.cur, sid)
	}
	if n.refused[key] == nil {
		n.refusedOrder = append(n.refusedOrder, key)
	}
	n.refused[key] = &sdk.ToolResult{CallID: sdk.S(sid), Status: sdk.S(st), IsError: true, Error: sdk.S(msg), Time: ts.Keep()}
	out.Ignored(sdk.S("permission.completed"))
}

// kindOf maps a Copilot CLI tool name to the transcript's tool kind.
// report_intent and the todo tools record the agent's plan, hence "think".
func kindOf(name string) string {
	for _, t := range &toolKinds {
		if t.name == name {
			return t.kind
		}
	}
	return "other"
}

// toolKinds is kindOf's table. A loop over a table is a few hundred bytes of
// module where a switch of string cases is, under TinyGo -opt=2, a
// byte-by-byte compare of every literal (2-3 KB), and each byte of code
// costs the host time to validate at every start.
var toolKinds = [...]struct{ name, kind string }{
	{"bash", "execute"}, {"shell", "execute"}, {"powershell", "execute"}, {"read_bash", "execute"},
	{"write_bash", "execute"}, {"stop_bash", "execute"}, {"local_shell", "execute"}, {"view", "read"},
	{"read", "read"}, {"read_file", "read"}, {"ls", "read"}, {"list_dir", "read"}, {"edit", "edit"},
	{"create", "edit"}, {"str_replace", "edit"}, {"str_replace_editor", "edit"}, {"write", "edit"},
	{"apply_patch", "edit"}, {"grep", "search"}, {"glob", "search"}, {"search", "search"}, {"rg", "search"},
	{"web_fetch", "fetch"}, {"fetch", "fetch"}, {"web_search", "fetch"}, {"report_intent", "think"},
	{"think", "think"}, {"update_todo", "think"}, {"todo_write", "think"},
}
