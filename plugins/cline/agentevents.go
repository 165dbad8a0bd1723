package cline

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtAgentEvents is the format of the Cline CLI's --json output since
// the CLI runs on the Cline SDK (@cline/cli 3, apps/cli of the cline
// repository): one JSON object per line, each with its "ts" (ISO 8601)
// and a "type": agent_event (the SDK's AgentEvent in "event"), run_start,
// run_result, run_aborted, run_abort_requested, team_restored,
// team_event, hook_event, zen_dispatched, and on stderr error and
// zen_error. doc.go, "Format agent-events", says what each maps to.
const fmtAgentEvents = "agent-events"

// isAgentEventLine tells a line of the SDK CLI's --json output: every
// line has a "ts" string and one of the CLI's line types.
func isAgentEventLine(v abi.Value) bool {
	if v.Kind() != abi.KindObject || v.Get("ts").Kind() != abi.KindString {
		return false
	}
	switch sdk.Name(v.Get("type")) {
	case "agent_event":
		return v.Get("event").Kind() == abi.KindObject
	case "run_start", "run_result", "run_aborted", "run_abort_requested", "team_restored", "team_event", "hook_event", "zen_dispatched":
		return true
	}
	return false
}

// agentTurn is the assistant message of one iteration being written:
// its key, the slots of its text and reasoning (-1 before they come),
// the next free slot, and the usage of its request.
type agentTurn struct {
	key                 string
	open                bool
	text, think, next   int
	redacted, sawThink  bool
	textDone, thinkDone bool
	usage               sdk.Usage
}

// agentCall is a tool call of the stream still waiting for its
// content_end.
type agentCall struct {
	id, name, scope string
	prompt          string // a sub-agent's task (spawn_agent's input)
}

// agentState is the state of an agent-events stream.
type agentState struct {
	main, sub agentTurn
	calls     []agentCall
	// scope is the sub-agent scope the events go to ("" for the step):
	// opened when an iteration starts while one of the step's tool
	// calls (scopeCall) is running, closed with its content_end.
	scope, scopeCall string
	subDone          string // the sub-agent's done reason
	scopes           int
	msgs             int
	unscoped         bool // a warning said sub-agent events could not be attributed
	sawResult        bool
}

// agentLine maps a line of the SDK CLI's --json output.
func (n *normalizer) agentLine(v abi.Value, out *sdk.Out) {
	if n.agent == nil {
		n.agent = &agentState{main: newTurn(), sub: newTurn()}
		n.sawTask = true
	}
	a := n.agent
	ts := sdk.StringOf(v.Get("ts"))
	switch sdk.Name(v.Get("type")) {
	case "agent_event":
		n.agentEvent(v.Get("event"), ts, out)
	case "run_start":
		out.Meta(sdk.Meta{SessionID: sdk.StringOf(v.Get("sessionId"))})
		out.LatestModel(v.Get("modelId"), &n.model)
		if !v.Get("sessionId").Exists() && !v.Get("modelId").Exists() {
			out.Ignored(sdk.S("run_start"))
		}
	case "run_result":
		a.sawResult = true
		n.agentResult(v, out)
	case "run_aborted":
		msg := orText(v.Get("message").String(), "the run was aborted ("+sdk.TypeName(v.Get("reason"))+")")
		out.Status(sdk.StatusIncomplete, sdk.S(msg), sdk.LevelTerminal)
	case "run_abort_requested":
		out.Warn("an abort of the run was requested (" + sdk.TypeName(v.Get("reason")) + ")")
	case "zen_dispatched":
		// Zen mode hands the session to the hub and exits: its result is
		// not in this output.
		out.Meta(sdk.Meta{SessionID: sdk.StringOf(v.Get("sessionId"))})
		out.Status(sdk.StatusIncomplete, sdk.S("the session was dispatched to the Cline hub to run in the background (zen): its outcome is not in this output"), sdk.LevelTerminal)
	case "zen_error":
		out.Meta(sdk.Meta{SessionID: sdk.StringOf(v.Get("sessionId"))})
		out.Error(sdk.ProviderError{Message: sdk.S(orText(v.Get("message").String(), "zen dispatch failed")), Code: sdk.S("zen_error")})
	case "error":
		// The CLI's error line (stderr, when it is recorded with stdout).
		out.Error(sdk.ProviderError{Message: sdk.S(orText(v.Get("message").String(), "the Cline CLI reported an error"))})
	case "team_event":
		n.teamEvent(v.Get("event"), out)
	case "team_restored", "hook_event":
		// A team's state restored; a hook the CLI ran (its tool's call
		// and result are the agent events').
		out.Ignored(sdk.S(sdk.TypeName(v.Get("type"))))
	default:
		out.Unmapped(sdk.S("type/" + sdk.TypeName(v.Get("type"))))
	}
}

