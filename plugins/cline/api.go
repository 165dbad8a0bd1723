package cline

import (
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// apiHistory maps a version of the conversation (an Anthropic
// MessageParam[] with Cline's ts, modelInfo and metrics): what is new or
// changed since the version read before, each message in order.
func (n *normalizer) apiHistory(msgs abi.Value, out *sdk.Out) {
	hashes, todo := n.diff(msgs, n.api, "api_conversation_history", true, out)
	n.reuse(n.api)
	n.api = hashes
	if len(todo) == 0 {
		out.Ignored(sdk.S("api_conversation_history (unchanged)"))
		return
	}
	copied := 0
	for _, i := range todo {
		m := n.elems[i]
		if m.Kind() != abi.KindObject {
			out.Warn("api_conversation_history: message " + strconv.Itoa(i) + " is not an object")
			continue
		}
		if ts, ok := m.Get("ts").Int(); ok && ts > 0 && ts < n.started {
			// Copied by /fork from the session this one was forked
			// from: that session's turn, which its own run holds.
			copied++
			continue
		}
		n.compaction(m, out)
		// The key "m<i>[.<version>]" in a buffer of the normalizer's,
		// written again for the next message: the key is passed only
		// to this message's Out calls, and a Str needs to be valid
		// only until the Out method it is passed to returns. (Two to
		// four allocations a message in TinyGo, the most of any site.)
		n.keyBuf = strconv.AppendInt(append(n.keyBuf[:0], 'm'), int64(i), 10)
		at := n.slot(i)
		if v := at.versions; v > 0 {
			n.keyBuf = strconv.AppendInt(append(n.keyBuf, '.'), int64(v), 10)
		}
		at.versions++
		key := sdk.S(unsafe.String(unsafe.SliceData(n.keyBuf), len(n.keyBuf)))
		n.revising = n.changedInPlace(i, m)
		switch sdk.Name(m.Get("role")) {
		case "assistant":
			n.assistant(m, i, key, out)
		case "user":
			n.user(m, i, key, out)
		case "":
			if m.Get("type").Is("reasoning") {
				// Roo Code 3.31.2 to 3.32.0 (0fdbd392e8) kept an OpenAI
				// Responses model's encrypted reasoning as an item of its
				// own before the answer: the answer's thinking, withheld.
				n.reasoningNext = true
				continue
			}
			fallthrough
		default:
			out.Warn("api_conversation_history: message " + strconv.Itoa(i) + " has role " + sdk.TypeName(m.Get("role")) + ", not mapped")
		}
	}
	n.revising = false
	if copied > 0 && !n.forked {
		n.forked = true
		out.Warn("a fork: " + strconv.Itoa(copied) + " message(s) dated before this session started were copied from the session it was forked from, whose run holds them: not reported here")
	}
	n.settle(out)
}

// changedInPlace says whether message i of the conversation, m, is a
// new version of the message read at that index before, changed in
// place (the same ts, or none stated), rather than another message
// written there after the history was cut back (a checkpoint restored,
// a message deleted or edited: a ts of its own). It notes m's ts. The
// calls and results of such a version are reported revised (ABI 1.13):
// the host writes each as a new version of the call or result of its id
// reported before, counted once with its latest input and outcome, not
// as a second call (a call id Cline keeps, or the id made of the
// message's index for its XML tools).
func (n *normalizer) changedInPlace(i int, m abi.Value) bool {
	ts, _ := m.Get("ts").Int()
	at := n.slot(i)
	if at.versions <= 1 {
		at.ts = ts
		return false
	}
	same := at.ts == ts
	at.ts = ts
	return same
}

// settle reports, after the conversation, what the UI said happened
// after its last message: the completion Cline showed for an
// attempt_completion call still waiting (the call ran: it presents the
// result), and the errors the task ended on.
func (n *normalizer) settle(out *sdk.Out) {
	if n.completion != "" {
		for i, p := range n.pending {
			if p.name == "attempt_completion" {
				n.pending = append(n.pending[:i:i], n.pending[i+1:]...)
				out.ToolResult(sdk.ToolResult{CallID: sdk.S(p.id), Name: sdk.S(p.name), Output: sdk.S(n.completion), Time: sdk.S(n.completionTime)})
				n.completed, n.completion = p.id, ""
				break
			}
		}
	}
	for _, e := range n.deferred {
		out.Error(sdk.ProviderError{Message: sdk.S(e.msg), Code: sdk.S(e.code)})
		n.heldBack = true
	}
	n.deferred = n.deferred[:0]
}

// assistant writes a model response: its text, thinking and tool calls
// (native tool_use blocks, or the XML tool tags older Cline wrote in
// the text).
func (n *normalizer) assistant(m abi.Value, idx int, key sdk.Str, out *sdk.Out) {
	// A call still waiting for its result when the model answers again
	// never got one: it stays dangling.
	n.pending = n.pending[:0]
	ts := msTime(m.Get("ts"))
	model := sdk.StringOf(m.Get("modelInfo").Get("modelId"))
	if !model.IsSet() || model.IsEmpty() {
		// The Cline SDK's sessions: modelInfo {id, provider}.
		model = sdk.StringOf(m.Get("modelInfo").Get("id"))
	}
	out.Open(key, sdk.Message{Model: model, Time: ts})
	type call struct {
		id, name string
		input    sdk.Str
		command  sdk.Str
	}
	var calls []call
	addCall := func(id, name string, input, command sdk.Str) {
		calls = append(calls, call{id, name, input, command})
		n.pending = append(n.pending, pendingCall{id: id, name: name})
	}
	xml := 0
	if n.reasoningNext {
		n.reasoningNext = false
		out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
	}
	n.reasoningDetails(m.Get("reasoning_details"), key, out)
	content := m.Get("content")
	if content.Kind() == abi.KindString {
		n.assistantText(content, idx, key, &xml, addCall, out)
	}
	for it := content.Iter(); content.Kind() == abi.KindArray && it.Next(); {
		p := it.Value()
		switch sdk.Name(p.Get("type")) {
		case "text":
			n.assistantText(p.Get("text"), idx, key, &xml, addCall, out)
		case "thinking":
			t := p.Get("thinking")
			redacted := (t.Kind() != abi.KindString || t.Is("")) && p.Get("signature").Exists()
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.StringOf(t), Redacted: redacted})
		case "redacted_thinking":
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
		case "reasoning":
			// Roo Code's reasoning of a provider other than Anthropic:
			// {text, summary} (3.33.3 on, 7715158d51), or an OpenAI
			// Responses model's {summary, encrypted_content} (3.32.1 on,
			// 4a9ff8f4ef), withheld unless its summary says it.
			reasoningBlock(p.Get("text"), p.Get("summary"), p.Get("encrypted_content").Exists(), key, out)
		case "thoughtSignature":
			// Roo Code's Gemini thought signature (3.33.0 on, f7c2e8d164): an opaque
			// token the provider wants back, no content.
		case "tool_use":
			id, name, input := p.Get("id").String(), p.Get("name").String(), p.Get("input")
			if id == "" {
				id = "cline-" + strconv.Itoa(idx) + "-" + strconv.Itoa(len(calls))
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(name), ToolID: sdk.S(id), ToolInput: sdk.JSON(input)})
			addCall(id, name, sdk.JSON(input), sdk.StringOf(input.Get("command")))
		default:
			// An image or a block type of a later version: the raw
			// capture keeps it.
			out.Warn("api_conversation_history: message " + strconv.Itoa(idx) + ": a content block of type " + sdk.TypeName(p.Get("type")) + " is not mapped")
		}
	}
	out.Close(key, sdk.MessageEnd{Usage: n.metrics(m, idx, out)})
	if model.IsSet() && !model.IsEmpty() {
		if mm := model.String(); mm != n.model {
			n.model = mm
			out.Meta(sdk.Meta{Model: sdk.S(mm), Override: true})
		}
	}
	for _, c := range calls {
		kind := kindOf(c.name)
		tc := sdk.ToolCall{CallID: sdk.S(c.id), Name: sdk.S(c.name), Input: c.input, Kind: kind, Time: ts, Revised: n.revising}
		if kind == "execute" {
			tc.Command = c.command
		}
		out.ToolCall(tc)
	}
}

