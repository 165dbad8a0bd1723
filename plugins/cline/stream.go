package cline

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtJSON is the format of the Cline CLI's --json output: one JSON object
// per line, each a ClineMessage as the task's UI shows it. Two envelopes:
// the structured output (schemaVersion 1: events start, message,
// complete and error, a message's ClineMessage fields spread into it) and
// the earlier one ({"type":"task_started","taskId"}, then the bare
// ClineMessages, {"type":"error","message"} on failure).
const fmtJSON = "json"

// isStreamLine tells a line of the CLI's --json output.
func isStreamLine(v abi.Value) bool {
	if v.Kind() != abi.KindObject {
		return false
	}
	if v.Get("schemaVersion").Exists() && v.Get("event").Kind() == abi.KindString {
		return true
	}
	if v.Get("type").Is("task_started") && v.Get("taskId").Exists() {
		return true
	}
	return (v.Get("type").Is("say") || v.Get("type").Is("ask")) && v.Get("ts").Exists()
}

// streamLine maps a line of the CLI's --json output.
func (n *normalizer) streamLine(v abi.Value, out *sdk.Out) {
	if !n.stream {
		n.stream = true
		n.sawTask = true
	}
	if ev := v.Get("event"); ev.Kind() == abi.KindString && v.Get("schemaVersion").Exists() {
		n.structured = true
		switch sdk.Name(ev) {
		case "start":
			n.streamSession(v.Get("taskId"), out)
		case "message":
			n.streamMessage(v, out)
		case "complete":
			n.streamComplete(v, out)
		case "error":
			msg := v.Get("message").String()
			if msg == "" {
				msg = "the Cline CLI failed (status " + sdk.Name(v.Get("status")) + ")"
			}
			out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.Opt(strings.Clone(sdk.Name(v.Get("status"))))})
			n.streamEnd(v.Get("status"), sdk.S(msg), out)
		default:
			out.Unmapped(sdk.S("event/" + sdk.TypeName(ev)))
		}
		return
	}
	switch {
	case v.Get("type").Is("task_started"):
		n.streamSession(v.Get("taskId"), out)
	case v.Get("type").Is("error"):
		msg := v.Get("message").String()
		if msg == "" {
			msg = "error"
		}
		out.Error(sdk.ProviderError{Message: sdk.S(msg)})
	default:
		n.streamMessage(v, out)
	}
}

// streamSession reports the task id, the session, once.
func (n *normalizer) streamSession(id abi.Value, out *sdk.Out) {
	if s := sdk.Name(id); s != "" && n.taskID == "" {
		n.taskID = strings.Clone(s)
		out.Meta(sdk.Meta{SessionID: sdk.S(n.taskID)})
		return
	}
	out.Ignored(sdk.S("task_started"))
}

// streamComplete is the structured output's terminal event: its status
// (success, error, timeout, aborted) and exit code decide the step's.
func (n *normalizer) streamComplete(v abi.Value, out *sdk.Out) {
	status := v.Get("status")
	var msg sdk.Str
	if !status.Is("success") {
		e := v.Get("error").String()
		if e == "" {
			e = v.Get("text").String()
		}
		if e == "" {
			e = "the task ended with status " + sdk.Name(status)
			if c, ok := v.Get("exitCode").Int(); ok {
				e += " (exit code " + strconv.FormatInt(c, 10) + ")"
			}
		}
		msg = sdk.S(e)
	} else if r := v.Get("result"); r.Kind() == abi.KindString && !r.Is("") {
		out.Final(sdk.S(completionText(r.String())), true)
	}
	n.streamEnd(status, msg, out)
}

// streamEnd reports the terminal status of a structured output's
// complete or error event: success ok, timeout and aborted (the task
// stopped before it finished) incomplete, anything else an error.
func (n *normalizer) streamEnd(status abi.Value, msg sdk.Str, out *sdk.Out) {
	switch sdk.Name(status) {
	case "success":
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	case "timeout", "aborted":
		out.Status(sdk.StatusIncomplete, msg, sdk.LevelTerminal)
	default:
		out.Status(sdk.StatusError, msg, sdk.LevelTerminal)
	}
}

