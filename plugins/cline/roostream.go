package cline

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtRooStream is the format of Roo Code's CLI with --output-format
// stream-json (RooCliStreamEvent in @roo-code/types, written by the
// CLI's JsonEventEmitter): one JSON object per line, the first
// {"type":"system","subtype":"init","protocol":"roo-cli-stream",...}.
// doc.go, "Format roo-stream-json", says what each line maps to.
const fmtRooStream = "roo-stream-json"

// fmtRooJSON is the format of Roo Code's CLI with --output-format json:
// one document, pretty-printed, written when the task completes
// ({"type":"result","success","content","cost","events":[...]}, the
// events those of stream-json, each whole).
const fmtRooJSON = "roo-json"

// isRooStreamLine tells the first line of Roo Code's CLI stream-json
// output (its system init, naming the protocol), the document of its
// json output, or the error line either prints when the CLI fails before
// anything else ({"type":"error","id":<epoch ms>,"content"}).
func isRooStreamLine(v abi.Value) bool {
	if v.Kind() != abi.KindObject {
		return false
	}
	switch sdk.Name(v.Get("type")) {
	case "system":
		return v.Get("subtype").Is("init") &&
			(v.Get("protocol").Is("roo-cli-stream") || v.Get("capabilities").Kind() == abi.KindArray && v.Get("schemaVersion").Exists())
	case "result":
		return v.Get("events").Kind() == abi.KindArray && v.Get("success").Exists()
	case "error":
		return v.Get("id").Kind() == abi.KindNumber && v.Get("content").Kind() == abi.KindString && v.Len() == 3
	}
	return false
}

// rooCall is a tool use of the stream: its call id, name, and (for a
// command) the output read so far.
type rooCall struct {
	id, name string
	written  bool // its tool.call was reported (the tool_use was done)
	answered bool
	output   strings.Builder
	outputs  int // command output events read
}

// rooState is the state of a Roo stream.
type rooState struct {
	open      map[string]bool // messages (type+id) open, streaming
	calls     map[string]*rooCall
	order     []string // call ids in order
	lastText  string   // the model's last whole text
	results   int
	taskOpen  bool // a prompt came after the last result
	mcpOut    int
	costWarns int
	// lastTool is the call of the event read last, when it was a tool's
	// use shown whole (a file, search, web or MCP tool): an error event
	// right after it is that tool's failure.
	lastTool string
	// doc: the json output's document was read (its events each
	// whole: a command's output is the whole output so far, not a delta).
	doc bool
}

// rooLine maps a line of Roo Code's CLI stream-json output.
func (n *normalizer) rooLine(v abi.Value, out *sdk.Out) {
	if n.roo == nil {
		n.roo = &rooState{open: map[string]bool{}, calls: map[string]*rooCall{}}
		n.sawTask = true
	}
	r := n.roo
	if evs := v.Get("events"); v.Get("type").Is("result") && evs.Kind() == abi.KindArray {
		// The json output: the stream's events, then its result.
		r.doc = true
		it := evs.Iter()
		for it.Next() {
			if e := it.Value(); e.Kind() == abi.KindObject {
				n.rooEvent(e, out)
			}
		}
		n.rooResult(v, out)
		return
	}
	n.rooEvent(v, out)
}