// metrics reports, once per message, the usage and cost of the model
// request that wrote assistant message m of a sessions folder's
// document, as the Cline SDK states them in its metrics
// (sdk/packages/agents/src/agent-runtime.ts: usageDelta, the run's usage
// after the request less before it, so one request's; inputTokens the
// whole prompt, the cache read and written included, as in its usage
// events: sdkUsage), and returns the usage for the message. A task
// folder's conversation is not read so: the UI's requests state its
// figures (older Cline's metrics have another shape), and a sessions
// folder has no UI messages, so nothing else counts these requests.
func (n *normalizer) metrics(m abi.Value, idx int, out *sdk.Out) sdk.Usage {
	mt := m.Get("metrics")
	if !n.sessionDoc || n.sawUI || mt.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	// A message rewritten in place (Cline rewrites the document whole)
	// is the same request: told by its id, else its ts, else its index.
	key := m.Get("id").String()
	if key == "" {
		if ts, ok := m.Get("ts").Int(); ok && ts > 0 {
			key = "@" + strconv.FormatInt(ts, 10)
		} else {
			key = "#" + strconv.Itoa(idx)
		}
	}
	if n.metered[key] {
		return sdk.Usage{}
	}
	u := sdkUsage(mt.Get("inputTokens"), mt.Get("outputTokens"), mt.Get("cacheReadTokens"), mt.Get("cacheWriteTokens"))
	c, costOK := mt.Get("cost").Float()
	if u == (sdk.Usage{}) && !costOK {
		return sdk.Usage{}
	}
	if n.metered == nil {
		n.metered = map[string]bool{}
	}
	n.metered[strings.Clone(key)] = true
	if u != (sdk.Usage{}) {
		out.Usage(u, sdk.ModeAdd)
	}
	if costOK {
		out.Cost(c, sdk.ModeAdd)
	}
	f := figuresOfMetrics(mt)
	n.meteredSum = figures{n.meteredSum.in + f.in, n.meteredSum.out + f.out, n.meteredSum.cw + f.cw, n.meteredSum.cr + f.cr, n.meteredSum.cost + f.cost}
	return u
}

