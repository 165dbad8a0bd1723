package gemini

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// streamEvent handles one --output-format stream-json event.
func (n *normalizer) streamEvent(v, t abi.Value, out *sdk.Out) {
	if !t.Is("tool_result") {
		// The results of the batch before it: cancelled when this is
		// the run's cancellation, else as the CLI wrote them.
		n.releaseResults(t.Is("result") && runCancelled(v), out)
	}
	switch {
	case t.Is("init"):
		n.setFormat(fmtStream, out)
		n.session(v.Get("session_id"), out)
		n.model(v.Get("model"), out)
	case t.Is("message"):
		n.setFormat(fmtStream, out)
		if v.Get("role").Is("user") {
			n.closeMessage(out)
			n.userPrompt(v.Get("content"), v.Get("timestamp"), out)
			n.unanswered, n.hookStop = true, ""
			return
		}
		n.unanswered = false
		n.assistantText(v, out)
	case t.Is("tool_use"):
		n.setFormat(fmtStream, out)
		n.unanswered = false
		n.toolUse(v, out)
	case t.Is("tool_result"):
		n.setFormat(fmtStream, out)
		// The CLI runs tools only once the model's response has ended,
		// so the first result closes the message holding the calls.
		n.closeMessage(out)
		n.unanswered, n.hookStop = true, ""
		if e := v.Get("error"); e.Get("type").Is("stop_execution") {
			n.hookStop = strings.Clone(ErrText(e).String())
		}
		n.toolResult(v, out)
	case t.Is("error"):
		n.setFormat(fmtStream, out)
		n.closeMessage(out)
		n.errorEvent(v, out)
	case t.Is("result"):
		n.setFormat(fmtStream, out)
		n.closeMessage(out)
		n.result(v, out)
	default:
		out.Unmapped(sdk.S(sdk.TypeName(t)))
	}
}

// userPrompt writes a message.user holding the prompt.
func (n *normalizer) userPrompt(content, ts abi.Value, out *sdk.Out) {
	key := sdk.S(n.newKey("u"))
	out.Open(key, sdk.Message{User: true, Time: sdk.StringOf(ts)})
	n.contentBlocks(key, content, sdk.OriginPrompt, out)
	out.Close(key, sdk.MessageEnd{})
}

// openMessage opens an assistant message unless one is open.
func (n *normalizer) openMessage(ts abi.Value, out *sdk.Out) {
	if n.cur != "" {
		return
	}
	n.cur = n.newKey("a")
	n.nextSlot, n.textSlot = 0, -1
	n.text = n.text[:0]
	out.Open(sdk.S(n.cur), sdk.Message{Time: sdk.StringOf(ts)})
}

// assistantText joins the assistant's deltas into one text block.
func (n *normalizer) assistantText(v abi.Value, out *sdk.Out) {
	c := v.Get("content")
	if c.Kind() != abi.KindString {
		if c.Exists() && c.Kind() != abi.KindNull {
			out.Unmapped(sdk.S("message/non_string_content"))
		}
		return
	}
	if c.Is("") {
		return
	}
	if raw := c.Raw(); sdk.HasPrefix(raw[1:], deprecationPrefix) {
		out.Unmapped(sdk.S("deprecation_notice"))
		return
	}
	n.openMessage(v.Get("timestamp"), out)
	if n.textSlot < 0 {
		n.textSlot = n.nextSlot
		n.nextSlot++
	}
	key := sdk.S(n.cur)
	if v.Get("delta").Truthy() {
		out.Append(key, n.textSlot, sdk.BlockText, sdk.Text(c))
		n.keepText(c)
		return
	}
	// A message without delta:true. Captures show none, so both readings
	// are kept safe: a snapshot of the text so far (it starts with it)
	// replaces the block, anything else is one more chunk and appends, so
	// text is neither repeated nor lost.
	n.scratch = sdk.AppendText(n.scratch[:0], c)
	if len(n.text) > 0 && !n.cut && sdk.HasPrefix(n.scratch, string(n.text)) {
		out.Block(key, n.textSlot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c)})
		n.text = n.text[:0]
		n.keepBytes(n.scratch)
		return
	}
	out.Append(key, n.textSlot, sdk.BlockText, sdk.Text(c))
	n.keepBytes(n.scratch)
}

