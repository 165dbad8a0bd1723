package kimi

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// legacy handles one Kimi CLI wire record, {timestamp, message: {type,
// payload}}, of the session (scope "") or, inside a SubagentEvent, of a
// sub-agent (scope: the id of the Agent call that started it).
func (n *normalizer) legacy(typ string, p abi.Value, ts stamp, scope string, out *sdk.Out) {
	if scope == "" {
		switch typ {
		case "TurnBegin", "SteerInput", "StepBegin", "ContentPart", "ToolCall":
			n.repeatStop = false // the model went on, or a new turn began
		}
	}
	switch typ {
	case "TurnBegin", "SteerInput":
		n.closeAll(out)
		if typ == "TurnBegin" {
			if scope == "" {
				n.turnOpen = true
				n.slashTurn = slashCommand(p.Get("user_input"))
			}
			if n.unstepped == nil {
				n.unstepped = map[string]bool{}
			}
			n.unstepped[scope] = true
		}
		if !n.user(p.Get("user_input"), sdk.OriginPrompt, scope, ts, out) {
			out.Ignored(sdk.S(typ))
		}
	case "StepBegin":
		delete(n.unstepped, scope)
		n.close(scope, out)
		out.Ignored(sdk.S(typ))
	case "ContentPart":
		// len first: TinyGo hashes the key even to look up an empty map.
		if len(n.unstepped) > 0 && n.unstepped[scope] && p.Get("type").Is("text") {
			// Text before any model call of the turn is the CLI's own
			// (kimisoul.py: a prompt a hook blocked, an unknown slash
			// command, a slash command's output): not the model's.
			if scope == "" && (n.blocked || !n.slashTurn) {
				n.promptBlocked(p.Get("text"), out)
				return
			}
			out.Warn("kimi: the CLI said, no model call: " + sdk.Clip(sdk.View(p.Get("text")), 300))
			return
		}
		if len(n.unstepped) > 0 {
			delete(n.unstepped, scope) // the model's: a log without StepBegin
		}
		n.legacyPart(p, ts, scope, out)
	case "ToolCall":
		delete(n.unstepped, scope)
		fn := p.Get("function")
		n.toolCall(scope, sdk.View(p.Get("id")), sdk.View(fn.Get("name")), argsText(fn.Get("arguments")), ts, false, out)
	case "ToolCallPart":
		if !n.growCall(scope, p.Get("arguments_part"), out) {
			out.Ignored(sdk.S(typ))
		}
	case "ToolResult":
		rv := p.Get("return_value")
		if scope == "" {
			n.repeatStop = deadEnd(rv.Get("output"))
		}
		n.result(scope, sdk.View(p.Get("tool_call_id")), rv.Get("output"), rv.Get("is_error").Truthy(), rv.Get("message"), hookRefusal(rv.Get("display")), ts, out)
	case "StatusUpdate":
		u, ok := usageOf(p.Get("token_usage"))
		if !ok {
			out.Ignored(sdk.S(typ)) // context size, plan mode, MCP status
			return
		}
		// One step's usage, after its response: the message's.
		s := n.stepOf(scope, "", ts, out)
		s.usage, s.hasUsage = u, true
		if id := p.Get("message_id"); id.Kind() == abi.KindString && s.id == "" {
			s.id = id.String()
			out.Open(sdk.S(s.key), sdk.Message{ID: sdk.Text(id)})
		}
		n.close(scope, out)
	case "StepRetry":
		msg := "step retried after " + sdk.View(p.Get("error_type"))
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.Text(p.Get("status_code")), Scope: sdk.Opt(scope)})
	case "StepInterrupted":
		// Every Kimi CLI that logs its wire (0.59 on) sends it only when
		// the step raised an error (kimisoul.py: except Exception), the API
		// call's once its retries are spent; the user's interruption
		// (asyncio.CancelledError) sends none. The log does not state the
		// error.
		n.close(scope, out)
		out.Error(sdk.ProviderError{Message: sdk.S("kimi: the step failed (StepInterrupted: the agent stopped the turn on an error the log does not state)"), Scope: sdk.Opt(scope)})
	case "Notification":
		notification(p, scope, out)
	case "CompactionBegin", "CompactionEnd":
		out.Warn("kimi: the context was compacted (" + typ + ")")
	case "SubagentEvent":
		n.subagent(p, ts, scope, out)
	case "TurnEnd":
		if scope == "" {
			n.turnOpen = false
			n.blocked, n.hookBlock = false, ""
			if n.repeatStop {
				n.repeatStop = false
				out.Status(sdk.StatusError, sdk.S(repeatStopErr), sdk.LevelError)
			}
		}
		n.closeAll(out)
		out.Ignored(sdk.S(typ))
	case "HookResolved":
		// The wire server's (kimi --wire) decision of the hooks of an
		// event: a UserPromptSubmit one that blocks comes before the
		// TurnBegin of the prompt it blocked.
		if scope == "" && p.Get("event").Is("UserPromptSubmit") && p.Get("action").Is("block") {
			n.blocked, n.hookBlock = true, strings.Clone(p.Get("reason").String())
		}
		out.Ignored(sdk.S(typ))
	case "MCPLoadingBegin", "MCPLoadingEnd", "HookTriggered", "ApprovalRequest",
		"ApprovalResponse", "ApprovalRequestResolved", "QuestionRequest", "ToolCallRequest", "HookRequest",
		"PlanDisplay":
		// Turn bookkeeping, approvals (their outcome is the tool's
		// result), hooks.
		out.Ignored(sdk.S(typ))
	case "BtwBegin", "BtwEnd":
		n.sideQuestion(typ == "BtwEnd", p, ts, out)
	default:
		out.Unmapped(sdk.S(typ))
	}
}