func newTurn() agentTurn { return agentTurn{text: -1, think: -1} }

// turn is the message of the current scope.
func (a *agentState) turn() *agentTurn {
	if a.scope != "" {
		return &a.sub
	}
	return &a.main
}

// openTurn opens the current scope's message if it is not open.
func (n *normalizer) openTurn(ts sdk.Str, out *sdk.Out) *agentTurn {
	a := n.agent
	t := a.turn()
	if !t.open {
		a.msgs++
		*t = newTurn()
		t.open, t.key = true, "ae"+strconv.Itoa(a.msgs)
		out.Open(sdk.S(t.key), sdk.Message{Time: ts, Scope: sdk.Opt(a.scope)})
	}
	return t
}

// closeTurn closes message t, with its request's usage.
func closeTurn(t *agentTurn, out *sdk.Out) {
	if !t.open {
		return
	}
	t.open = false
	out.Close(sdk.S(t.key), sdk.MessageEnd{Usage: t.usage})
}

// agentEvent maps one AgentEvent.
func (n *normalizer) agentEvent(e abi.Value, ts sdk.Str, out *sdk.Out) {
	a := n.agent
	typ := sdk.Name(e.Get("type"))
	switch typ {
	case "iteration_start":
		// The step's message stays open while a sub-agent its tool
		// started runs: its usage comes after.
		if !n.maybeOpenScope(ts, out) {
			closeTurn(a.turn(), out)
		}
		out.Ignored(sdk.S("iteration_start"))
	case "iteration_end":
		t := a.turn()
		if !t.open {
			out.Ignored(sdk.S("iteration_end"))
		}
		closeTurn(t, out)
	case "content_start":
		n.contentStart(e, ts, out)
	case "content_update":
		// A tool's progress: its content_end holds the output.
		out.Ignored(sdk.S("content_update"))
	case "content_end":
		n.contentEnd(e, ts, out)
	case "usage":
		n.agentUsage(e, out)
	case "notice":
		switch sdk.Name(e.Get("noticeType")) {
		case "status":
			// Compaction and other status lines the CLI shows.
			out.Ignored(sdk.S("notice/status"))
		default:
			out.Warn("Cline: " + sdk.TypeName(e.Get("noticeType")) + " notice: " + clip(e.Get("message").String()))
		}
	case "done":
		n.agentDone(e, out)
	case "error":
		msg := e.Get("error").Get("message").String()
		if msg == "" {
			msg = e.Get("error").String()
		}
		code := sdk.StringOf(e.Get("errorClass"))
		if !code.IsSet() && e.Get("recoverable").Truthy() {
			code = sdk.S("recoverable")
		}
		out.Error(sdk.ProviderError{Message: sdk.S(orText(msg, "the agent reported an error")), Code: code, Scope: sdk.Opt(a.scope)})
	default:
		out.Unmapped(sdk.S("agent_event/" + sdk.TypeName(e.Get("type"))))
	}
}

// maybeOpenScope opens a sub-agent scope when an iteration starts while
// one of the step's tool calls runs: the SDK runs its tools one at a
// time, so the iteration is a sub-agent's that the tool (spawn_agent, a
// configured agent) started, whose events the CLI prints with the step's,
// unmarked. With several calls running (parallel tools) the stream does
// not say whose it is: the events stay the step's, and a warning says so.
func (n *normalizer) maybeOpenScope(ts sdk.Str, out *sdk.Out) bool {
	a := n.agent
	if a.scope != "" {
		return false
	}
	var running []int
	for i, c := range a.calls {
		if c.scope == "" {
			running = append(running, i)
		}
	}
	switch {
	case len(running) == 1:
		c := a.calls[running[0]]
		a.scopes++
		a.scope, a.scopeCall, a.subDone = "agent-"+strconv.Itoa(a.scopes), c.id, ""
		out.ScopeOpen(sdk.S(a.scope), sdk.S(c.id), sdk.S(c.name), sdk.Opt(sdk.Clip(c.prompt, 200)))
		if c.prompt != "" {
			a.msgs++
			oneBlock(sdk.S("ae"+strconv.Itoa(a.msgs)), sdk.Message{User: true, Scope: sdk.S(a.scope), Time: ts},
				sdk.Block{Type: sdk.BlockText, Text: sdk.S(c.prompt), Origin: sdk.OriginPrompt}, out)
		}
		return true
	case len(running) > 1 && !a.unscoped:
		a.unscoped = true
		out.Warn("an iteration started while " + strconv.Itoa(len(running)) + " tool calls ran at once: the --json output does not say which sub-agent's it is, so its events are written as the step's")
	}
	return false
}