// maxFinal bounds the copy of a message's text kept for the final
// answer. The text itself goes to the host chunk by chunk and is never
// cut; only the final_text copy is, so that neither the plugin's memory
// nor one call's output (the host takes at most 8 MiB a call) grows with
// the answer: a final text at the limit would lose the call that reports
// the result.
const maxFinal = 1 << 20

// keepText adds a chunk of the current message's text to the copy kept
// for the final answer.
func (n *normalizer) keepText(c abi.Value) {
	if n.cut {
		return
	}
	n.text = sdk.AppendText(n.text, c)
	if len(n.text) > maxFinal {
		n.truncate()
	}
}

// keepBytes is keepText for text already unescaped.
func (n *normalizer) keepBytes(b []byte) {
	if n.cut {
		return
	}
	n.text = append(n.text, b...)
	if len(n.text) > maxFinal {
		n.truncate()
	}
}

// truncate cuts the kept text (longer than maxFinal) at maxFinal, on a
// UTF-8 boundary.
func (n *normalizer) truncate() {
	i := maxFinal
	for i > 0 && n.text[i]&0xC0 == 0x80 {
		i--
	}
	n.text = n.text[:i]
	n.cut = true
}

// toolUse adds a tool_use block to the current message and reports the
// call. A delta after it starts a new text block in the same message.
func (n *normalizer) toolUse(v abi.Value, out *sdk.Out) {
	id := v.Get("tool_id")
	name := v.Get("tool_name")
	ts := v.Get("timestamp")
	params := v.Get("parameters")
	n.openMessage(ts, out)
	out.Block(sdk.S(n.cur), n.nextSlot, sdk.Block{
		Type: sdk.BlockToolUse, ToolName: sdk.Text(name), ToolID: sdk.Text(id), ToolInput: input(params),
	})
	n.nextSlot++
	n.textSlot = -1
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("gemini tool_use without tool_id: no tool.call reported")
		return
	}
	call(id, name, params, sdk.StringOf(ts), out)
	if ToolKind(sdk.View(name)) == "execute" {
		if n.shells == nil {
			n.shells = map[string]bool{}
		}
		n.shells[id.String()] = true
	}
	n.startAgent(id, name, params, abi.Value{}, nil, sdk.StringOf(ts), out)
}

// The tool result statuses (spec §4), the same words in every plugin.
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// FailedStatus is the status of a call that did not succeed: cancelled
// when the CLI stopped it, denied when the user refused it (the CLI's
// "User did not allow tool call") or a policy did (policyDenied), else
// error.
func FailedStatus(st abi.Value, e sdk.Str) string {
	if policyDenied(e.String()) {
		return toolDenied
	}
	if !st.Is("cancelled") && !st.Is("canceled") {
		return toolError
	}
	t := e.String()
	for _, p := range [...]string{"did not allow", "not allowed", "denied", "rejected", "declined"} {
		if contains(t, p) {
			return toolDenied
		}
	}
	return toolCancelled
}

// policyDenied says whether a failed call's error is the CLI's refusal
// to run it (ToolErrorType.POLICY_VIOLATION, status error): its policy
// engine's ("Tool execution denied by policy.", with the rule's message
// after it; older schedulers' 'Policy denied execution of tool "X".') or
// a BeforeTool hook's ("Tool execution blocked: <reason>").
func policyDenied(t string) bool {
	return strings.HasPrefix(t, "Tool execution denied by policy.") ||
		strings.HasPrefix(t, "Policy denied execution of tool ") ||
		strings.HasPrefix(t, "Tool execution blocked: ")
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// errorText is e, or def when e is empty: a result that is not ok
// always says why.
func errorText(e sdk.Str, def string) sdk.Str {
	if e.IsEmpty() {
		return sdk.S(def)
	}
	return e
}

// input is a tool's arguments as JSON, {} when missing.
func input(args abi.Value) sdk.Str {
	if !args.Exists() || args.Kind() == abi.KindNull {
		return sdk.S("{}")
	}
	return sdk.JSON(args)
}

// call reports a tool.call (stream-json tool_use, session toolCalls).
func call(id, name, args abi.Value, ts sdk.Str, out *sdk.Out) {
	tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(args), Kind: ToolKind(sdk.View(name)), Time: ts}
	if tc.Kind == "execute" {
		tc.Command = sdk.StringOf(args.Get("command"))
	}
	out.ToolCall(tc)
}

