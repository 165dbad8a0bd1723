package gemini

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// jsonOutput handles the single object of --output-format json:
// {session_id, response, stats{models, tools, files}, warnings?} on
// success, {session_id, error{type, message, code}} on a fatal error (the
// CLI writes that one to stderr, but a capture may merge it).
func (n *normalizer) jsonOutput(v abi.Value, out *sdk.Out) {
	n.setFormat(fmtJSON, out)
	n.session(v.Get("session_id"), out)
	models := v.Path("stats", "models")
	n.model(mainModel(models, "prompt"), out)
	if r := v.Get("response"); r.Kind() == abi.KindString && !r.Is("") {
		// The object holds no per-turn messages: the response is the
		// one assistant message the transcript can show.
		key := sdk.S(n.newKey("a"))
		out.Open(key, sdk.Message{})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(r)})
		out.Close(key, sdk.MessageEnd{})
		out.Final(sdk.Text(r), true)
	}
	var u sdk.Usage
	it := models.Iter()
	for it.Next() {
		u = addTokens(u, it.Value().Get("tokens"), "prompt", "candidates")
	}
	// The object is the CLI's summary of the whole run.
	out.Usage(u, sdk.ModeSet)
	stopped, hookStop := "", ""
	it = v.Get("warnings").Iter()
	for it.Next() {
		if stop, ok := stopOf(it.Value()); ok {
			stopped = stop
		} else if w := it.Value(); w.Kind() == abi.KindString && sdk.HasPrefix([]byte(w.String()), "Agent execution stopped: ") {
			// A hook stopped the run (AgentExecutionStopped: the json
			// object's warning, the response of the turn it stopped).
			hookStop = w.String()
		}
		out.Warn("gemini warning: " + it.Value().String())
	}
	if e := v.Get("error"); e.Exists() && e.Kind() != abi.KindNull {
		if e.Get("type").Is("FatalCancellationError") {
			// The user stopped the run (handleCancellationError), as a
			// stream's cancellation result says: the work is not done.
			out.Status(sdk.StatusIncomplete, sdk.S("the run was cancelled ("+sdk.Clip(ErrText(e).String(), 200)+")"), sdk.LevelTerminal)
			return
		}
		out.Status(sdk.StatusError, ErrText(e), sdk.LevelTerminal)
		return
	}
	if stopped != "" {
		// The CLI stopped the run before its work was done (stopOf),
		// which the object reports without an error.
		out.Status(sdk.StatusError, sdk.S(stopped), sdk.LevelTerminal)
		return
	}
	if r := v.Get("response"); r.Kind() == abi.KindString && r.Is("") {
		// The response is the text of the run's last turn
		// (nonInteractiveCli.ts resets it every turn); a turn the model
		// answered empty is an error of its own (InvalidStream): an
		// empty one is a request the model never got (noAnswer).
		why := noAnswer
		if hookStop != "" {
			why = "a hook stopped the run before the model answered its last request (" + sdk.Clip(hookStop, 300) + ")"
		}
		out.Status(sdk.StatusError, sdk.S(why), sdk.LevelTerminal)
		return
	}
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
}

// addTokens adds a Gemini token object to u. in names the total-prompt
// field ("prompt" in json stats, "input" in session files, both counting
// cached tokens), out the candidates field. "tool" (the API's
// toolUsePromptTokenCount: the prompt of a tool the model used, such as
// search grounding or code execution, not in promptTokenCount; the API's
// total is prompt + candidates + tool-use prompt + thoughts) is input,
// billed as such. Thoughts are output tokens and the reasoning part of
// them.
func addTokens(u sdk.Usage, t abi.Value, in, outField string) sdk.Usage {
	if t.Kind() != abi.KindObject {
		return u
	}
	input := sdk.IntOf(t.Get(in))
	if _, ok := input.Value(); !ok && in == "prompt" {
		// Without "prompt", "input" is the uncached part: add the cache.
		input = sdk.IntOf(t.Get("input")).Plus(sdk.IntOf(t.Get("cached")))
	}
	input = input.Plus(sdk.IntOf(t.Get("tool")))
	thoughts := sdk.IntOf(t.Get("thoughts"))
	u.Input = u.Input.Plus(input)
	u.CacheRead = u.CacheRead.Plus(sdk.IntOf(t.Get("cached")))
	u.Output = u.Output.Plus(sdk.IntOf(t.Get(outField)).Plus(thoughts))
	u.Reasoning = u.Reasoning.Plus(thoughts)
	u.Total = u.Total.Plus(sdk.IntOf(t.Get("total")))
	return u
}