// contentStart maps a content_start: a text or reasoning delta of the
// model's answer (the SDK writes one per delta), or a tool call starting.
func (n *normalizer) contentStart(e abi.Value, ts sdk.Str, out *sdk.Out) {
	a := n.agent
	switch sdk.Name(e.Get("contentType")) {
	case "text":
		t := n.openTurn(ts, out)
		if t.text < 0 {
			t.text, t.next = t.next, t.next+1
		}
		if d := sdk.StringOf(e.Get("text")); !d.IsEmpty() && !t.textDone {
			out.Append(sdk.S(t.key), t.text, sdk.BlockText, d)
			return
		}
		out.Ignored(sdk.S("content_start/text"))
	case "reasoning":
		t := n.openTurn(ts, out)
		if t.think < 0 {
			t.think, t.next = t.next, t.next+1
		}
		if e.Get("redacted").Truthy() {
			t.redacted = true
		}
		if d := sdk.StringOf(e.Get("reasoning")); !d.IsEmpty() && !t.thinkDone {
			out.Append(sdk.S(t.key), t.think, sdk.BlockThinking, d)
			return
		}
		if t.redacted && !t.sawThink {
			t.sawThink = true
			out.Block(sdk.S(t.key), t.think, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
			return
		}
		out.Ignored(sdk.S("content_start/reasoning"))
	case "tool":
		id := sdk.View(e.Get("toolCallId"))
		name := sdk.View(e.Get("toolName"))
		if name == "" {
			name = "unknown"
		}
		for _, c := range a.calls {
			if c.id == id && id != "" {
				// The hub writes a call that waits for approval when it is
				// asked, and again when it starts: the same call.
				out.Ignored(sdk.S("content_start/tool (again)"))
				return
			}
		}
		if id == "" {
			id = "cline-call-" + strconv.Itoa(len(a.calls)+a.msgs)
		}
		t := n.openTurn(ts, out)
		input := e.Get("input")
		c := sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Kind: sdkKindOf(name), Scope: sdk.Opt(a.scope), Time: ts}
		if input.Kind() == abi.KindObject {
			c.Input = sdk.JSON(input)
		} else if input.Exists() {
			c.Input = sdk.RawJSON(`{"input":` + string(input.Raw()) + `}`)
		}
		if c.Kind == "execute" {
			c.Command = commandOf(input)
		}
		out.ToolUse(sdk.S(t.key), t.next, c)
		t.next++
		prompt := ""
		if p := input.Get("task"); p.Kind() == abi.KindString {
			prompt = p.String()
		} else if p := input.Get("prompt"); p.Kind() == abi.KindString {
			prompt = p.String()
		}
		a.calls = append(a.calls, agentCall{id: strings.Clone(id), name: strings.Clone(name), scope: a.scope, prompt: prompt})
	default:
		out.Unmapped(sdk.S("content_start/" + sdk.TypeName(e.Get("contentType"))))
	}
}

// contentEnd maps a content_end: the model's whole text or reasoning of
// the turn (it replaces the deltas), a tool's outcome, or generated media.
func (n *normalizer) contentEnd(e abi.Value, ts sdk.Str, out *sdk.Out) {
	a := n.agent
	switch sdk.Name(e.Get("contentType")) {
	case "text":
		text := sdk.StringOf(e.Get("text"))
		t := a.turn()
		if !text.IsSet() || text.IsEmpty() && !t.open {
			// No text (the hub's end of a message may carry none): the
			// deltas stand.
			out.Ignored(sdk.S("content_end/text"))
			return
		}
		t = n.openTurn(ts, out)
		if t.text < 0 {
			t.text, t.next = t.next, t.next+1
		}
		t.textDone = true
		out.Block(sdk.S(t.key), t.text, sdk.Block{Type: sdk.BlockText, Text: text})
	case "reasoning":
		r := sdk.StringOf(e.Get("reasoning"))
		if !r.IsSet() {
			out.Ignored(sdk.S("content_end/reasoning"))
			return
		}
		t := n.openTurn(ts, out)
		if t.think < 0 {
			t.think, t.next = t.next, t.next+1
		}
		t.thinkDone = true
		out.Block(sdk.S(t.key), t.think, sdk.Block{Type: sdk.BlockThinking, Thinking: r, Redacted: t.redacted && r.IsEmpty()})
	case "tool":
		n.toolEnd(e, ts, out)
	case "media":
		// Generated media (an image the model made): the transcript's
		// blocks hold no media; the raw capture keeps it.
		out.Warn("the model generated " + orText(e.Get("media").Get("modality").String(), "media") + " (" + clip(e.Get("media").Get("mediaType").String()) + "): the transcript has no block for it, the raw capture keeps it")
	default:
		out.Unmapped(sdk.S("content_end/" + sdk.TypeName(e.Get("contentType"))))
	}
}