// toolResult reports a tool.result. output is the CLI's display string
// (often "" or absent); the tool's real return value is only in the
// session file.
func (n *normalizer) toolResult(v abi.Value, out *sdk.Out) {
	id := v.Get("tool_id")
	if sdk.Text(id).IsEmpty() {
		out.Warn("gemini tool_result without tool_id ignored")
		return
	}
	r := sdk.ToolResult{CallID: sdk.Text(id), Output: sdk.StringOf(v.Get("output")), Time: sdk.StringOf(v.Get("timestamp"))}
	st := v.Get("status")
	e := v.Get("error")
	switch {
	case st.Is("success"):
		r.Status = sdk.S(toolOK)
	default:
		r.IsError = true
		r.Error = ErrText(e)
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(st)
		}
		r.Status = sdk.S(FailedStatus(st, r.Error))
		if e.Get("type").Is("policy_violation") {
			r.Status = sdk.S(toolDenied)
		}
		r.Error = errorText(r.Error, "the tool call failed")
	}
	if !st.Exists() && !e.Exists() {
		// Neither says: the CLI reported a result, take it as done.
		r.IsError, r.Error = false, sdk.Str{}
		r.Status = sdk.S(toolOK)
	}
	if !r.IsError && n.shells[sdk.View(id)] {
		streamShell(&r)
	}
	// Held until the next event says whether the run went on from it
	// (releaseResults): the CLI writes a call it cancelled as success.
	n.heldResults = append(n.heldResults, keepResult(r))
	out.Ignored(sdk.S(heldNative))
}

// heldNative is the native name under which a tool_result line is
// declared ignored: its result is reported with the next event's line
// (releaseResults).
const heldNative = "(tool_result, reported with the next event)"

// keepResult copies r's strings out of the line they alias.
func keepResult(r sdk.ToolResult) sdk.ToolResult {
	r.CallID, r.Name, r.Output, r.Error, r.Status = r.CallID.Keep(), r.Name.Keep(), r.Output.Keep(), r.Error.Keep(), r.Status.Keep()
	r.Scope, r.Time = r.Scope.Keep(), r.Time.Keep()
	return r
}

// releaseResults reports the held tool results of the last batch, in
// the order the CLI wrote them. The CLI writes every call that did not
// end in error as "success", one it cancelled included (nonInteractiveCli:
// status is 'error' only for a call whose status is error), and a run the
// user cancels (Ctrl+C) ends at the next model call with the result
// FatalCancellationError, right after the results of the calls it
// cancelled. When that result is the event after the batch (cancelled),
// the batch's ok results are cancelled: what they say is not known to be
// their outcome, and the model never read them.
func (n *normalizer) releaseResults(cancelled bool, out *sdk.Out) {
	for _, r := range n.heldResults {
		if cancelled && !r.IsError {
			r.IsError, r.Status = true, sdk.S(toolCancelled)
			r.Error = sdk.S("cancelled: the run was cancelled right after this call (the CLI writes a call it cancelled as success)")
		}
		out.ToolResult(r)
		n.endAgent(r, nil, out)
	}
	clear(n.heldResults)
	n.heldResults = n.heldResults[:0]
}

// runCancelled reports whether a result event is the CLI's end of a run
// the user cancelled (handleCancellationError: status error, error
// {type FatalCancellationError, message "Operation cancelled."}).
func runCancelled(v abi.Value) bool {
	e := v.Get("error")
	return v.Get("status").Is("error") && (e.Get("type").Is("FatalCancellationError") ||
		!e.Get("type").Exists() && e.Get("message").Is("Operation cancelled."))
}