// sessionFile handles a whole session file:
// {sessionId, projectHash, startTime, lastUpdated, messages[...]}.
func (n *normalizer) sessionFile(v abi.Value, out *sdk.Out) {
	n.setFormat(fmtSession, out)
	n.sessionMeta(v, true, out)
	it := v.Get("messages").Iter()
	for it.Next() {
		m := it.Value()
		if m.Kind() != abi.KindObject {
			out.Unmapped(sdk.S("message/non_object"))
			continue
		}
		n.sessionRecord(m, out)
	}
}

// sessionMeta reports a session file's id. A chat whose header says
// kind "subagent" (ChatRecordingService since 0.31) is a sub-agent's
// conversation, not a user's session, and the step says so: its prompt
// is the calling agent's. doc says the chat is one JSON document, as
// Gemini CLI wrote every chat before 0.39 (JSON Lines since, f744913):
// nothing then names the call that started a sub-agent (the parent's
// record of the call states its agentId from 0.39 on, 7d1de3b), so the
// warning says the call cannot be named. Before 0.37 such a chat is a
// session-<time>-<id>.json beside its session's, stating the session's
// own id, and is archived as a run of its own; in 0.37 and 0.38 a chat in
// a directory named by the session's id, linked as a child run at the
// session's latest part (see doc.go).
func (n *normalizer) sessionMeta(v abi.Value, doc bool, out *sdk.Out) {
	n.session(v.Get("sessionId"), out)
	if !v.Get("kind").Is("subagent") {
		return
	}
	id := clip([]byte(sdk.View(v.Get("sessionId"))))
	if doc {
		out.Warn("gemini: a sub-agent's chat (kind \"subagent\"), not a user's session: its prompt is the calling agent's; it states the id " + id +
			" (before Gemini CLI 0.37 its session's, since 0.37 its own). The call that started it cannot be named: a chat written as one JSON document (Gemini CLI before 0.39) names no call, and its session's record of the call does not name the chat")
		return
	}
	out.Warn("gemini: a sub-agent's chat (kind \"subagent\"), not a user's session: its prompt is the calling agent's; it states its own id " + id +
		", which its session's record of the call that started it names (agentId, Gemini CLI 0.39 and later)")
}

// header handles the header record of a JSONL session file. A second
// one (two sessions written to one file, as concurrent runs whose ids
// share a prefix were seen to do) reports nothing new: declared ignored
// when it names the same session, a warning when another.
func (n *normalizer) header(v abi.Value, out *sdk.Out) {
	id := v.Get("sessionId")
	switch {
	case !n.sessionSent:
		n.sessionMeta(v, false, out)
		n.sessionID = id.String()
	case n.sessionID != "" && !id.Is(n.sessionID):
		out.Warn("gemini session file holds a second session, " + sdk.TypeName(id) + ": its records are read as part of session " + n.sessionID)
	default:
		n.sessionID = id.String()
		out.Ignored(sdk.S("session_header"))
	}
}