// figuresOfMetrics are the figures of the SDK's metrics (or a
// compaction's usageBefore), in the SDK's terms: in is the whole prompt.
func figuresOfMetrics(mt abi.Value) figures {
	return figuresNamed(mt, "inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens")
}

// compaction counts what a sessions folder's compaction states that was
// never counted. The SDK's compaction (basic-compaction.ts, cline/cline
// 21cb8d2) strips every message's metrics and keeps their sum, added to
// the earlier compactions', in the first message's metadata {kind
// "compaction", usageBefore}: the usage of every request made before it.
// What twasm counted (n.meteredSum: metrics read before, earlier
// compactions' remainders) is among those requests; the rest (requests
// whose messages were compacted before a sync read them) is counted here,
// as one request's usage.
func (n *normalizer) compaction(m abi.Value, out *sdk.Out) {
	md := m.Get("metadata")
	ub := md.Get("usageBefore")
	if !n.sessionDoc || n.sawUI || !md.Get("kind").Is("compaction") || ub.Kind() != abi.KindObject {
		return
	}
	f := figuresOfMetrics(ub)
	s := n.meteredSum
	f = figures{max(f.in-s.in, 0), max(f.out-s.out, 0), max(f.cw-s.cw, 0), max(f.cr-s.cr, 0), f.cost - s.cost}
	if f.cost < 1e-12 {
		f.cost = 0
	}
	if f == (figures{}) {
		return
	}
	n.meteredSum = figures{s.in + f.in, s.out + f.out, s.cw + f.cw, s.cr + f.cr, s.cost + f.cost}
	if f.in != 0 || f.out != 0 || f.cw != 0 || f.cr != 0 {
		out.Usage(sdk.Usage{Input: sdk.N(f.in), Output: sdk.N(f.out), CacheRead: sdk.N(f.cr), CacheWrite: sdk.N(f.cw)}, sdk.ModeAdd)
	}
	if f.cost != 0 {
		out.Cost(f.cost, sdk.ModeAdd)
	}
	out.Warn("a compaction dropped the metrics of requests not read before: what its usageBefore states for them is counted, as one request's")
}

// assistantText writes a text of the model's: as it is, or, where it
// holds XML tool tags (Cline before native tool calls), the text around
// them and a tool_use block for each.
func (n *normalizer) assistantText(t abi.Value, idx int, key sdk.Str, xml *int, addCall func(id, name string, input, command sdk.Str), out *sdk.Out) {
	if t.Kind() != abi.KindString {
		return
	}
	// A view of the line (no copy): what is kept of it, a call's name,
	// is copied.
	s := sdk.View(t)
	uses := xmlToolUses(s)
	if len(uses) == 0 {
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(t)})
		return
	}
	pos := 0
	for _, u := range uses {
		if before := strings.TrimSpace(s[pos:u.start]); before != "" {
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.S(before)})
		}
		id := "cline-" + strconv.Itoa(idx) + "-x" + strconv.Itoa(*xml)
		*xml++
		input := sdk.RawJSON(u.inputJSON())
		out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(u.name), ToolID: sdk.S(id), ToolInput: input})
		cmd := sdk.Str{}
		if c, ok := u.param("command"); ok {
			cmd = sdk.S(c)
		}
		addCall(id, strings.Clone(u.name), input, cmd) // kept (pending)
		pos = u.end
	}
	if after := strings.TrimSpace(s[pos:]); after != "" {
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.S(after)})
	}
}