// toolEnd reports a tool's outcome (content_end, contentType tool).
func (n *normalizer) toolEnd(e abi.Value, ts sdk.Str, out *sdk.Out) {
	a := n.agent
	id := sdk.View(e.Get("toolCallId"))
	idx := -1
	for i, c := range a.calls {
		if c.id == id {
			idx = i
			break
		}
	}
	name := sdk.StringOf(e.Get("toolName"))
	scope := a.scope
	if idx >= 0 {
		c := a.calls[idx]
		scope = c.scope
		if !name.IsSet() {
			name = sdk.S(c.name)
		}
		a.calls = append(a.calls[:idx:idx], a.calls[idx+1:]...)
		if c.id == a.scopeCall && a.scope != "" {
			n.closeScope(e, out)
			scope = ""
		}
	}
	if id == "" {
		out.Warn("Cline reported a tool's outcome without its call id (" + clip(name.String()) + "): not paired with a call")
		return
	}
	r := sdk.ToolResult{CallID: sdk.S(id), Name: name, Scope: sdk.Opt(scope), Time: ts}
	output := e.Get("output")
	if output.Kind() == abi.KindString {
		r.Output = sdk.Text(output)
	} else if output.Exists() && output.Kind() != abi.KindNull {
		r.Output = sdk.JSON(output)
	}
	if errText := e.Get("error").String(); errText != "" {
		msg := toolErrorText(errText)
		r.Error, r.Status = sdk.S(msg), sdk.S("error")
		if output.Get("error").Exists() {
			// The SDK's result of a failed tool is {"error": ...}: the
			// error, not an output.
			r.Output = sdk.Str{}
		}
		if deniedText(msg) {
			r.Status, r.Output = sdk.S("denied"), sdk.Str{}
		}
	} else if msg, code, failed := operationFailures(output); failed {
		// A command that exited non-zero, a file that could not be read:
		// the tool ran, and its results say which of its operations
		// failed.
		r.Error, r.Status, r.ExitCode = sdk.S(msg), sdk.S("error"), code
	} else {
		r.Status = sdk.S("ok")
	}
	out.ToolResult(r)
}

// closeScope ends the sub-agent scope whose tool call ended: its status
// is its done event's reason, else the finishReason its tool returned
// (spawn_agent's output), completed ok, aborted incomplete, anything
// else an error; with neither, its tool's outcome.
func (n *normalizer) closeScope(e abi.Value, out *sdk.Out) {
	a := n.agent
	closeTurn(&a.sub, out)
	reason := a.subDone
	if reason == "" {
		reason = e.Get("output").Get("finishReason").String()
	}
	st, msg := sdk.StatusOK, ""
	switch reason {
	case "completed":
	case "aborted":
		st, msg = sdk.StatusIncomplete, "the sub-agent was aborted"
	case "":
		if t := e.Get("error").String(); t != "" {
			st, msg = sdk.StatusError, toolErrorText(t)
		}
	default:
		st, msg = sdk.StatusError, "the sub-agent stopped: "+reason
	}
	out.ScopeClose(sdk.S(a.scope), st, sdk.Opt(msg))
	a.scope, a.scopeCall, a.subDone = "", "", ""
}