// setMessages handles the messages of a $set patch: the history the CLI
// will send the model from now on, written when it rewrites that history
// (the session's start, a /rewind, a /compress or an automatic
// compression, a rolled-back turn). A rewrite is not conversation: a
// message whose id was seen is not reported again, nor is a copy of a
// message already reported (a compression keeps the recent turns under
// new ids: the same type and text, and calls that were reported). The
// others are history the CLI wrote itself (its session context, a
// compression's summary and its canned reply to it): one message.user of
// injected context holds them, and when the conversation had turns
// before, a warning says that the model's view was rewritten. It reports
// whether the patch wrote anything.
func (n *normalizer) setMessages(v abi.Value, out *sdk.Out) bool {
	msgs := v.Get("messages")
	if msgs.Kind() != abi.KindArray {
		return false
	}
	var key sdk.Str
	listed, added, copies := 0, 0, 0
	summary := false
	it := msgs.Iter()
	for it.Next() {
		m := it.Value()
		if m.Kind() != abi.KindObject {
			continue
		}
		listed++
		id := m.Get("id")
		if id.Kind() == abi.KindString && n.records[sdk.View(id)] {
			continue
		}
		t := m.Get("type")
		if !t.Is("user") && !t.Is("gemini") {
			// A notice (info, error, warning) is the CLI's, not the
			// model's history.
			n.seen(id)
			continue
		}
		if n.copied(m, t) {
			// A turn kept under a new id: reported as its original.
			n.seen(id)
			copies++
			continue
		}
		summary = summary || t.Is("user") && compressed(m.Get("content"))
		n.seen(id)
		if !key.IsSet() {
			key = sdk.S(n.newKey("u"))
			out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(id), Time: sdk.StringOf(m.Get("timestamp"))})
		}
		n.contentBlocks(key, m.Get("content"), sdk.OriginInjected, out)
		n.said(m, t) // a later rewrite that keeps it under a new id repeats it
		added++
	}
	if !key.IsSet() {
		return false
	}
	out.Close(key, sdk.MessageEnd{})
	switch {
	case n.turns == 0:
		// The history a session starts with: nothing is replaced.
	case summary || copies > 0:
		out.Warn("gemini session history compressed (/compress or automatically): the model now sees " +
			strconv.Itoa(listed) + " messages, " + strconv.Itoa(added) + " of them written by the CLI in place of earlier turns (a summary, recorded as injected context); " +
			"the turns it replaced stay in this transcript")
	default:
		out.Warn("gemini session history rewritten: the model now sees " + strconv.Itoa(listed) + " messages, " +
			strconv.Itoa(added) + " of them written by the CLI (recorded as injected context)")
	}
	return true
}

// compressed reports whether a user message's content opens with the
// summary a compression writes (<state_snapshot>, after a <scratchpad>
// in some builds).
func compressed(c abi.Value) bool {
	if c.Kind() == abi.KindString {
		return opens(c.Raw()[1:], stateSnapshot, scratchpad)
	}
	it := c.Iter()
	for it.Next() {
		if t := it.Value().Get("text"); t.Kind() == abi.KindString && opens(t.Raw()[1:], stateSnapshot, scratchpad) {
			return true
		}
	}
	return false
}

// stateSnapshot and scratchpad open the summary a compression writes.
const (
	stateSnapshot = "<state_snapshot>"
	scratchpad    = "<scratchpad>"
)

// seen notes a message id as reported.
func (n *normalizer) seen(id abi.Value) {
	if id.Kind() != abi.KindString || id.Is("") {
		return
	}
	if n.records == nil {
		n.records = map[string]bool{}
	}
	n.records[id.String()] = true
}

// said notes what a reported user or gemini record says, for copied.
func (n *normalizer) said(m, t abi.Value) {
	n.sayings.Add(n.saying(m, t))
}

// saying is a 64-bit hash (sdk.Hash64) of a record's type and text:
// what it says, kept small (a session's text is not held twice).
func (n *normalizer) saying(m, t abi.Value) uint64 {
	n.scratch = append(t.AppendText(n.scratch[:0]), 0)
	n.scratch = contentText(n.scratch, m.Get("content"))
	return sdk.Hash64(n.scratch)
}

// copied reports whether a message of a history rewrite repeats one
// already reported: of the same type, with the same text, and every call
// or call result it holds reported (a call's id is known).
func (n *normalizer) copied(m, t abi.Value) bool {
	if !n.sayings.Has(n.saying(m, t)) {
		return false
	}
	it := m.Get("content").Iter()
	for it.Next() {
		p := it.Value()
		for _, f := range [...]string{"functionCall", "functionResponse"} {
			if id := p.Path(f, "id"); id.Exists() && !n.called[sdk.View(id)] {
				return false
			}
		}
	}
	return true
}