// user writes a user turn: the prompt or the user's feedback, Cline's
// own notices and environment details (injected context), and the tool
// results it carries (as tool_result blocks, or as text "[tool for
// 'x'] Result: ..." in Cline's older turns).
func (n *normalizer) user(m abi.Value, idx int, key sdk.Str, out *sdk.Out) {
	ts := msTime(m.Get("ts"))
	opened := false
	text := func(s sdk.Str, raw string) {
		if !opened {
			opened = true
			out.Open(key, sdk.Message{User: true, Time: ts})
		}
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: s, Origin: originOf(raw, idx)})
	}
	content := m.Get("content")
	n.resumed(content, ts, out)
	if content.Kind() == abi.KindString {
		s := content.String()
		name, body, ok := parseTextResult(s)
		if !ok && n.subtaskResult(s, ts, out) {
			ok = true
		} else if !ok || !n.textResult(name, body, ts, out) {
			text(sdk.Text(content), s)
		}
	}
	nblocks := 0
	if content.Kind() == abi.KindArray {
		nblocks = content.Len()
	}
	if content.Kind() != abi.KindString && nblocks == 0 {
		out.Warn("api_conversation_history: message " + strconv.Itoa(idx) + " (the user's) has no content")
		return
	}
	for i := 0; i < nblocks; i++ {
		p := content.Index(i)
		switch sdk.Name(p.Get("type")) {
		case "text":
			t := p.Get("text")
			s := t.String()
			name, body, ok := parseTextResult(s)
			if ok && i+1 < nblocks {
				// attempt_completion with a command: Cline writes the
				// command's outcome in the next block ("[attempt_completion]
				// Result: Done", then "Command failed with exit code 1.
				// Output: ..."): it is that result's output.
				next := content.Index(i + 1)
				if ns := next.Get("text").String(); next.Get("type").Is("text") && commandStatus(ns) {
					body = strings.TrimRight(body, "\n") + "\n" + ns
					i++
				}
			}
			if ok && strings.TrimSpace(body) == "" && i+1 < nblocks {
				// Older Cline wrote the header and the output as two
				// blocks: "[list_files for '.'] Result:", then the
				// output.
				next := content.Index(i + 1)
				if next.Get("type").Is("text") {
					ns := next.Get("text").String()
					if _, _, isHead := parseTextResult(ns); !isHead && originOf(ns, idx) == sdk.OriginPrompt {
						body = ns
						i++
					}
				}
			}
			if !ok {
				if nname, nok := notExecuted(s); nok && n.notRun(nname, s, ts, out) {
					continue
				}
				if n.subtaskResult(s, ts, out) {
					continue
				}
			}
			if !ok || !n.textResult(name, body, ts, out) {
				if ok {
					s = body // feedback on a completion: the user's words
				}
				text(sdk.Text(t), s)
			}
		case "tool_result":
			n.blockResult(p, ts, out)
		case "image", "document":
			// The transcript has no block for them; the raw capture
			// keeps them, and a warning says so.
			out.Warn("api_conversation_history: message " + strconv.Itoa(idx) + ": the user's " + sdk.TypeName(p.Get("type")) + " is not mapped (the raw capture keeps it)")
		default:
			out.Warn("api_conversation_history: message " + strconv.Itoa(idx) + ": a content block of type " + sdk.TypeName(p.Get("type")) + " is not mapped")
		}
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
}

// originOf says what a user text is: the prompt (the task, the user's
// feedback), or context Cline put in the turn itself.
func originOf(s string, idx int) string {
	t := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(t, "<environment_details>"),
		strings.HasPrefix(t, "# task_progress"),
		strings.HasPrefix(t, "[TASK RESUMPTION]"),
		strings.HasPrefix(t, "# TODO LIST UPDATE REQUIRED"),
		strings.HasPrefix(t, "(The user did not provide a new message"),
		strings.HasPrefix(t, "The user has provided feedback on the results. Consider their input") && !strings.Contains(t, "<feedback>"),
		strings.HasPrefix(t, "[ERROR]"),
		strings.HasPrefix(t, "[NOTE]"),
		strings.HasPrefix(t, "Tool [") && strings.Contains(t, "not executed"),
		strings.HasPrefix(t, "[Continue assisting"),
		strings.HasPrefix(t, "[new_task completed] Result:"),
		subtaskReport(t),
		strings.HasPrefix(t, "<explicit_instructions"),
		strings.HasPrefix(t, "The user has accepted the condensed conversation summary"),
		strings.HasPrefix(t, "This session is being continued from a previous conversation"):
		return sdk.OriginInjected
	}
	return sdk.OriginPrompt
}