// legacyPart handles a ContentPart: text and think deltas (the model's
// output streamed in pieces); media parts are not mapped.
func (n *normalizer) legacyPart(p abi.Value, ts stamp, scope string, out *sdk.Out) {
	// Each member looked up once: a Get walks the object's members.
	var body abi.Value
	switch t := p.Get("type"); {
	case t.Is("text"):
		body = p.Get("text")
		n.content(scope, sdk.BlockText, sdk.Text(body), body, ts, out)
	case t.Is("think"):
		body = p.Get("think")
		n.content(scope, sdk.BlockThinking, sdk.Text(body), body, ts, out)
	default:
		out.Ignored(sdk.S("ContentPart/" + sdk.TypeName(t)))
		return
	}
	if !body.Exists() {
		out.Ignored(sdk.S("ContentPart"))
	}
}

// subagent handles a SubagentEvent of scope from (the session's, or a
// sub-agent's): a sub-agent's own record, nested in the log, in a scope
// of its own opened at its first record and linked at the Agent call of
// from that started it. The scope is named by that call's id, or, when
// a scope of that name was opened already (an Agent call that reused the
// id of one whose sub-agent ran, or a sub-agent's own Agent call reusing
// its parent's), by the id and a number (call_1#2, call_1#3, ...).
func (n *normalizer) subagent(p abi.Value, ts stamp, from string, out *sdk.Out) {
	ev := p.Get("event")
	parent := str(p.Get("parent_tool_call_id"))
	if parent == "" {
		// Builds before 1.25 (wire protocol 1.6) named the Agent (then
		// Task) call task_tool_call_id and stated no agent_id.
		parent = str(p.Get("task_tool_call_id"))
	}
	name, in, key := parent, from, parent
	if parent == "" {
		name = str(p.Get("agent_id"))
		in, key = "", "\x01"+name
	}
	if name == "" || ev.Kind() != abi.KindObject || ev.Get("type").Kind() != abi.KindString {
		out.Unmapped(sdk.S("SubagentEvent"))
		return
	}
	a := n.agents[in][key]
	calls := 0
	if t := n.calls[from][parent]; t != nil && parent != "" {
		calls = t.calls
	}
	if a == nil || !a.open && calls > a.calls {
		// The first record of the sub-agent a call runs.
		a = &subAgent{scope: n.agentScope(name), open: true, calls: calls}
		if n.agents == nil {
			n.agents = map[string]map[string]*subAgent{}
		}
		m := n.agents[in]
		if m == nil {
			m = map[string]*subAgent{}
			n.agents[in] = m
		}
		m[key] = a
		n.running = append(n.running, a)
		agent := sdk.StringOf(p.Get("subagent_type"))
		if agent.IsEmpty() {
			agent = sdk.StringOf(p.Get("agent_id"))
		}
		out.ScopeOpen(sdk.S(a.scope), sdk.S(parent), agent, sdk.Str{})
	}
	if !a.open {
		// A record after the sub-agent's result: the scope is closed.
		out.Ignored(sdk.S("SubagentEvent/late"))
		return
	}
	n.legacy(sdk.Name(ev.Get("type")), ev.Get("payload"), ts, a.scope, out)
}