// sessionRecord handles one message record of a session file.
func (n *normalizer) sessionRecord(m abi.Value, out *sdk.Out) {
	t := m.Get("type")
	ts := sdk.StringOf(m.Get("timestamp"))
	id := sdk.StringOf(m.Get("id"))
	switch {
	case t.Is("user"):
		if rid := m.Get("id"); rid.Kind() == abi.KindString && !rid.Is("") {
			if n.records[sdk.View(rid)] {
				// Written again (a JSONL patch listing it): reported.
				out.Ignored(sdk.S("message/user"))
				return
			}
			if n.records == nil {
				n.records = map[string]bool{}
			}
			n.records[rid.String()] = true
		}
		n.said(m, t)
		n.turns++
		if !shellRecord(m.Get("content")) {
			n.idle = false
		}
		key := sdk.S(n.newKey("u"))
		out.Open(key, sdk.Message{User: true, ID: id, Time: ts})
		n.contentBlocks(key, m.Get("content"), sdk.OriginPrompt, out)
		out.Close(key, sdk.MessageEnd{})
	case t.Is("gemini"):
		if rid := m.Get("id"); rid.Kind() == abi.KindString && !rid.Is("") {
			if n.records == nil {
				n.records = map[string]bool{}
			}
			if n.records[sdk.View(rid)] { // a view: copied below when kept
				// JSONL session files append a record again when it
				// changes (a tool call finished): only what is new, the
				// results, is reported; the message was written.
				out.Ignored(sdk.S("message/gemini"))
				it := m.Get("toolCalls").Iter()
				for it.Next() {
					n.idle = false
					n.sessionCall(rid, it.Value(), ts, out)
				}
				return
			}
			n.records[rid.String()] = true
		}
		n.said(m, t)
		n.turns++
		switch {
		case m.Get("toolCalls").Len() > 0:
			n.idle = false
		case len(contentText(nil, m.Get("content"))) > 0:
			n.idle = true
		}
		n.geminiRecord(m, id, ts, out)
	case t.Is("error"):
		e := sdk.Text(m.Get("content"))
		if e.IsEmpty() {
			e = sdk.S("gemini session error")
		}
		if n.idle {
			// The CLI records every error it shows (useHistoryManager:
			// an item of type error), a slash command's usage among
			// them: after an answer, with no prompt or call since, it
			// is not a turn's failure.
			out.Warn("gemini: the CLI reported an error between turns: " + e.String())
			return
		}
		n.lastErr = m.Get("content").String()
		out.Status(sdk.StatusError, e, sdk.LevelError)
	case t.Is("warning"):
		out.Warn("gemini warning: " + m.Get("content").String())
	case t.Is("info"):
		// The CLI's notices to the user ("Request cancelled.", update
		// hints): not the model's, ignored (spec §6.8).
		out.Ignored(sdk.S("message/info"))
	default:
		out.Unmapped(sdk.S("message/" + sdk.TypeName(t)))
	}
}

// shellRecord reports whether a user record's content is only the
// CLI's record of a command the user ran in shell mode (InjectedContext's
// shellCommand): no turn starts with it.
func shellRecord(c abi.Value) bool {
	if c.Kind() == abi.KindString {
		return opens(c.Raw()[1:], shellCommand)
	}
	n := 0
	it := c.Iter()
	for ; it.Next(); n++ {
		t := it.Value().Get("text")
		if t.Kind() != abi.KindString || !opens(t.Raw()[1:], shellCommand) {
			return false
		}
	}
	return n > 0
}

// geminiRecord writes one model response of a session file: its thoughts,
// its text and its tool calls, in the order the model produced them, then
// the tool.call/tool.result pair of every call.
func (n *normalizer) geminiRecord(m abi.Value, id, ts sdk.Str, out *sdk.Out) {
	k := sdk.S(n.newKey("g"))
	model := m.Get("model")
	out.Open(k, sdk.Message{ID: id, Model: sdk.StringOf(model), Time: ts})
	n.model(model, out)
	thoughts := m.Get("thoughts")
	it := thoughts.Iter()
	for it.Next() {
		th := it.Value()
		out.Block(k, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: thoughtText(th)})
	}
	calls := m.Get("toolCalls")
	n.answerBlocks(k, m.Get("content"), calls, thoughts.Len() > 0, ts, out)
	it = calls.Iter()
	for it.Next() {
		c := it.Value()
		out.Block(k, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(c.Get("name")), ToolID: sdk.StringOf(c.Get("id")), ToolInput: input(c.Get("args"))})
	}
	if t := contentText(nil, m.Get("content")); len(t) > 0 {
		n.answer, n.answerCut = t, false
		if len(t) > maxFinal {
			n.text, n.cut = t, false
			n.truncate()
			n.answer, n.answerCut = n.text, true
			n.text, n.cut = nil, false
		}
	}
	var u sdk.Usage
	u = addTokens(u, m.Get("tokens"), "input", "output")
	// Each record is one API response: its tokens add to the step.
	out.Usage(u, sdk.ModeAdd)
	// The calls are reported while the message is open: the host writes
	// them after it, as the model requested them.
	it = calls.Iter()
	for it.Next() {
		n.sessionCall(m.Get("id"), it.Value(), ts, out)
	}
	out.Close(k, sdk.MessageEnd{Usage: u})
}