// streamMessage maps one ClineMessage of the stream. The CLI writes each
// message once, when it is whole (a partial one, should one come, is
// repeated whole later; one of a ts written before is that message
// again: streamAgain); api_req_started only with --verbose, and as it
// was when the request started, so its figures are usually not there:
// the step's usage is then unknown, never 0.
func (n *normalizer) streamMessage(m abi.Value, out *sdk.Out) {
	if m.Get("partial").Truthy() {
		out.Ignored(sdk.S("partial"))
		return
	}
	n.streamTs = 0
	if ts, ok := m.Get("ts").Int(); ok && ts > 0 {
		if id, seen := n.streamSeen[ts]; seen && !usageMessage(uiKind(m)) {
			n.streamAgain(m, id, out)
			return
		}
		if n.streamSeen == nil {
			n.streamSeen = map[int64]string{}
		}
		n.streamSeen[ts], n.streamTs = "", ts
	}
	first := n.streamMsgs == 0
	n.streamMsgs++
	// The call of the message before, when it showed a tool's use: a
	// say error right after it is that tool's failure.
	prevTool := n.lastTool
	n.lastTool = pendingCall{}
	out.LatestModel(m.Get("modelInfo").Get("modelId"), &n.model)
	ts := msTime(m.Get("ts"))
	text := m.Get("text")
	key := sdk.S("ui" + strconv.Itoa(n.streamMsgs))
	kind := sdk.Name(m.Get("say"))
	if m.Get("type").Is("ask") {
		kind = "ask:" + sdk.Name(m.Get("ask"))
	}
	// The task's first message is the user's task, as "text" (the
	// structured output calls it role user).
	if n.conversationMessage(kind, m.Get("role").Is("user") || (first && !m.Get("role").Exists()), key, text, ts, out) {
		return
	}
	switch kind {
	case "completion_result":
		t := completionText(text.String())
		if strings.TrimSpace(t) == "" {
			out.Ignored(sdk.S("completion_result"))
			return
		}
		oneBlock(key, sdk.Message{Time: ts}, sdk.Block{Type: sdk.BlockText, Text: sdk.S(t)}, out)
		out.Final(sdk.S(t), true)
	case "tool", "ask:tool":
		n.streamTool(key, text, ts, out)
	case "command", "ask:command":
		cmd := strings.TrimSuffix(text.String(), "REQ_APP")
		n.lastCommand = n.streamCall(key, sdk.ToolCall{Name: sdk.S("execute_command"), Input: sdk.RawJSON(`{"command":` + quoteJSON(cmd) + `}`),
			Kind: "execute", Command: sdk.S(cmd), Time: ts}, out)
	case "command_output", "ask:command_output":
		// The command's output as the terminal showed it, with no exit
		// status: the raw capture keeps it (End says so).
		n.outputs++
		out.Ignored(sdk.S("command_output"))
	case "command_permission_denied":
		if n.lastCommand != "" {
			out.ToolResult(sdk.ToolResult{CallID: sdk.S(n.lastCommand), Name: sdk.S("execute_command"), Status: sdk.S("denied"),
				Error: sdk.S(orText(text.String(), "the command was denied by Cline's command permissions")), Time: ts})
			n.lastCommand = ""
			n.calls-- // answered
			return
		}
		out.Warn("Cline denied a command: " + clip(text.String()))
	case "use_mcp_server", "ask:use_mcp_server":
		n.streamMCP(key, text, ts, out)
	case "api_req_started", "api_req_finished":
		if n.apiRequest(m, -n.streamMsgs, nil, false, out) == 0 {
			out.Ignored(sdk.S(kind))
		}
	case "subagent_usage":
		if n.subagentUsage(m, out) == 0 {
			out.Ignored(sdk.S(kind))
		}
	case "deleted_api_reqs":
		// The stream does not say which message the restore went back
		// to: every request whose figures it printed before is taken as
		// one of those cut away (deletedRequests).
		if n.deletedRequests(m, abi.Value{}, false, out) == 0 {
			out.Ignored(sdk.S(kind))
		}
	case "error", "ask:api_req_failed", "ask:mistake_limit_reached":
		code := strings.TrimPrefix(kind, "ask:")
		msg := errorText(text.String())
		if code == "error" && prevTool.id != "" {
			// The tool's failure (Cline's and Roo Code's handleError):
			// the call's result, no error of the provider.
			out.ToolResult(sdk.ToolResult{CallID: sdk.S(prevTool.id), Name: sdk.S(prevTool.name), Status: sdk.S("error"),
				Error: sdk.S(orText(msg, "the tool failed")), Time: ts})
			n.calls-- // answered
			return
		}
		if code == "api_req_failed" {
			var same bool
			if msg, code, same = n.failedAgain(msg, code); same {
				out.Ignored(sdk.S("api_req_failed (the request's streaming_failed, reported with it)"))
				return
			}
		}
		out.Error(sdk.ProviderError{Message: sdk.S(orText(msg, code)), Code: sdk.S(code)})
	case "error_retry", "api_req_retry_delayed":
		out.Warn("the API request failed and was retried: " + clip(text.String()))
		if msg, ok := n.retryFailure(kind == "error_retry", text.String()); ok {
			out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(kind)})
		}
	case "diff_error", "clineignore_error":
		out.Warn("Cline: " + kind + ": " + clip(text.String()))
	case "checkpoint_created", "task_progress", "api_req_retried", "info", "hook_status", "hook_output_stream",
		"shell_integration_warning", "shell_integration_warning_with_suggestion", "conditional_rules_applied",
		"load_mcp_documentation", "generate_explanation", "mcp_server_request_started",
		"mcp_server_response", "mcp_notification", "browser_action_result", "subagent",
		"ask:resume_task", "ask:resume_completed_task", "ask:completion_result", "ask:condense", "ask:summarize_task",
		"ask:report_bug", "ask:new_task":
		// The screen's furniture, an answer the stream does not state
		// (MCP and browser results, with no status), or a question the
		// CLI put to the user.
		out.Ignored(sdk.S(kind))
	default:
		out.Unmapped(sdk.S("ui/" + kind))
	}
}