// agentScope is the name of a new sub-agent's scope: name, unless a
// sub-agent's scope has it already, then name#2, name#3, ...: the first
// not taken (see taken).
func (n *normalizer) agentScope(name string) string {
	// Every name#j with j up to names[name] is taken: the search starts
	// after them.
	k := n.names[name] + 1
	s := name
	if k > 1 {
		s = name + "#" + strconv.Itoa(k)
	}
	for n.taken(s) {
		k++
		s = name + "#" + strconv.Itoa(k)
	}
	if n.names == nil {
		n.names = map[string]int{}
	}
	n.names[name] = k
	return s
}

// taken says whether a sub-agent's scope is named s. names holds, per
// name given to agentScope, the k of the last scope it made (1: the name
// itself): every name#j with j up to k is taken (made then, or skipped
// for being taken), and every scope is one of those. So s is taken when
// it was given with a k, or is name#j with names[name] >= j. A map of
// the names given, not of the scopes: it does not grow when Agent calls
// reuse one id.
func (n *normalizer) taken(s string) bool {
	if n.names[s] > 0 {
		return true
	}
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return false
	}
	j, err := strconv.Atoi(s[i+1:])
	return err == nil && j >= 2 && strconv.Itoa(j) == s[i+1:] && n.names[s[:i]] >= j
}

// dropScope forgets sub-agent a, whose scope has closed: its records
// come no more (a later one is late), so its calls' tallies, its own
// sub-agents' entries and its turn state are dropped; a sub-agent of
// its own still open stays in running, to be closed at the end.
func (n *normalizer) dropScope(a *subAgent) {
	a.open = false
	delete(n.calls, a.scope)
	delete(n.agents, a.scope)
	delete(n.unstepped, a.scope)
	for i, b := range n.running {
		if b == a {
			n.running = append(n.running[:i], n.running[i+1:]...)
			break
		}
	}
}

// argsText is a call's arguments as JSON text: a string as it is, an
// object as its JSON, "" when absent or null.
func argsText(v abi.Value) string {
	switch v.Kind() {
	case abi.KindString:
		return v.String()
	case abi.KindObject, abi.KindArray:
		return string(v.Raw())
	}
	return ""
}

// str is v as a Go string it owns ("" when v is not a string).
func str(v abi.Value) string {
	if v.Kind() != abi.KindString {
		return ""
	}
	return v.String()
}

// sideQuestion handles BtwBegin and BtwEnd: a side question the user
// asked with /btw while the agent worked (soul/btw.py). A separate,
// lightweight model call answers it from the conversation so far, with
// every tool call refused, and neither the question nor the answer joins
// the main conversation: it is a child run of its own (scope
// "btw-<id>"), its question the message.user, its answer (BtwEnd
// response) the message.assistant, closed ok, or error with BtwEnd's
// error. So the answer is never the step's. The log states no usage for
// it (btw.py sends no StatusUpdate): none is counted.
func (n *normalizer) sideQuestion(end bool, p abi.Value, ts stamp, out *sdk.Out) {
	scope := "btw-" + str(p.Get("id"))
	if !n.btw[scope] {
		// Begun, or (a log that lost its begin) ended at once.
		if n.btw == nil {
			n.btw = map[string]bool{}
		}
		n.btw[scope] = true
		out.ScopeOpen(sdk.S(scope), sdk.Str{}, sdk.S("btw"), sdk.S("side question"))
		if !n.user(p.Get("question"), sdk.OriginPrompt, scope, ts, out) && !end {
			out.Warn("kimi: a side question (BtwBegin) without its question")
		}
	} else if !end {
		out.Ignored(sdk.S("BtwBegin")) // begun again
		return
	}
	if !end {
		return
	}
	delete(n.btw, scope)
	if r := p.Get("response"); r.Kind() == abi.KindString && !r.Is("") {
		n.msgs++
		key := sdk.S("b" + strconv.Itoa(n.msgs))
		out.Open(key, sdk.Message{Scope: sdk.S(scope), Model: sdk.Opt(n.model), Time: sdk.Opt(ts.String())})
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(r)})
		out.Close(key, sdk.MessageEnd{})
	}
	if e := sdk.StringOf(p.Get("error")); !e.IsEmpty() {
		out.ScopeClose(sdk.S(scope), sdk.StatusError, e)
		return
	}
	out.ScopeClose(sdk.S(scope), sdk.StatusOK, sdk.Str{})
}