// subtaskReport reports whether s is the report Roo Code 3.35 to 3.48
// hands a task whose sub-task ended, "Subtask <child id>
// completed.\n\nResult:\n<its result>" (ClineProvider.
// reopenParentFromDelegation): a new_task call's tool_result under the
// native tool protocol, a user text under the XML one.
func subtaskReport(s string) bool {
	first, rest, _ := strings.Cut(s, "\n")
	id, ok := strings.CutSuffix(strings.TrimPrefix(first, "Subtask "), " completed.")
	return ok && len(first) > len("Subtask  completed.") && id != "" && !strings.ContainsAny(id, " \t/\\") && strings.HasPrefix(rest, "\nResult:")
}

// unnamedSubTask reports whether t is the result Roo Code before 3.35
// (Kilo Code before 4.135) gave a new_task call that started a sub-task:
// "Successfully created new task in <mode> mode with message: ..." (the
// XML tool protocol, NewTaskTool) or "[new_task completed] Result: ..."
// (the native one, Task.completeSubtask, once the sub-task ended), both
// removed by the delegation of 3.35 (9b5f639). Neither names the
// sub-task, whose folder names no parent either (its HistoryItem's
// parentTaskId was kept in the editor's state only, until
// history_item.json in 3.49).
func unnamedSubTask(t string) bool {
	return strings.HasPrefix(t, "Successfully created new task in ") || strings.HasPrefix(t, "[new_task completed] Result:")
}

// subtaskResult reports a sub-task's report written as a user text (the
// XML tool protocol: subtaskReport) as the result of the new_task call
// waiting for it, the call's own result never saved (Roo pushes it after
// the task was saved and closed, delegateParentAndOpenChild). False when
// s is no such report or no new_task call waits: the text is then
// Roo's injected context.
func (n *normalizer) subtaskResult(s string, ts sdk.Str, out *sdk.Out) bool {
	if !subtaskReport(s) {
		return false
	}
	for i, p := range n.pending {
		if p.name == "new_task" {
			n.pending = append(n.pending[:i:i], n.pending[i+1:]...)
			n.result(p.id, p.name, s, false, ts, out)
			return true
		}
	}
	return false
}

// textResult reports a tool result Cline wrote as a user text ("[name
// for 'x'] Result:" then the output), paired with the oldest call of
// that name still waiting. False for the user's reply to a completion
// whose call is answered already (by the completion Cline showed): that
// is the user's text.
func (n *normalizer) textResult(name, body string, ts sdk.Str, out *sdk.Out) bool {
	id := ""
	for i, p := range n.pending {
		if p.name == name {
			id = p.id
			n.pending = append(n.pending[:i:i], n.pending[i+1:]...)
			break
		}
	}
	if id == "" {
		if name == "attempt_completion" && n.completed != "" {
			n.completed = ""
			return false
		}
		if len(n.pending) == 1 {
			// The header names the tool otherwise than its call does
			// (use_subagents' result is "[subagents] Result:"), and one
			// call waits: the results follow their calls, so it is that
			// call's.
			id, name = n.pending[0].id, n.pending[0].name
			n.pending = n.pending[:0]
			n.result(id, name, body, false, ts, out)
			return true
		}
		// No call of that name waits (a result of a call the
		// conversation no longer holds): the host synthesizes one.
		id = "cline-result-" + name + "-" + strconv.Itoa(len(n.api))
	}
	n.result(id, name, body, false, ts, out)
	return true
}

// notExecuted reads Cline's notice that a call did not run, "Tool
// [name] was not executed because a tool has already been used in this
// message..." (it runs one tool per message: the other calls of the
// message get this), or "... was interrupted and not executed due to user
// rejecting a previous tool": the tool's name.
func notExecuted(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "Tool [") {
		return "", false
	}
	i := strings.Index(t, "] was ")
	if i < 0 || !strings.Contains(t[i:min(len(t), i+64)], "not executed") {
		return "", false
	}
	name := t[len("Tool ["):i]
	if name == "" || strings.ContainsAny(name, " \t'\"[]") {
		return "", false
	}
	return name, true
}

// notRun reports, for the oldest call of that name still waiting, that
// it did not run: an error result with Cline's notice (false when no
// call of that name waits: the notice is then a text of the turn).
func (n *normalizer) notRun(name, notice string, ts sdk.Str, out *sdk.Out) bool {
	for i, p := range n.pending {
		if p.name == name {
			n.pending = append(n.pending[:i:i], n.pending[i+1:]...)
			t := strings.TrimSpace(notice)
			out.ToolResult(sdk.ToolResult{CallID: sdk.S(p.id), Name: sdk.S(name), Output: sdk.S(t), Error: sdk.S(clip(t)), IsError: true, Time: ts, Revised: n.revising})
			return true
		}
	}
	return false
}