// answerBlocks adds the blocks of a gemini record's content. Newer
// builds write the model's response there as its parts: its thoughts
// (thought:true), its text and its function calls. A thought part when
// the record lists its thoughts (thoughts[], written first) is one of
// them, said again: not a second thinking block. A functionCall part is
// a call the record's toolCalls state (their tool_use blocks follow the
// text), else a tool_use block of its own, and its tool.call, as soon as
// its id and name are known (a record written before its calls were
// scheduled); never text.
func (n *normalizer) answerBlocks(k sdk.Str, c, calls abi.Value, thoughts bool, ts sdk.Str, out *sdk.Out) {
	if c.Kind() != abi.KindArray {
		n.contentBlocks(k, c, "", out)
		return
	}
	it := c.Iter()
	for it.Next() {
		p := it.Value()
		fc := p.Get("functionCall")
		switch {
		case thoughts && p.Get("thought").Truthy() && p.Get("text").Kind() == abi.KindString:
		case fc.Kind() == abi.KindObject:
			id := fc.Get("id")
			if lists(calls, id) || id.Kind() != abi.KindString || id.Is("") {
				continue
			}
			out.Block(k, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(fc.Get("name")), ToolID: sdk.Text(id), ToolInput: input(fc.Get("args"))})
			call(id, fc.Get("name"), fc.Get("args"), ts, out)
		default:
			n.partBlock(k, p, "", out)
		}
	}
}

// lists reports whether toolCalls holds a call of id.
func lists(calls, id abi.Value) bool {
	it := calls.Iter()
	for it.Next() {
		if cid := it.Value().Get("id"); cid.Kind() == abi.KindString && cid.Is(sdk.View(id)) {
			return true
		}
	}
	return false
}

// contentText appends the answer text of a content value (a string, or
// the non-thought text parts of a list) to dst.
func contentText(dst []byte, c abi.Value) []byte {
	if c.Kind() == abi.KindString {
		return sdk.AppendText(dst, c)
	}
	it := c.Iter()
	for it.Next() {
		p := it.Value()
		if p.Kind() == abi.KindString {
			dst = sdk.AppendText(dst, p)
		} else if !p.Get("thought").Truthy() {
			dst = sdk.AppendText(dst, p.Get("text"))
		}
	}
	return dst
}

// thoughtText is a thought as one string: "subject\ndescription" (the CLI
// shows the subject as a heading above the description).
func thoughtText(th abi.Value) sdk.Str {
	subj, desc := th.Get("subject"), th.Get("description")
	switch {
	case th.Kind() == abi.KindString:
		return sdk.Text(th)
	case subj.Kind() == abi.KindString && !subj.Is("") && desc.Kind() == abi.KindString && !desc.Is(""):
		return sdk.S(subj.String() + "\n" + desc.String())
	case desc.Kind() == abi.KindString && !desc.Is(""):
		return sdk.Text(desc)
	case subj.Kind() == abi.KindString:
		return sdk.Text(subj)
	}
	return sdk.Text(th)
}