// streamShell reads a shell call's stream-json result. The CLI marks a
// command that ran "success" whatever it returned, and its display is
// the command's output; only when there is none does it say how the
// command ended (the shell tool's returnDisplay): "Command exited with
// code: N" (a non-zero exit: an error with that exit code), "Command
// terminated by signal: S" (an error), "Command cancelled by user."
// (cancelled). A failed command that printed something cannot be told
// from a successful one here: the session file states its exit code.
func streamShell(r *sdk.ToolResult) {
	o := r.Output.String()
	line := o
	if i := strings.IndexByte(o, '\n'); i >= 0 {
		line = o[:i]
	}
	switch {
	case strings.HasPrefix(line, "Command exited with code: "):
		code, err := strconv.ParseInt(line[len("Command exited with code: "):], 10, 64)
		if err != nil || code == 0 {
			return
		}
		r.ExitCode = sdk.N(code)
		r.IsError, r.Status, r.Error = true, sdk.S(toolError), sdk.S("exit code "+strconv.FormatInt(code, 10))
	case strings.HasPrefix(line, "Command terminated by signal: "):
		r.IsError, r.Status, r.Error = true, sdk.S(toolError), sdk.S(sdk.Clip(line, 300))
	case line == "Command cancelled by user.":
		r.IsError, r.Status, r.Error = true, sdk.S(toolCancelled), sdk.S(line)
	}
}

// errorEvent handles a non-fatal error event: the step goes on, but the
// error is recorded below the terminal level (a later result decides).
func (n *normalizer) errorEvent(v abi.Value, out *sdk.Out) {
	msg := v.Get("message")
	stop, stopped := stopOf(msg)
	if stopped {
		n.stopped = stop
	}
	if v.Get("severity").Is("warning") && !stopped {
		out.Warn("gemini warning: " + msg.String())
		return
	}
	n.lastErr = msg.String()
	e := sdk.Text(msg)
	if e.IsEmpty() {
		e = sdk.S("gemini error event")
	}
	out.Status(sdk.StatusError, e, sdk.LevelError)
}

// stopOf returns the step's error when msg is what the CLI says when it
// stopped a non-interactive run before its work was done and then
// reports a success (a stream's error event, a json object's warning,
// then a result "success" and exit code 0), and whether it is:
//   - "Maximum session turns exceeded": the client's session turn limit
//     (GeminiEventType.MaxSessionTurns, the agent session's agent_end
//     with reason max_turns), severity error;
//   - "Loop detected, stopping execution": the client's loop detection
//     found a loop a second time in the prompt (LoopDetectionService's
//     count above 1; the first time it feeds the model a recovery prompt)
//     and ends this and every later turn of the prompt
//     (GeminiEventType.LoopDetected, the agent session's error event with
//     code LOOP_DETECTED and fatal false), severity warning.
//
// (client.ts, nonInteractiveCli.ts, nonInteractiveCliAgentSession.ts,
// event-translator.ts at 5411f11.) Both are errors, not incomplete: the
// CLI's own ACP session ends either with the same stop reason,
// max_turn_requests (acpSession.ts), a limit it put on the run, not an
// interruption; and a limit or guard that stopped a turn is an error in
// every plugin (Claude Code's max_turns, rapid_refill_breaker and
// malformed_tool_use_exhausted terminal reasons, Kimi's
// MaxStepsReached and tool_call_repeat).
func stopOf(msg abi.Value) (string, bool) {
	switch {
	case msg.Is("Maximum session turns exceeded"):
		return "the run stopped at the session turn limit (Maximum session turns exceeded)", true
	case msg.Is("Loop detected, stopping execution"):
		return "the CLI's loop detection stopped the run (Loop detected, stopping execution)", true
	}
	return "", false
}