// rooEvent maps one event of Roo Code's CLI output.
func (n *normalizer) rooEvent(v abi.Value, out *sdk.Out) {
	r := n.roo
	if t := v.Get("taskId"); t.Kind() == abi.KindString && !t.Is("") {
		out.Meta(sdk.Meta{SessionID: sdk.Text(t)})
	}
	id := rooID(v.Get("id"))
	done := v.Get("done").Truthy()
	typ := sdk.Name(v.Get("type"))
	prevTool := r.lastTool
	r.lastTool = ""
	switch typ {
	case "system":
		if v.Get("subtype").Is("init") {
			out.Ignored(sdk.S("system/init"))
			return
		}
		out.Unmapped(sdk.S("system/" + sdk.TypeName(v.Get("subtype"))))
	case "control":
		switch sdk.Name(v.Get("subtype")) {
		case "done":
			if v.Get("command").Is("start") {
				n.rooTaskDone(v, out)
				return
			}
			out.Ignored(sdk.S("control/done"))
		case "ack":
			out.Ignored(sdk.S("control/ack"))
		case "error":
			out.Error(sdk.ProviderError{Message: sdk.S(orText(v.Get("content").String(), "the Roo CLI refused a command")), Code: sdk.Opt(v.Get("code").String())})
		default:
			out.Unmapped(sdk.S("control/" + sdk.TypeName(v.Get("subtype"))))
		}
	case "queue":
		// The CLI's queue of prompts waiting (stdin prompt stream).
		out.Ignored(sdk.S("queue/" + sdk.TypeName(v.Get("subtype"))))
	case "user":
		if done && r.results > 0 && !r.taskOpen {
			// A new task (or a message to the finished one) after the
			// last result: until its own result, it has not finished.
			out.Status(sdk.StatusIncomplete, sdk.S("a new task started and did not finish"), sdk.LevelTerminal)
		}
		if done {
			r.taskOpen = true
		}
		n.rooText(v, "user"+id, true, sdk.BlockText, done, out)
	case "thinking":
		n.rooText(v, "thinking"+id, false, sdk.BlockThinking, done, out)
	case "assistant":
		n.rooAssistant(v, id, done, out)
	case "tool_use":
		n.rooToolUse(v, id, done, out)
	case "tool_result":
		n.rooToolResult(v, id, done, out)
	case "error":
		if c := r.calls[prevTool]; c != nil && !c.answered {
			n.rooToolFailed(c, v, out)
			return
		}
		out.Error(sdk.ProviderError{Message: sdk.S(orText(v.Get("content").String(), "error"))})
	case "result":
		n.rooResult(v, out)
	default:
		out.Unmapped(sdk.S("type/" + sdk.TypeName(v.Get("type"))))
	}
}