// blockResult reports a tool_result block.
func (n *normalizer) blockResult(p abi.Value, ts sdk.Str, out *sdk.Out) {
	id := p.Get("tool_use_id").String()
	name := ""
	for i, c := range n.pending {
		if c.id == id {
			name = c.name
			n.pending = append(n.pending[:i:i], n.pending[i+1:]...)
			break
		}
	}
	var body strings.Builder
	c := p.Get("content")
	switch c.Kind() {
	case abi.KindString:
		body.WriteString(c.String())
	case abi.KindArray:
		it := c.Iter()
		for it.Next() {
			if t := it.Value().Get("text"); t.Kind() == abi.KindString {
				if body.Len() > 0 {
					body.WriteByte('\n')
				}
				body.WriteString(t.String())
			}
		}
	}
	n.result(id, name, body.String(), p.Get("is_error").Truthy(), ts, out)
}

// result reports a tool result: an error when Cline says the tool
// failed, denied when the user refused it.
func (n *normalizer) result(id, name, body string, isErr bool, ts sdk.Str, out *sdk.Out) {
	r := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S(name), Output: sdk.S(body), Time: ts, IsError: isErr, Revised: n.revising}
	t := strings.TrimSpace(body)
	if name == "new_task" && unnamedSubTask(t) {
		out.Warn("roo: new_task call " + clip(id) + " started a sub-task that neither task names (Roo Code before 3.35, Kilo Code before 4.135: the result states no task id, the sub-task's folder no parent): a host of plugin ABI 1.12 and later links the sub-task's run at this call when it is the one task whose first message is this call's message and this the one call of the task stating it; otherwise it is archived as a run of its own, its messages and tokens not in this run's")
	}
	switch {
	case strings.HasPrefix(t, "The tool execution failed with the following error:"):
		r.IsError = true
		msg := t
		if i := strings.Index(t, "<error>"); i >= 0 {
			msg = t[i+len("<error>"):]
			if j := strings.Index(msg, "</error>"); j >= 0 {
				msg = msg[:j]
			}
		}
		r.Error = sdk.S(strings.TrimSpace(msg))
	case strings.HasPrefix(t, "The user denied this operation"):
		r.Status = sdk.S("denied")
	case strings.HasPrefix(t, interruptedText):
		// Cline's (and Roo's) stand-in result for a call the task was
		// interrupted in, written when the task is resumed.
		r.Status, r.Error = sdk.S("cancelled"), sdk.S(interruptedText)
	case name == "execute_command" && (strings.HasPrefix(t, cmdTimedOut) || strings.HasPrefix(t, cmdCancelled)):
		// Cline stopped waiting for the command ("Command timed out
		// after 30 seconds. Running in background.", the output so far
		// after it): it has no outcome yet, none is ok. Or the user
		// stopped it (CommandExecutor: "Command was cancelled by the
		// user.", then "Output captured before cancellation:").
		first, _, _ := strings.Cut(t, "\n")
		r.Status, r.Error = sdk.S("cancelled"), sdk.S(strings.TrimSpace(first))
	case isErr:
		r.Error = sdk.S(clip(t))
	case failedWithoutWrapper(t) != "":
		// A failure Roo Code (before it wrapped every failure in
		// toolError) and some forks write as the result itself.
		r.IsError = true
		r.Error = sdk.S(clip(failedWithoutWrapper(t)))
	default:
		if code, ok := statedExitCode(name, t); ok {
			r.ExitCode = sdk.N(code)
			if code != 0 {
				r.IsError = true
				r.Error = sdk.S("exit code " + strconv.FormatInt(code, 10))
				break
			}
			r.Status = sdk.S("ok")
		} else if outcomeStated(name, t) {
			r.Status = sdk.S("ok")
		}
	}
	out.ToolResult(r)
}

// failedWithoutWrapper is the error a result states without Cline's
// toolError words, or "": Roo Code's apply_diff wrote "Unable to apply
// diff to file: ...\n\n<error_details>...</error_details>" as the result
// (Roo Code 3.x before it wrapped it), its read_file a <files> list whose
// <file> holds <error>...</error> for a file it could not read, and a
// missing parameter "Missing value for required parameter ...".
func failedWithoutWrapper(t string) string {
	switch {
	case strings.HasPrefix(t, "Unable to apply"), strings.HasPrefix(t, "Missing value for required parameter"):
		first, _, _ := strings.Cut(t, "\n")
		return strings.TrimSpace(first)
	case strings.Contains(t, "<error_details>"):
		msg := t[strings.Index(t, "<error_details>")+len("<error_details>"):]
		msg, _, _ = strings.Cut(msg, "</error_details>")
		return strings.TrimSpace(msg)
	case (strings.HasPrefix(t, "<files>") || strings.HasPrefix(t, "<file>")) && strings.Contains(t, "<error>"):
		msg := t[strings.Index(t, "<error>")+len("<error>"):]
		msg, _, _ = strings.Cut(msg, "</error>")
		return strings.TrimSpace(msg)
	}
	return ""
}