// usageMessage says whether a UI message of kind (uiKind) states usage:
// one read again is mapped as ever (a request is counted once, when it
// first states its figures: apiRequest).
func usageMessage(kind string) bool {
	switch kind {
	case "api_req_started", "api_req_finished", "subagent_usage", "deleted_api_reqs":
		return true
	}
	return false
}

// streamAgain maps a message of a ts the stream wrote before: Cline
// keeps a message's ts when it changes it in place, so it is a version
// of that message. The CLI's writer prints each ts once
// (plain-text-task.ts, processedMessages); should a stream print one
// again, a tool's use (id: its call) is a version of that call, written
// revised (ABI 1.13: counted once, with its latest input), and anything
// else but a request's usage (usageMessage) a repeat, passed over.
func (n *normalizer) streamAgain(m abi.Value, id string, out *sdk.Out) {
	var c sdk.ToolCall
	ok := false
	text := m.Get("text")
	switch uiKind(m) {
	case "tool", "ask:tool":
		c, ok = uiToolCall(text)
	case "use_mcp_server", "ask:use_mcp_server":
		c, ok = uiMCPCall(text)
	case "command", "ask:command":
		cmd := strings.TrimSuffix(text.String(), "REQ_APP")
		c = sdk.ToolCall{Name: sdk.S("execute_command"), Input: sdk.RawJSON(`{"command":` + quoteJSON(cmd) + `}`), Kind: "execute", Command: sdk.S(cmd)}
		ok = true
	}
	if id == "" || !ok {
		out.Ignored(sdk.S("a message written again (its ts read before)"))
		return
	}
	c.CallID, c.Time, c.Revised = sdk.S(id), msTime(m.Get("ts")), true
	out.ToolCall(c)
}