// sessionCall reports the tool.call and, when the call finished, the
// tool.result of one toolCalls entry of record rid (its id). The result
// is reported once per call of a record (see resultKey): a record
// appended again, or a document read again, adds only a result it did
// not have; another record may reuse the call id for a call of its own.
func (n *normalizer) sessionCall(rid, c abi.Value, msgTime sdk.Str, out *sdk.Out) {
	id := c.Get("id")
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("gemini session toolCall without id: no tool.call reported")
		return
	}
	t := sdk.StringOf(c.Get("timestamp"))
	if !t.IsSet() {
		t = msgTime
	}
	call(id, c.Get("name"), c.Get("args"), t, out) // the host ignores a call id it has seen
	if !n.called[sdk.View(id)] {
		if n.called == nil {
			n.called = map[string]bool{}
		}
		n.called[id.String()] = true
	}
	rk := n.resultKey(rid, id)
	if a := c.Get("agentId"); a.Kind() != abi.KindString || a.Is("") {
		n.startAgent(id, c.Get("name"), c.Get("args"), ownResponse(c.Get("result"), id).Path("functionResponse", "response", "output"), rk, t, out)
	}
	// else the sub-agent's own chat holds its conversation (Gemini CLI
	// 0.39 and later name it so): its run is the child, linked here by
	// the host (abi.Store.SubAgentCalls), not a scope made of the call.

	if n.resulted[string(rk)] { // a view: copied below when kept
		return
	}
	st := c.Get("status")
	r := sdk.ToolResult{CallID: sdk.Text(id), Time: t}
	switch {
	case st.Is("success"):
		r.Status = sdk.S(toolOK)
	case st.Is("error"), st.Is("cancelled"):
		r.IsError = true
	default:
		// scheduled, executing, awaiting_approval: the session was saved
		// before the call finished; the call stays dangling.
		return
	}
	r.Output, r.Error = functionOutput(c.Get("result"), id)
	if !r.Output.IsSet() {
		// No functionResponse: the display string is all there is.
		r.Output = sdk.StringOf(c.Get("resultDisplay"))
	}
	if ToolKind(sdk.View(c.Get("name"))) == "execute" {
		ShellExit(&r)
	}
	if r.IsError {
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(c.Get("resultDisplay"))
		}
		if r.Error.IsEmpty() {
			r.Error = r.Output
		}
		r.Status = sdk.S(FailedStatus(st, r.Error))
		r.Error = errorText(r.Error, "the tool call "+st.String())
	}
	if n.resulted == nil {
		n.resulted = map[string]bool{}
	}
	n.resulted[string(rk)] = true
	out.ToolResult(r)
	n.endAgent(r, rk, out)
}

// resultKey is the key of a call's result in resulted: the call id
// within the record that holds the call (its id, then a 0 byte, then
// the call's id). Model servers make call ids unique per response, not
// per session (a local one names every call call_1), so a later record
// may hold a call of its own under an id an earlier record's call has:
// its result is its own, and the earlier record read again (the whole
// document is, at every turn) must not be taken for it. A record without
// an id keys its calls by their ids alone. The key is built in
// n.scratch: a map lookup with string(key) does not copy it.
func (n *normalizer) resultKey(rid, id abi.Value) []byte {
	n.scratch = n.scratch[:0]
	if rid.Kind() == abi.KindString {
		n.scratch = append(n.scratch, sdk.View(rid)...)
	}
	n.scratch = append(append(n.scratch, 0), sdk.View(id)...)
	return n.scratch
}

// functionOutput reads the tool's return value from result[] parts:
// functionResponse.response.output (or .error) of the call id. Several
// parts are joined with newlines. Some builds write, in each call of a
// response that made several, the responses of them all (the batch sent
// back to the model, each part naming its call): a part that names
// another call is that call's, never this one's (its output, its error
// and the exit code it states belong to it), as long as a part names
// this call; parts that name no call are the call's.
func functionOutput(res, id abi.Value) (output, errS sdk.Str) {
	var parts []abi.Value
	var errV abi.Value
	own := namesCall(res, id)
	it := res.Iter()
	for it.Next() {
		fr := it.Value().Get("functionResponse")
		if own && !ofCall(fr, id) {
			continue
		}
		resp := fr.Get("response")
		if o := resp.Get("output"); o.Exists() && o.Kind() != abi.KindNull {
			parts = append(parts, o)
		}
		if e := resp.Get("error"); e.Exists() && e.Kind() != abi.KindNull && !errV.Exists() {
			errV = e
		}
	}
	switch len(parts) {
	case 0:
	case 1:
		output = sdk.Text(parts[0])
	default:
		var b []byte
		for i, p := range parts {
			if i > 0 {
				b = append(b, '\n')
			}
			b = append(b, sdk.Text(p).String()...)
		}
		output = sdk.S(string(b))
	}
	if errV.Exists() {
		errS = ErrText(errV)
	}
	return output, errS
}