// outcomeStated reports whether a result of tool name that says none of
// the failures above (Cline and Roo Code write a tool's failure as
// "The tool execution failed with the following error:", a refusal as
// "The user denied this operation", formatResponse.toolError and
// toolDenied) is the tool's success: the result of any tool Cline runs
// itself. A shell command whose result states no exit code (older
// Cline's "Command executed.", a completion's command) may have failed,
// and an MCP server's result keeps no failure flag in its text: their
// outcome is not stated, so they get no status, never ok.
func outcomeStated(name, body string) bool {
	switch name {
	case "execute_command", "run_commands", "use_mcp_tool", "access_mcp_resource":
		return false
	case "attempt_completion":
		// "Done", or the user's feedback on the result; a command the
		// completion ran writes its output after it.
		return !strings.Contains(body, "Command ")
	case "use_subagents":
		// "Subagent results:\nTotal: N\nSucceeded: N\nFailed: N": ok
		// when none failed; some failing is not the call's success.
		return !strings.Contains(body, "\nFailed: ") || strings.Contains(body, "\nFailed: 0\n")
	}
	return true
}

// parseTextResult splits "[name for 'x'] Result:\nbody" (or "[name]
// Result:") into the tool's name and its output. The name is the tool's
// (letters, digits, '_' and '-') up to a space or the bracket; what
// follows it describes the call and may run over several lines (Roo
// Code's "[new_task in Code mode: '<message>']", "[switch_mode to 'x'
// because: y]", a multi-line command's "[execute_command for '...']"),
// so the header ends at the first "] Result:". "[new_task completed]
// Result:" is not a result: it is the sub-task's report, which Roo hands
// its parent after the call's own result (originOf: injected context).
func parseTextResult(s string) (name, body string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return "", "", false
	}
	n := 1
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9' || s[n] == '_' || s[n] == '-') {
		n++
	}
	if n == 1 || n == len(s) || (s[n] != ']' && s[n] != ' ') {
		return "", "", false
	}
	name = s[1:n]
	i := strings.Index(s[n:], "] Result:")
	if i < 0 {
		return "", "", false
	}
	i += n
	if name == "new_task" && s[n:i] == " completed" {
		return "", "", false
	}
	body = strings.TrimPrefix(s[i+len("] Result:"):], "\n")
	if strings.IndexByte(s[i:], '\n') < 0 {
		body = strings.TrimSpace(s[i+len("] Result:"):])
	}
	return name, body, true
}

// kindOf classifies Cline's and Roo's tools.
func kindOf(name string) string {
	switch name {
	case "execute_command":
		return "execute"
	case "read_file", "list_files", "list_code_definition_names", "access_mcp_resource", "load_mcp_documentation", "fetch_instructions":
		return "read"
	case "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace", "search_replace", "edit_file", "new_rule", "apply_patch":
		return "edit"
	case "update_todo_list":
		return "think"
	case "search_files", "codebase_search":
		return "search"
	case "web_fetch", "web_search", "browser_action":
		return "fetch"
	}
	return "other"
}

// interruptedText is Cline's result for a call the task was interrupted
// in (its resume handlers write it for every call of the last message).
const interruptedText = "Task was interrupted before this tool call could be completed."

// resumed settles, before the user message that resumes the task
// ("[TASK RESUMPTION] This task was interrupted ..."), the calls still
// waiting that the message gives no result: they never returned. Older
// Cline versions and Roo write interruptedText as their results (read
// by result); newer Cline writes none. Each is cancelled, with Cline's
// own words as the error, and no output, ahead of the message, so that
// the resumption's prompt is what the task ends on when nothing answered
// it.
func (n *normalizer) resumed(content abi.Value, ts sdk.Str, out *sdk.Out) {
	if len(n.pending) == 0 || content.Kind() != abi.KindArray {
		return
	}
	resumes := false
	var ids, names []string
	it := content.Iter()
	for it.Next() {
		p := it.Value()
		switch sdk.Name(p.Get("type")) {
		case "tool_result":
			ids = append(ids, p.Get("tool_use_id").String())
		case "text":
			s := p.Get("text").String()
			if strings.HasPrefix(strings.TrimSpace(s), "[TASK RESUMPTION]") {
				resumes = true
			} else if name, _, ok := parseTextResult(s); ok {
				names = append(names, name)
			}
		}
	}
	if !resumes {
		return
	}
	kept := n.pending[:0]
	for _, p := range n.pending {
		if slices.Contains(ids, p.id) || slices.Contains(names, p.name) {
			kept = append(kept, p)
			continue
		}
		out.ToolResult(sdk.ToolResult{CallID: sdk.S(p.id), Name: sdk.S(p.name), Status: sdk.S("cancelled"), Error: sdk.S(interruptedText), Time: ts, Revised: n.revising})
	}
	n.pending = kept
}