// noAnswer is the error of a run the CLI reported a success for whose
// last request to the model got no answer. gemini-cli's non-interactive
// run (nonInteractiveCli.ts at 5411f11) ends its loop with a result
// "success" whenever a turn yields no text and no call: the client
// yields only ContextWindowWillOverflow when the request would overflow
// the context window (client.ts processTurn, since 0.9: the model is not
// called; the interactive UI says so, the non-interactive run does not
// read the event), and AgentExecutionStopped when a BeforeAgent hook
// stopped the run (said on stderr in text mode, a warning of the json
// object, nothing in stream-json). A model's empty answer is an
// InvalidStream, an error result.
const noAnswer = "the model did not answer the run's last request, though gemini-cli reported success: the CLI does not call the model when the request would overflow the context window (ContextWindowWillOverflow, which the non-interactive run does not report), nor when a hook stopped the run"

// result handles the terminal event.
func (n *normalizer) result(v abi.Value, out *sdk.Out) {
	n.sawResult = true
	st := v.Get("status")
	if st.Is("success") && n.stopped != "" {
		out.Status(sdk.StatusError, sdk.S(n.stopped), sdk.LevelTerminal)
	} else if st.Is("success") && n.unanswered {
		why := noAnswer
		if n.lastErr != "" {
			why = n.lastErr
		}
		if n.hookStop != "" {
			why = "a hook stopped the run after a tool call, before the model answered its result (Agent execution stopped: " + sdk.Clip(n.hookStop, 300) + ")"
		}
		out.Status(sdk.StatusError, sdk.S(why), sdk.LevelTerminal)
	} else if st.Is("success") {
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	} else if runCancelled(v) {
		// The user stopped the run: nothing failed, the work is not
		// done.
		why := sdk.StringOf(v.Path("error", "message")).String()
		if why == "" {
			why = "FatalCancellationError"
		}
		out.Status(sdk.StatusIncomplete, sdk.S("the run was cancelled ("+sdk.Clip(why, 200)+")"), sdk.LevelTerminal)
	} else {
		e := ErrText(v.Get("error"))
		switch {
		case e.IsSet():
		case n.lastErr != "":
			// 0.44: a complete answer, an error event, then status
			// error with no error object. The CLI said error, so the
			// step is an error; its text is the error event's.
			e = sdk.S(n.lastErr)
		case st.Kind() == abi.KindString:
			e = sdk.S("gemini result status " + st.String())
		default:
			e = sdk.S("gemini result without status")
		}
		out.Status(sdk.StatusError, e, sdk.LevelTerminal)
		if len(n.answer) > 0 {
			out.Warn("gemini reported an error after the answer was streamed; the answer is kept as the final text")
		}
	}
	n.final(true, out)
	stats := v.Get("stats")
	u := sdk.Usage{
		Input:     sdk.IntOf(stats.Get("input_tokens")),
		CacheRead: sdk.IntOf(stats.Get("cached")),
		Output:    sdk.IntOf(stats.Get("output_tokens")),
		Total:     sdk.IntOf(stats.Get("total_tokens")),
	}
	if u == (sdk.Usage{}) {
		// Only the per-model figures: sum them.
		it := stats.Get("models").Iter()
		for it.Next() {
			m := it.Value()
			u.Input = u.Input.Plus(sdk.IntOf(m.Get("input_tokens")))
			u.CacheRead = u.CacheRead.Plus(sdk.IntOf(m.Get("cached")))
			u.Output = u.Output.Plus(sdk.IntOf(m.Get("output_tokens")))
			u.Total = u.Total.Plus(sdk.IntOf(m.Get("total_tokens")))
		}
	}
	unstatedOutput(&u, out)
	out.Usage(u, sdk.ModeSet)
	if n.modelAlias || !n.modelSent {
		n.model(mainModel(stats.Get("models"), "input_tokens"), out)
	}
}

// mainModel picks the model that did the work from a per-model map: the
// only one, else the one with the most input tokens (the router model
// reads a short classification prompt; the main model reads the whole
// conversation).
func mainModel(models abi.Value, field string) abi.Value {
	var best abi.Value
	var most int64 = -1
	it := models.Iter()
	for it.Next() {
		m := it.Value()
		if m.Path("roles", "main").Exists() {
			return it.Key()
		}
		tok, ok := m.Get(field).Int()
		if !ok {
			tok, _ = m.Path("tokens", field).Int()
		}
		if tok > most {
			best, most = it.Key(), tok
		}
	}
	return best
}