// conversationMessage writes a UI message that is a prompt (the task,
// the user's feedback; a text when userText) or one of the model's
// messages (a text, reasoning, a question or plan-mode answer:
// {question|response, options}), and reports whether kind is one.
func (n *normalizer) conversationMessage(kind string, userText bool, key sdk.Str, text abi.Value, ts sdk.Str, out *sdk.Out) bool {
	switch kind {
	case "task", "user_feedback", "user_feedback_diff":
		n.streamPrompt(key, text, ts, out)
	case "text":
		if userText {
			n.streamPrompt(key, text, ts, out)
			break
		}
		n.streamAssistant(key, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)}, text, ts, out)
	case "reasoning":
		n.streamAssistant(key, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(text)}, text, ts, out)
	case "ask:followup", "ask:plan_mode_respond", "ask:act_mode_respond":
		n.streamAssistant(key, sdk.Block{Type: sdk.BlockText, Text: sdk.S(questionText(text.String()))}, text, ts, out)
	default:
		return false
	}
	return true
}

// streamPrompt writes a user message of the stream.
func (n *normalizer) streamPrompt(key sdk.Str, text abi.Value, ts sdk.Str, out *sdk.Out) {
	if text.Kind() != abi.KindString || strings.TrimSpace(text.String()) == "" {
		out.Ignored(sdk.S("empty prompt"))
		return
	}
	oneBlock(key, sdk.Message{User: true, ID: n.uiID(key), Time: ts}, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text), Origin: sdk.OriginPrompt}, out)
}

// uiID is the id of message key when it is of the UI's conversation
// (uiConversation: its key), else none.
func (n *normalizer) uiID(key sdk.Str) sdk.Str {
	if n.uiWriting {
		return key
	}
	return sdk.Str{}
}

// streamAssistant writes an assistant message of one block.
func (n *normalizer) streamAssistant(key sdk.Str, b sdk.Block, text abi.Value, ts sdk.Str, out *sdk.Out) {
	if text.Kind() != abi.KindString || text.Is("") {
		out.Ignored(sdk.S("empty message"))
		return
	}
	oneBlock(key, sdk.Message{ID: n.uiID(key), Time: ts}, b, out)
}

// oneBlock writes message key of header m and the one block b.
func oneBlock(key sdk.Str, m sdk.Message, b sdk.Block, out *sdk.Out) {
	out.Open(key, m)
	out.Block(key, -1, b)
	out.Close(key, sdk.MessageEnd{})
}

// streamCall writes tool call c as the model's message key: its tool_use
// block and its tool.call, with the id of the stream's current message
// (cline-ui-<n>), which it returns. The call waits for a result the
// stream seldom states (streamDone counts it).
func (n *normalizer) streamCall(key sdk.Str, c sdk.ToolCall, out *sdk.Out) string {
	id := "cline-ui-" + strconv.Itoa(n.streamMsgs)
	c.CallID = sdk.S(id)
	if n.streamTs != 0 {
		n.streamSeen[n.streamTs] = id
	}
	out.Open(key, sdk.Message{Time: c.Time})
	out.ToolUse(key, -1, c)
	out.Close(key, sdk.MessageEnd{})
	n.calls++
	return id
}

// streamTool writes a file, search or web tool the UI shows. Its outcome
// is not in the stream.
func (n *normalizer) streamTool(key sdk.Str, text abi.Value, ts sdk.Str, out *sdk.Out) {
	c, ok := uiToolCall(text)
	if !ok {
		out.Warn("Cline showed a tool use that is not a JSON object naming its tool: " + clip(text.String()))
		return
	}
	c.Time = ts
	n.lastTool = pendingCall{id: n.streamCall(key, c, out), name: c.Name.String()}
}