// namesCall reports whether a part of result[] is a functionResponse
// naming the call id.
func namesCall(res, id abi.Value) bool {
	it := res.Iter()
	for it.Next() {
		if fr := it.Value().Get("functionResponse"); fr.Get("id").Kind() == abi.KindString && fr.Get("id").Is(sdk.View(id)) {
			return true
		}
	}
	return false
}

// ofCall reports whether a functionResponse is the call id's: it names
// that call, or none.
func ofCall(fr, id abi.Value) bool {
	fid := fr.Get("id")
	return fid.Kind() != abi.KindString || fid.Is("") || fid.Is(sdk.View(id))
}

// ownResponse is the first part of result[] that is the call id's (see
// functionOutput), else the first part.
func ownResponse(res, id abi.Value) abi.Value {
	if namesCall(res, id) {
		it := res.Iter()
		for it.Next() {
			if ofCall(it.Value().Get("functionResponse"), id) {
				return it.Value()
			}
		}
	}
	return res.Index(0)
}

// endSession settles a session file: its final text; the host settles
// its status (NoTerminal).
func (n *normalizer) endSession(out *sdk.Out) {
	n.final(true, out)
}

// exitLabel starts the line on which the CLI's shell tool states the
// command's exit code, after its output ("Command: ...\nDirectory:
// ...\nOutput: ...\nError: (none)\nExit Code: 1\nSignal: 0\n...").
const exitLabel = "Exit Code: "

// ShellExit reads the exit code a shell call's output (or error) states:
// it is the result's exit code, and a non-zero one makes a call the CLI
// marked "success" an error, "exit code N: <the output's last line>"
// (spec §4: the CLI reports success for a command that ran, whatever it
// returned).
func ShellExit(r *sdk.ToolResult) {
	text := []byte(r.Output.String())
	code := sdk.StatedExitCode(text, exitLabel)
	if _, ok := code.Value(); !ok && !r.Error.IsEmpty() {
		text = []byte(r.Error.String())
		code = sdk.StatedExitCode(text, exitLabel)
	}
	v, ok := code.Value()
	if !ok {
		return
	}
	r.ExitCode = code
	if v == 0 || r.IsError {
		return
	}
	r.IsError, r.Status = true, sdk.S(toolError)
	msg := "exit code " + strconv.FormatInt(v, 10)
	if l := shellReason(text); l != "" {
		msg += ": " + l
	}
	r.Error = sdk.S(msg)
}

// shellReason is the line of a shell output that most likely says why
// the command failed: the CLI's "Error:" line when it holds one, else the
// last line of the command's output before the CLI's trailer, clipped.
func shellReason(t []byte) string {
	end := len(t)
	for i := len(t) - len(exitLabel); i >= 0; i-- {
		if (i == 0 || t[i-1] == '\n') && sdk.HasPrefix(t[i:], exitLabel) {
			end = i
			break
		}
	}
	var last []byte
	for rest := t[:end]; len(rest) > 0; {
		j := 0
		for j < len(rest) && rest[j] != '\n' {
			j++
		}
		line := sdk.TrimSpace(rest[:j])
		rest = rest[min(j+1, len(rest)):]
		switch {
		case sdk.HasPrefix(line, "Error: "):
			if e := sdk.TrimSpace(line[len("Error: "):]); len(e) > 0 && string(e) != "(none)" {
				return clip(e)
			}
		case sdk.HasPrefix(line, "Output: "):
			if o := sdk.TrimSpace(line[len("Output: "):]); len(o) > 0 && string(o) != "(empty)" {
				last = o
			}
		case sdk.HasPrefix(line, "Command: "), sdk.HasPrefix(line, "Directory: "):
			// The CLI's header: what ran, not why it failed.
		case len(line) > 0:
			last = line
		}
	}
	return clip(last)
}

// clip is b as a string of at most 300 bytes, cut on a UTF-8 boundary.
func clip(b []byte) string {
	if len(b) > 300 {
		n := 300
		for n > 0 && b[n]&0xC0 == 0x80 {
			n--
		}
		b = b[:n]
	}
	return string(b)
}