// closeMessage closes the open assistant message.
func (n *normalizer) closeMessage(out *sdk.Out) {
	if n.cur == "" {
		return
	}
	out.Close(sdk.S(n.cur), sdk.MessageEnd{})
	if len(n.text) > 0 {
		n.answer = append(n.answer[:0], n.text...)
		n.answerCut = n.cut
	}
	n.cur = ""
	n.text = n.text[:0]
	n.cut = false
}

// final reports the final answer (override: it replaces an earlier one).
func (n *normalizer) final(override bool, out *sdk.Out) {
	if len(n.answer) == 0 {
		return
	}
	out.Final(sdk.S(string(n.answer)), override)
	if n.answerCut {
		out.Warn("gemini: the final text holds the first 1 MiB of the answer; the whole answer is in its message")
	}
}

// ErrText is the message of an error object (or its type), or the text of
// an error given as a string.
func ErrText(e abi.Value) sdk.Str {
	switch e.Kind() {
	case abi.KindObject:
		if m := sdk.StringOf(e.Get("message")); !m.IsEmpty() {
			return m
		}
		if t := sdk.StringOf(e.Get("type")); !t.IsEmpty() {
			return t
		}
		return sdk.Text(e)
	case abi.KindString:
		return sdk.Text(e)
	}
	return sdk.Str{}
}

// contentBlocks adds the blocks of a content value: a string, or a list of
// parts ({text}) as the API and newer session files write it.
func (n *normalizer) contentBlocks(key sdk.Str, c abi.Value, origin string, out *sdk.Out) {
	switch c.Kind() {
	case abi.KindString:
		if !c.Is("") {
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c), Origin: origin})
		}
	case abi.KindArray:
		it := c.Iter()
		for it.Next() {
			n.partBlock(key, it.Value(), origin, out)
		}
	case abi.KindInvalid, abi.KindNull:
	default:
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c), Origin: origin})
	}
}

// partBlock adds the block of one part of a content list ({text},
// {text, thought}, {functionResponse}, other parts kept as JSON text).
func (n *normalizer) partBlock(key sdk.Str, p abi.Value, origin string, out *sdk.Out) {
	switch {
	case p.Kind() == abi.KindString:
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(p), Origin: origin})
	case p.Get("text").Kind() == abi.KindString:
		txt := p.Get("text")
		if p.Get("thought").Truthy() {
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(txt)})
			return
		}
		o := origin
		if o == sdk.OriginPrompt && InjectedContext(txt.Raw()[1:]) {
			// @file contents the CLI appended to the prompt, the
			// session context it opens a chat with, its note on
			// the agent the user picked, or its record of a
			// command the user ran in shell mode.
			o = sdk.OriginInjected
		}
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(txt), Origin: o})
	case p.Get("functionResponse").Kind() == abi.KindObject:
		// A tool's result sent back to the model (JSONL session
		// files write it as a user record): a tool_result, never
		// the user's prompt.
		out.Block(key, -1, functionResponse(p.Get("functionResponse")))
	default:
		// Inline data, file references: not text; keep their JSON
		// so nothing the user sent is lost.
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(p), Origin: origin})
	}
}

// functionResponse is the tool_result block of a functionResponse part
// {id, name, response{output | error}}.
func functionResponse(fr abi.Value) sdk.Block {
	b := sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.StringOf(fr.Get("id"))}
	resp := fr.Get("response")
	if e := resp.Get("error"); e.Exists() && e.Kind() != abi.KindNull {
		b.ToolContent, b.IsError = ErrText(e), true
	} else if o := resp.Get("output"); o.Exists() && o.Kind() != abi.KindNull {
		b.ToolContent = sdk.Text(o)
	} else {
		b.ToolContent = sdk.JSON(resp)
	}
	return b
}