// hookRefusal is "denied" for a tool error whose display holds the brief
// "Hook blocked": a PreToolUse hook refused the call, which did not run
// (soul/toolset.py at 4a550ef, 1.49: ToolError{message: the hook's reason,
// else "Blocked by PreToolUse hook", brief: "Hook blocked"}; kosong puts
// the brief in display as {"type": "brief", "text"}); else "".
func hookRefusal(display abi.Value) string {
	it := display.Iter()
	for it.Next() {
		if b := it.Value(); b.Get("type").Is("brief") && b.Get("text").Is("Hook blocked") {
			return "denied"
		}
	}
	return ""
}

// promptBlocked reports the text a turn's prompt got instead of a model
// call when a UserPromptSubmit hook blocked it (kimisoul.py: TurnBegin,
// the hook's reason as a TextPart, "Prompt blocked by hook." when it
// gives none, and TurnEnd): the turn failed with that reason, a status
// error below the terminal level (as Kimi Code's turn.ended reason
// blocked), listed with the step's errors: a session whose last turn it
// is ends in error, and a later answered turn makes it ok again.
func (n *normalizer) promptBlocked(text abi.Value, out *sdk.Out) {
	reason := sdk.View(text)
	if strings.TrimSpace(reason) == "" {
		reason = n.hookBlock
	}
	if strings.TrimSpace(reason) == "" {
		reason = "no reason given"
	}
	why := "the prompt was blocked by a UserPromptSubmit hook: " + sdk.Clip(reason, 500)
	out.Status(sdk.StatusError, sdk.S(why), sdk.LevelError)
}

// slashCommand says whether a turn's input is a slash command: its text
// (the parts' joined by spaces, as kimisoul.py reads it) starts with "/"
// once trimmed.
func slashCommand(input abi.Value) bool {
	if input.Kind() == abi.KindString {
		return strings.HasPrefix(strings.TrimSpace(input.String()), "/")
	}
	it := input.Iter()
	for it.Next() {
		if t := it.Value().Get("text"); t.Kind() == abi.KindString {
			if s := strings.TrimSpace(t.String()); s != "" {
				return strings.HasPrefix(s, "/")
			}
		}
	}
	return false
}

// notification reads a Notification (wire/types.py: {id, category, type,
// source_kind, source_id, title, body, severity, created_at, payload}),
// the wire log's payload or a line of the print mode: one of severity
// error (a background task that failed, ...) is an error the CLI
// reported, its body the message; any other is declared ignored.
func notification(p abi.Value, scope string, out *sdk.Out) {
	if p.Get("severity").Is("error") {
		out.Error(sdk.ProviderError{Message: sdk.StringOf(p.Get("body")), Code: sdk.StringOf(p.Get("type")), Scope: sdk.Opt(scope)})
		return
	}
	out.Ignored(sdk.S("Notification"))
}

// deadEndReminder opens the reminder the Kimi CLI appends to the result
// of a call the model repeated, with the same arguments, an eighth time
// in a row across steps and more (MoonshotAI/kimi-cli 4a550ef,
// soul/toolset.py _REMINDER_TEXT_3). At the twelfth
// (_REPEAT_FORCE_STOP_STREAK) the CLI stops the turn (kimisoul.py:
// StepOutcome stop_reason "tool_call_repeat"): no further step, the
// turn's end right after that result. repeatStopErr is the error then:
// an error, not incomplete, though the CLI's ACP session answers the
// prompt end_turn (acp/session.py): the turn did not do what was asked
// and no one interrupted it, the CLI's guard gave up on the model, as
// Gemini CLI's loop detection and Claude Code's malformed_tool_use_exhausted
// do (errors there too).
const (
	deadEndReminder = "<system-reminder>\nYou are stuck in a dead end and have repeatedly made the same function call without progress."
	repeatStopErr   = "the Kimi CLI stopped the turn: the model kept repeating the same tool call (stop reason tool_call_repeat)"
)

// deadEnd reports whether a tool result's output (a string, or content
// parts whose last is text) ends on the dead-end reminder.
func deadEnd(output abi.Value) bool {
	text := output
	if output.Kind() == abi.KindArray {
		var last abi.Value
		it := output.Iter()
		for it.Next() {
			last = it.Value()
		}
		text = last.Get("text")
	}
	if text.Kind() != abi.KindString {
		return false
	}
	s := text.String()
	i := strings.LastIndex(s, deadEndReminder)
	return i >= 0 && strings.HasSuffix(strings.TrimSpace(s), "</system-reminder>")
}