// agentUsage reports a usage event: the request's figures (the SDK's
// delta since the last event) on the turn's message, and the run's
// totals so far as the step's (a sub-agent's are its own, not the
// step's: run_result states the whole).
func (n *normalizer) agentUsage(e abi.Value, out *sdk.Out) {
	a := n.agent
	t := a.turn()
	t.usage = sdkUsage(e.Get("inputTokens"), e.Get("outputTokens"), e.Get("cacheReadTokens"), e.Get("cacheWriteTokens"))
	if a.scope != "" {
		// Written with the sub-agent's message when it closes.
		out.Ignored(sdk.S("usage (sub-agent)"))
		return
	}
	total := sdkUsage(e.Get("totalInputTokens"), e.Get("totalOutputTokens"), e.Get("totalCacheReadTokens"), e.Get("totalCacheWriteTokens"))
	if total == (sdk.Usage{}) {
		out.Ignored(sdk.S("usage"))
		return
	}
	out.Usage(total, sdk.ModeSet)
	if c, ok := e.Get("totalCost").Float(); ok {
		out.Cost(c, sdk.ModeSet)
	}
}

// sdkUsage is usage as the SDK states it: inputTokens the whole prompt,
// the cache read and written included (its providers' usage is
// normalized so; @cline/core's usage service says so), the cache parts
// where stated.
func sdkUsage(in, outTok, read, write abi.Value) sdk.Usage {
	return sdk.Usage{Input: sdk.IntOf(in), Output: sdk.IntOf(outTok), CacheRead: sdk.IntOf(read), CacheWrite: sdk.IntOf(write)}
}

// agentDone maps a done event: the step's (a sub-agent's is its scope's)
// end, as its reason says. run_result, which the CLI writes after it,
// states it again with the session's usage and replaces it.
func (n *normalizer) agentDone(e abi.Value, out *sdk.Out) {
	a := n.agent
	reason := sdk.Name(e.Get("reason"))
	if a.scope != "" {
		a.subDone = strings.Clone(reason)
		out.Ignored(sdk.S("done (sub-agent)"))
		return
	}
	closeTurn(&a.main, out)
	n.finishReason(reason, e.Get("text"), out)
}

// agentResult maps run_result: the run's finish reason, its final text
// and the session's usage and cost, the step's when it had no sub-agent
// (the CLI's figure, aggregateUsage when it writes one, includes them).
func (n *normalizer) agentResult(v abi.Value, out *sdk.Out) {
	a := n.agent
	closeTurn(&a.main, out)
	out.LatestModel(v.Get("model").Get("id"), &n.model)
	u := v.Get("usage")
	if agg := v.Get("aggregateUsage"); agg.Kind() == abi.KindObject {
		u = agg
	}
	if a.scopes > 0 && u.Kind() == abi.KindObject {
		// The CLI's figure holds its sub-agents' usage too, which their
		// runs' messages hold (spec 6.10: not in the step's): the step's
		// own is its usage events' totals, reported as they came.
		out.Warn("run_result's usage (" + clip(string(u.Raw())) + ") includes the sub-agents' requests: the step's usage is its own requests' (the totals its usage events stated), the sub-agents' are on their runs' messages")
	} else if u.Kind() == abi.KindObject {
		out.Usage(sdkUsage(u.Get("inputTokens"), u.Get("outputTokens"), u.Get("cacheReadTokens"), u.Get("cacheWriteTokens")), sdk.ModeSet)
		if c, ok := u.Get("totalCost").Float(); ok {
			out.Cost(c, sdk.ModeSet)
		}
	}
	n.finishReason(sdk.Name(v.Get("finishReason")), v.Get("text"), out)
}

// finishReason reports the step's end by the SDK's finish reason:
// completed is ok (its text the final answer), aborted incomplete,
// max_iterations, mistake_limit and error an error (the CLI exits 1 and
// prints the text as the error).
func (n *normalizer) finishReason(reason string, text abi.Value, out *sdk.Out) {
	switch reason {
	case "completed":
		if text.Kind() == abi.KindString && !text.Is("") {
			out.Final(sdk.Text(text), true)
		}
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	case "aborted":
		out.Status(sdk.StatusIncomplete, sdk.S("the run was aborted"), sdk.LevelTerminal)
	default:
		msg := "the run stopped: " + orText(reason, "no finish reason")
		if t := text.String(); strings.TrimSpace(t) != "" && text.Kind() == abi.KindString {
			msg += ": " + clip(t)
		}
		out.Status(sdk.StatusError, sdk.S(msg), sdk.LevelTerminal)
	}
}