// referencedFiles starts the part in which the CLI inlines the files a
// prompt references with @path.
const referencedFiles = "--- Content from referenced files ---"

// sessionContext starts the context the CLI opens a chat with (the date,
// the OS, the workspace's files), written as the first user message.
const sessionContext = "<session_context>"

// systemNote starts the part the CLI adds to a prompt that names an
// agent (@generalist): "The user has explicitly selected the following
// agent(s)...".
const systemNote = "<system_note>"

// shellCommand starts the user message the CLI adds to the history when
// the user runs a command in shell mode ("!cmd"): "I ran the following
// shell command:\n```sh\n<command>\n```\n\nThis produced the following
// result:\n```\n<output>\n```" (shellCommandProcessor.ts,
// addShellCommandToGeminiHistory; Qwen Code's the same). The CLI wrote
// it, after a command the user ran himself; no answer follows it.
const shellCommand = "I ran the following shell command:"

// InjectedContext reports whether a prompt part (its raw JSON string, after the
// quote) is context the CLI wrote: it starts, after blank lines, with
// one of the CLI's markers.
func InjectedContext(raw []byte) bool {
	return opens(raw, referencedFiles, sessionContext, systemNote, shellCommand)
}

// opens reports whether a JSON string's raw text (after the quote)
// starts, after blank lines, with one of markers.
func opens(raw []byte, markers ...string) bool {
	for {
		switch {
		case len(raw) > 0 && raw[0] == ' ':
			raw = raw[1:]
		case len(raw) >= 2 && raw[0] == '\\' && (raw[1] == 'n' || raw[1] == 'r' || raw[1] == 't'):
			raw = raw[2:]
		default:
			for _, m := range markers {
				if sdk.HasPrefix(raw, m) {
					return true
				}
			}
			return false
		}
	}
}

// ToolKind maps a Gemini CLI tool name to the transcript's tool kind.
// update_topic and write_todos record the agent's plan, not an action on
// the world, hence "think".
func ToolKind(name string) string {
	for _, t := range &toolKinds {
		if t.name == name {
			return t.kind
		}
	}
	return "other"
}

// toolKinds is ToolKind's table. A loop over a table is a few hundred bytes of
// module where a switch of string cases is, under TinyGo -opt=2, a
// byte-by-byte compare of every literal (2-3 KB), and each byte of code
// costs the host time to validate at every start.
var toolKinds = [...]struct{ name, kind string }{
	{"run_shell_command", "execute"}, {"shell", "execute"}, {"read_file", "read"}, {"read_many_files", "read"},
	{"list_directory", "read"}, {"ls", "read"}, {"write_file", "edit"}, {"replace", "edit"}, {"edit", "edit"},
	{"smart_edit", "edit"}, {"glob", "search"}, {"search_file_content", "search"}, {"grep", "search"},
	{"grep_search", "search"}, {"ripgrep", "search"}, {"web_fetch", "fetch"}, {"google_web_search", "fetch"},
	{"web_search", "fetch"}, {"update_topic", "think"}, {"write_todos", "think"}, {"save_memory", "think"},
}

// unstatedOutput leaves out the output of a stream-json result whose
// stated total exceeds its input and output (sdk.Usage.OutputUnstated):
// the stream's output_tokens are the model's candidates alone
// (gemini-cli's convertToStreamStats writes tokens.candidates), its
// total_tokens the API's total, which counts the thoughts and any
// tool-use prompt besides, neither stated apart. A warning says what the
// stream stated. Where the total adds up, or is not stated, the output
// is kept as stated.
func unstatedOutput(u *sdk.Usage, out *sdk.Out) {
	o, _ := u.Output.Value()
	total, _ := u.Total.Value()
	v, gap := u.OutputUnstated()
	if gap == 0 {
		return
	}
	out.Warn("gemini stream-json states no thought tokens: output_tokens left out (the stream's " + strconv.FormatInt(o, 10) +
		" are the answer's alone; its total " + strconv.FormatInt(total, 10) + " is " +
		strconv.FormatInt(gap, 10) + " above input and answer: thoughts, and any tool-use prompt)")
	*u = v
}