// Cline's first line of a command's output.
const (
	cmdOK       = "Command executed successfully (exit code "
	cmdFailed   = "Command failed with exit code "
	cmdTimedOut = "Command timed out after "
	// cmdCancelled is the result of a command the user stopped with
	// the cancel button (CommandExecutor.execute, cline/cline 60d3048aa0).
	cmdCancelled = "Command was cancelled by the user."
)

// commandStatus says whether s starts with Cline's line on a command's
// outcome.
func commandStatus(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, cmdOK) || strings.HasPrefix(t, cmdFailed)
}

// clineExitCode is the exit code Cline states on the first or second
// line of a result ("Command executed successfully (exit code 0).",
// "Command failed with exit code 1."), and whether there is one. The
// second line is read only when second is set (attempt_completion's
// "Done" comes first).
func clineExitCode(body string, second bool) (int64, bool) {
	for i, line := range strings.SplitN(body, "\n", 3) {
		if i == 2 || i == 1 && !second {
			break
		}
		line = strings.TrimSpace(line)
		var rest string
		switch {
		case strings.HasPrefix(line, cmdOK):
			rest = line[len(cmdOK):]
		case strings.HasPrefix(line, cmdFailed):
			rest = line[len(cmdFailed):]
		default:
			continue
		}
		j := 0
		if strings.HasPrefix(rest, "-") {
			j++ // a signed code (Windows writes some as negative)
		}
		for j < len(rest) && j < 11 && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		code, err := strconv.ParseInt(rest[:j], 10, 64)
		if err != nil {
			return 0, false
		}
		return code, true
	}
	return 0, false
}

// statedExitCode is the exit code a command's result states (a non-zero
// one is an error, spec §4): Cline's line on the command's outcome
// (execute_command; attempt_completion's command, on the line after its
// "Done"), else Roo Code's header above the output ("Command executed in
// terminal ... Exit code: 1\nOutput:\n...", execute_command).
func statedExitCode(name, body string) (int64, bool) {
	if name != "execute_command" && name != "attempt_completion" {
		return 0, false
	}
	if code, ok := clineExitCode(body, name == "attempt_completion"); ok || name != "execute_command" {
		return code, ok
	}
	head, _ := sdk.SplitOutputHeader([]byte(body))
	return sdk.HeaderExitCode(head).Value()
}

// reasoningDetails writes an assistant message's reasoning_details
// (OpenRouter's format, which Roo Code keeps on the message for Gemini 3
// and others from 3.34.2, b531075626, in place of a reasoning block):
// reasoning.text {text} and reasoning.summary {summary} are thinking,
// reasoning.encrypted {data} thinking withheld.
func (n *normalizer) reasoningDetails(v abi.Value, key sdk.Str, out *sdk.Out) {
	for it := v.Iter(); v.Kind() == abi.KindArray && it.Next(); {
		d := it.Value()
		switch sdk.Name(d.Get("type")) {
		case "reasoning.text":
			reasoningBlock(d.Get("text"), abi.Value{}, false, key, out)
		case "reasoning.summary":
			reasoningBlock(abi.Value{}, d.Get("summary"), false, key, out)
		case "reasoning.encrypted":
			reasoningBlock(abi.Value{}, abi.Value{}, true, key, out)
		default:
			out.Warn("api_conversation_history: reasoning_details of type " + sdk.TypeName(d.Get("type")) + " is not mapped")
		}
	}
}

// reasoningBlock writes a thinking block: text, else the summary (a
// string, or a list of {text} parts joined by blank lines), else, when
// the reasoning was encrypted, a redacted one. Nothing is written for
// reasoning that states none of these.
func reasoningBlock(text, summary abi.Value, encrypted bool, key sdk.Str, out *sdk.Out) {
	if text.Kind() == abi.KindString && !text.Is("") {
		out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(text)})
		return
	}
	var b []byte
	switch summary.Kind() {
	case abi.KindString:
		b = sdk.AppendText(b, summary)
	case abi.KindArray:
		it := summary.Iter()
		for it.Next() {
			if t := it.Value().Get("text"); t.Kind() == abi.KindString && !t.Is("") {
				if len(b) > 0 {
					b = append(b, "\n\n"...)
				}
				b = sdk.AppendText(b, t)
			}
		}
	}
	switch {
	case len(b) > 0:
		out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(string(b))})
	case encrypted:
		out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
	}
}