// rooID is an event's id (the ClineMessage's ts) as a string.
func rooID(v abi.Value) string {
	if n, ok := v.Int(); ok {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// rooText maps a streamed text: a partial event's content is a delta
// (appended), a done event's the whole text (it replaces the deltas).
func (n *normalizer) rooText(v abi.Value, key string, user bool, blockType string, done bool, out *sdk.Out) {
	r := n.roo
	content := sdk.StringOf(v.Get("content"))
	if !r.open[key] {
		if done && content.IsEmpty() {
			out.Ignored(sdk.S("empty message"))
			return
		}
		r.open[key] = true
		// The event's id is its ClineMessage's ts, epoch milliseconds.
		out.Open(sdk.S(key), sdk.Message{User: user, Time: msTime(v.Get("id"))})
	}
	switch {
	case !done:
		if content.IsEmpty() {
			out.Ignored(sdk.S("empty delta"))
			return
		}
		out.Append(sdk.S(key), 0, blockType, content)
		return
	case content.IsSet():
		b := sdk.Block{Type: blockType}
		if blockType == sdk.BlockThinking {
			b.Thinking = content
		} else {
			b.Text = content
		}
		if user {
			b.Origin = sdk.OriginPrompt
		}
		out.Block(sdk.S(key), 0, b)
		if !user && blockType == sdk.BlockText {
			r.lastText = content.String()
		}
	}
	delete(r.open, key)
	out.Close(sdk.S(key), sdk.MessageEnd{})
}

// rooAssistant maps an assistant event: the model's text (no subtype),
// its question to the user (followup), or another message the UI shows,
// subtyped by its ClineMessage say or ask: failures are provider errors
// or warnings, the rest the screen's.
func (n *normalizer) rooAssistant(v abi.Value, id string, done bool, out *sdk.Out) {
	sub := sdk.Name(v.Get("subtype"))
	if sub == "" {
		n.rooText(v, "assistant"+id, false, sdk.BlockText, done, out)
		return
	}
	if !done {
		// A subtyped message is read when whole.
		out.Ignored(sdk.S("assistant/" + sdk.TypeName(v.Get("subtype")) + " (partial)"))
		return
	}
	text := v.Get("content").String()
	switch sub {
	case "followup":
		t := text
		if doc, ok := sdk.Parse([]byte(text)); ok {
			if q := doc.Root().Get("question"); q.Kind() == abi.KindString {
				t = q.String()
			}
		}
		if strings.TrimSpace(t) == "" {
			out.Ignored(sdk.S("assistant/followup (empty)"))
			return
		}
		oneBlock(sdk.S("assistant"+id), sdk.Message{Time: msTime(v.Get("id"))}, sdk.Block{Type: sdk.BlockText, Text: sdk.S(t)}, out)
		n.roo.lastText = t
	case "api_req_failed", "mistake_limit_reached":
		out.Error(sdk.ProviderError{Message: sdk.S(orText(errorText(text), sub)), Code: sdk.S(strings.Clone(sub))})
	case "diff_error", "rooignore_error", "auto_approval_max_req_reached", "too_many_tools_warning", "shell_integration_warning":
		out.Warn("Roo Code: " + sub + ": " + clip(text))
	case "tool":
		// A tool the UI shows as said, not asked: a call.
		n.rooToolUse(v, id, true, out)
	case "subtask_result", "codebase_search_result", "mcp_server_request_started", "browser_action", "browser_action_result",
		"browser_session_status", "browser_action_launch", "image", "user_edit_todos", "resume_task", "resume_completed_task",
		"command", "reasoning", "checkpoint_saved", "api_req_retried", "condense_context", "sliding_window_truncation", "new_task_started":
		// The screen's copy of what other events state, or furniture.
		out.Ignored(sdk.S("assistant/" + sdk.TypeName(v.Get("subtype"))))
	default:
		out.Unmapped(sdk.S("assistant/" + sdk.TypeName(v.Get("subtype"))))
	}
}

// rooToolUse maps a tool_use: its partial events stream the input (the
// call is reported when it is whole), the done one is the call.
func (n *normalizer) rooToolUse(v abi.Value, id string, done bool, out *sdk.Out) {
	r := n.roo
	tu := v.Get("tool_use")
	name := sdk.View(tu.Get("name"))
	sub := sdk.Name(v.Get("subtype"))
	if id == "" {
		id = strconv.Itoa(len(r.order))
	}
	callID := "roo-" + id
	c := r.calls[callID]
	if c == nil {
		c = &rooCall{id: callID, name: strings.Clone(orText(name, "unknown_tool"))}
		r.calls[callID] = c
		r.order = append(r.order, callID)
	}
	if !done {
		out.Ignored(sdk.S("tool_use (partial)"))
		return
	}
	// The CLI writes a message whole once (seenMessageIds); a tool use
	// done again is a version of the call, changed in place (its id the
	// message's ts): written revised, its latest input counted.
	revised := c.written
	if sub != "command" {
		r.lastTool = callID
	}
	if name != "" {
		// A partial event's input may not have parsed yet ("unknown_tool").
		c.name = strings.Clone(name)
	}
	input := tu.Get("input")
	ts := msTime(v.Get("id"))
	call := sdk.ToolCall{CallID: sdk.S(callID), Name: sdk.S(c.name), Kind: "other", Time: ts}
	switch {
	case sub == "command":
		call.Kind = "execute"
		call.Command = sdk.StringOf(input.Get("command"))
		call.Input = sdk.JSON(input)
	case sub == "mcp":
		// {"raw": the UI's ClineAskUseMcpServer as JSON text}.
		raw := input.Get("raw").String()
		if doc, ok := sdk.Parse([]byte(raw)); ok && doc.Root().Kind() == abi.KindObject {
			m := doc.Root()
			c.name = "use_mcp_tool"
			if t := m.Get("toolName"); t.Kind() == abi.KindString && !t.Is("") {
				c.name = t.String()
			} else if m.Get("type").Is("access_mcp_resource") {
				c.name, call.Kind = "access_mcp_resource", "read"
			}
			call.Name, call.Input = sdk.S(c.name), sdk.RawJSON(strings.Clone(raw))
		} else {
			call.Input = sdk.JSON(input)
		}
	case v.Get("type").Is("assistant"):
		// say tool: the content is the UI's tool object.
		doc, ok := sdk.ParseText(v.Get("content"))
		if !ok || doc.Root().Get("tool").Kind() != abi.KindString {
			out.Warn("Roo Code showed a tool use that is not a JSON object naming its tool: " + clip(v.Get("content").String()))
			return
		}
		c.name = doc.Root().Get("tool").String()
		call.Name, call.Input, call.Kind = sdk.S(c.name), sdk.RawJSON(string(doc.Root().Raw())), rooKindOf(c.name)
	default:
		call.Kind = rooKindOf(c.name)
		call.Input = sdk.JSON(input)
	}
	if revised {
		call.Revised = true
		out.ToolCall(call)
		return
	}
	c.written = true
	key := sdk.S("tool" + id)
	out.Open(key, sdk.Message{Time: ts})
	out.ToolUse(key, -1, call)
	out.Close(key, sdk.MessageEnd{})
}

// rooToolFailed maps the error event right after a tool's use shown
// whole (say error: Roo Code's handleError, its tools' own checks): that
// call's result, an error. After a use whose input was still streaming
// the error is not known to be the tool's (the CLI's own error event,
// emitted when it fails, may come then): it stays a provider error.
func (n *normalizer) rooToolFailed(c *rooCall, v abi.Value, out *sdk.Out) {
	ts := msTime(v.Get("id"))
	c.answered = true
	out.ToolResult(sdk.ToolResult{CallID: sdk.S(c.id), Name: sdk.S(c.name), Status: sdk.S("error"),
		Error: sdk.S(orText(v.Get("content").String(), "the tool failed")), Time: ts})
}

// rooToolResult maps a tool_result: a command's output, streamed by
// delta, and on its done event its exit code where the CLI learned it;
// or an MCP server's response (no id, no status).
func (n *normalizer) rooToolResult(v abi.Value, id string, done bool, out *sdk.Out) {
	r := n.roo
	if v.Get("subtype").Is("mcp") {
		// The response of the MCP call the UI showed last, with no
		// status: kept in the raw capture (End says so).
		r.mcpOut++
		out.Ignored(sdk.S("tool_result/mcp"))
		return
	}
	c := r.calls["roo-"+id]
	if c == nil || id == "" {
		out.Warn("Roo Code reported a tool result for no tool use it showed (id " + orText(id, "none") + ")")
		return
	}
	tr := v.Get("tool_result")
	if r.doc && tr.Get("output").Exists() {
		// The json output's events carry the whole output so far.
		c.output.Reset()
	}
	c.output.WriteString(tr.Get("output").String())
	c.outputs++
	if !done {
		out.Ignored(sdk.S("tool_result (partial)"))
		return
	}
	code := sdk.IntOf(tr.Get("exitCode"))
	e := tr.Get("error").String()
	ec, hasCode := code.Value()
	if !hasCode && e == "" {
		// The command ended without an exit code the CLI learned (its
		// fallback after the shell said it exited): the outcome is not
		// stated; the call stays without a result, its output in the
		// raw capture.
		out.Ignored(sdk.S("tool_result (no exit code)"))
		return
	}
	res := sdk.ToolResult{CallID: sdk.S(c.id), Name: sdk.S(c.name), Output: sdk.S(c.output.String()), ExitCode: code, Status: sdk.S("ok")}
	if e != "" || ec != 0 {
		res.Status = sdk.S("error")
		res.Error = sdk.S(orText(e, "the command exited with code "+strconv.FormatInt(ec, 10)))
	}
	c.answered = true
	c.output.Reset()
	out.ToolResult(res)
}

// rooResult maps the result of a task: its success, its final text
// (written as the model's message unless it was the last text written),
// and the cost of the last API request (not the task's: said in a
// warning).
func (n *normalizer) rooResult(v abi.Value, out *sdk.Out) {
	r := n.roo
	r.results++
	r.taskOpen = false
	content := v.Get("content").String()
	if strings.TrimSpace(content) != "" && content != r.lastText {
		oneBlock(sdk.S("result"+strconv.Itoa(r.results)), sdk.Message{Time: msTime(v.Get("id"))}, sdk.Block{Type: sdk.BlockText, Text: sdk.S(content)}, out)
		r.lastText = content
	}
	if strings.TrimSpace(content) != "" {
		out.Final(sdk.S(content), true)
	}
	if v.Get("success").Kind() == abi.KindFalse {
		out.Status(sdk.StatusError, sdk.S("the task did not complete successfully"), sdk.LevelTerminal)
	} else {
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	}
	if c := v.Get("cost"); c.Kind() == abi.KindObject && r.costWarns == 0 {
		r.costWarns++
		out.Warn("Roo Code's CLI output states the figures of the task's last API request only (result.cost: " + clip(members(c)) + "), not the task's: the step has no usage from it (the task's folder holds every request's: twasm sync archives it)")
	}
}

// rooTaskDone maps the end of a task started by a start command (the
// stdin prompt stream's control done): task_completed is ok, a task
// cancelled (task_aborted) incomplete, a task that failed an error.
func (n *normalizer) rooTaskDone(v abi.Value, out *sdk.Out) {
	n.roo.taskOpen = false
	msg := sdk.S(orText(v.Get("content").String(), sdk.TypeName(v.Get("code"))))
	switch {
	case v.Get("code").Is("task_completed") || v.Get("success").Truthy():
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	case v.Get("code").Is("task_aborted"):
		out.Status(sdk.StatusIncomplete, msg, sdk.LevelTerminal)
	default:
		out.Status(sdk.StatusError, msg, sdk.LevelTerminal)
	}
}

// members is object v's members as "key value, ..." on one line.
func members(v abi.Value) string {
	var b strings.Builder
	it := v.Iter()
	for it.Next() {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it.Key().String() + " " + string(it.Value().Raw()))
	}
	return b.String()
}

// rooEnd ends a Roo stream: what the format could not say, said once.
func (n *normalizer) rooEnd(out *sdk.Out) {
	r := n.roo
	waiting := 0
	for _, id := range r.order {
		c := r.calls[id]
		if !c.written {
			// Cut off while its input streamed (spec 6.12): a call, dangling.
			out.ToolCall(sdk.ToolCall{CallID: sdk.S(c.id), Name: sdk.S(c.name), Kind: rooKindOf(c.name)})
		}
		if !c.answered {
			waiting++
		}
	}
	if waiting > 0 {
		s := "Roo Code's CLI output states a tool's outcome only for a command whose exit code the CLI learned: " + strconv.Itoa(waiting) + " tool call(s) have no result (the task's folder holds them: twasm sync archives it)"
		if r.mcpOut > 0 {
			s += "; " + strconv.Itoa(r.mcpOut) + " MCP server response(s), shown without a status, are kept in the raw capture"
		}
		out.Warn(s)
	}
	f := fmtRooStream
	if r.doc {
		f = fmtRooJSON
	}
	out.Meta(sdk.Meta{Format: sdk.S(f)})
}

// rooKindOf classifies the tools as Roo Code's UI names them.
func rooKindOf(name string) string {
	switch name {
	case "execute_command":
		return "execute"
	case "appliedDiff", "insertContent", "searchAndReplace", "applyPatch", "editFile":
		return "edit"
	case "codebaseSearch":
		return "search"
	case "readCommandOutput":
		return "read"
	case "updateTodoList":
		return "think"
	}
	return uiKindOf(name)
}