// streamMCP writes an MCP tool call or resource access the UI shows.
func (n *normalizer) streamMCP(key sdk.Str, text abi.Value, ts sdk.Str, out *sdk.Out) {
	c, ok := uiMCPCall(text)
	if !ok {
		out.Warn("Cline showed an MCP server use that is not a JSON object: " + clip(text.String()))
		return
	}
	c.Time = ts
	n.lastTool = pendingCall{id: n.streamCall(key, c, out), name: c.Name.String()}
}

// uiToolCall is the call of a file, search or web tool the UI shows
// (ClineSayTool: {tool, path, content, diff, regex, filePattern}): named
// as the UI names it, its input the UI's object.
func uiToolCall(text abi.Value) (sdk.ToolCall, bool) {
	doc, ok := sdk.ParseText(text)
	if !ok || doc.Root().Get("tool").Kind() != abi.KindString {
		return sdk.ToolCall{}, false
	}
	r := doc.Root()
	name := strings.Clone(sdk.Name(r.Get("tool")))
	return sdk.ToolCall{Name: sdk.S(name), Input: sdk.RawJSON(string(r.Raw())), Kind: uiKindOf(name)}, true
}

// uiMCPCall is an MCP tool call or resource access the UI shows
// (ClineAskUseMcpServer: {serverName, type, toolName, arguments, uri}).
func uiMCPCall(text abi.Value) (sdk.ToolCall, bool) {
	doc, ok := sdk.ParseText(text)
	if !ok {
		return sdk.ToolCall{}, false
	}
	r := doc.Root()
	name := strings.Clone(sdk.Name(r.Get("toolName")))
	kind := "other"
	if r.Get("type").Is("access_mcp_resource") {
		name, kind = "access_mcp_resource", "read"
	}
	if name == "" {
		name = "use_mcp_tool"
	}
	return sdk.ToolCall{Name: sdk.S(name), Input: sdk.RawJSON(string(r.Raw())), Kind: kind}, true
}

// streamDone ends a stream: what the format could not say, said once
// (calls counts the calls still without a result).
func (n *normalizer) streamDone(out *sdk.Out) {
	if n.calls > 0 {
		s := "the Cline CLI's --json output states no tool results: the " + strconv.Itoa(n.calls) + " tool call(s) have none (the task's folder under ~/.cline/data/tasks holds them: twasm sync archives it)"
		if n.outputs > 0 {
			s += "; " + strconv.Itoa(n.outputs) + " command output(s), shown without an exit status, are kept in the raw capture"
		}
		out.Warn(s)
	}
	out.Meta(sdk.Meta{Format: sdk.S(fmtJSON), NoTerminal: !n.structured})
}

// uiKindOf classifies the tools as the UI names them (ClineSayTool.tool).
func uiKindOf(name string) string {
	switch name {
	case "readFile", "listFilesTopLevel", "listFilesRecursive", "listCodeDefinitionNames":
		return "read"
	case "editedExistingFile", "newFileCreated", "fileDeleted":
		return "edit"
	case "searchFiles":
		return "search"
	case "webFetch", "webSearch":
		return "fetch"
	}
	return "other"
}

// completionText is a completion's text without the flag Cline appends
// to the last one when the task changed files ("HAS_CHANGES", for its
// "see new changes" button): the flag is not the model's.
func completionText(s string) string { return strings.TrimSuffix(s, "HAS_CHANGES") }

// errorText is the message of an error the UI shows as a JSON object
// ({"message": ...}, as api_req_failed's), else the text.
func errorText(s string) string { return memberText(s, "message") }

// memberText is the string member key of s when s is a JSON object
// holding a non-empty one, else s.
func memberText(s, key string) string {
	if strings.HasPrefix(s, "{") {
		if doc, ok := sdk.Parse([]byte(s)); ok {
			if m := doc.Root().Get(key); m.Kind() == abi.KindString && !m.Is("") {
				return strings.Clone(m.String())
			}
		}
	}
	return s
}

// orText is s, or alt when s is empty.
func orText(s, alt string) string {
	if strings.TrimSpace(s) == "" {
		return alt
	}
	return s
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string { return string(appendQuoted(nil, s)) }