// teamEvent maps a team_event line (an agent team's teammates and runs):
// the errors a teammate's agent or a team run reports are provider
// errors; the rest, the teammates' output included, is not mapped into
// the step (a teammate is not a sub-agent the stream links to a call)
// and stays in the raw capture.
func (n *normalizer) teamEvent(e abi.Value, out *sdk.Out) {
	who := "teammate " + orText(e.Get("agentId").String(), "?") + ": "
	switch sdk.Name(e.Get("type")) {
	case "run_failed":
		out.Error(sdk.ProviderError{Message: sdk.S(orText(e.Get("run").Get("error").String(), "a team run failed")), Code: sdk.S("team_run_failed")})
	case "agent_event":
		if ev := e.Get("event"); ev.Get("type").Is("error") {
			out.Error(sdk.ProviderError{Message: sdk.S(who + orText(ev.Get("error").Get("message").String(), "error")), Code: sdk.S("teammate")})
			return
		}
		out.Ignored(sdk.S("team_event/agent_event"))
	case "task_end":
		if err := e.Get("error"); err.Exists() && err.Kind() != abi.KindNull {
			out.Error(sdk.ProviderError{Message: sdk.S(who + orText(err.Get("message").String(), "the teammate's task failed")), Code: sdk.S("teammate")})
			return
		}
		out.Ignored(sdk.S("team_event/task_end"))
	default:
		out.Ignored(sdk.S("team_event/" + sdk.TypeName(e.Get("type"))))
	}
}

// agentEnd ends the stream: what the format could not say, said once.
func (n *normalizer) agentEnd(out *sdk.Out) {
	a := n.agent
	closeTurn(&a.sub, out)
	if a.scope != "" {
		out.ScopeClose(sdk.S(a.scope), sdk.StatusIncomplete, sdk.S("the output ended before the sub-agent's end was reported"))
	}
	closeTurn(&a.main, out)
	if !a.sawResult {
		out.Warn("the Cline CLI's --json output has no run_result line: the run's usage is the last the stream stated, and the CLI may have failed (its error goes to stderr)")
	}
	out.Meta(sdk.Meta{Format: sdk.S(fmtAgentEvents)})
}

// sdkKindOf classifies the Cline SDK's tools.
func sdkKindOf(name string) string {
	switch name {
	case "read_files":
		return "read"
	case "search_codebase":
		return "search"
	case "run_commands":
		return "execute"
	case "editor", "apply_patch":
		return "edit"
	case "fetch_web_content":
		return "fetch"
	}
	return "other"
}

// commandOf is the command line of run_commands' input when it runs one
// command given as a string ({"commands": ["..."]} or {"command": "..."}).
func commandOf(input abi.Value) sdk.Str {
	if c := input.Get("command"); c.Kind() == abi.KindString {
		return sdk.Text(c)
	}
	if cs := input.Get("commands"); cs.Kind() == abi.KindArray && cs.Len() == 1 && cs.Index(0).Kind() == abi.KindString {
		return sdk.Text(cs.Index(0))
	}
	return sdk.Str{}
}

// toolErrorText is a tool's error as the SDK writes it: the JSON text of
// the result's {"error": "..."} when it is that, else as it is.
func toolErrorText(s string) string { return memberText(s, "error") }

// deniedText tells the reasons the SDK and the CLI give for a tool they
// did not run because a person or a rule refused it.
func deniedText(s string) bool {
	for _, p := range []string{"was denied by user", "requires approval in a TTY session", "was not approved",
		"is disabled by policy", "requires approval but no approval callback is configured", "was blocked by a runtime hook",
		"approval IPC is not available"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// operationFailures reads the SDK's tool results, an array of
// {query, result, error, success} (run_commands, read_files,
// search_codebase, ...): the errors of the operations that failed, and
// the exit code a single command states ("Command exited with code N").
func operationFailures(output abi.Value) (msg string, code sdk.Int, failed bool) {
	if output.Kind() != abi.KindArray {
		return "", sdk.Int{}, false
	}
	var b strings.Builder
	it := output.Iter()
	for it.Next() {
		op := it.Value()
		if op.Kind() != abi.KindObject || op.Get("success").Kind() != abi.KindFalse {
			continue
		}
		failed = true
		e := orText(op.Get("error").String(), "failed")
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		if q := op.Get("query").String(); q != "" && output.Len() > 1 {
			b.WriteString(clip(q) + ": ")
		}
		b.WriteString(e)
		if output.Len() == 1 {
			code = sdk.StatedExitCode([]byte(e), "Command exited with code ")
		}
	}
	return b.String(), code, failed
}
