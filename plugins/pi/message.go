package pi

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// message maps one AgentMessage of the step itself.
func (n *normalizer) message(m abi.Value, key, id, ts sdk.Str, out *sdk.Out) {
	n.messageIn(m, key, id, ts, sdk.Str{}, out)
}

// messageIn maps one AgentMessage (a session entry's message, a --mode
// json message_end's, a sub-agent's) in scope (unset: the step).
func (n *normalizer) messageIn(m abi.Value, key, id, ts, scope sdk.Str, out *sdk.Out) {
	if m.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("message/(no message)"))
		return
	}
	role := m.Get("role")
	switch sdk.Name(role) {
	case "user":
		if !contentMessageIn(key, id, ts, scope, m.Get("content"), sdk.OriginPrompt, out) {
			out.Ignored(sdk.S("message/user"))
		}
	case "assistant":
		n.assistant(m, key, id, ts, scope, out)
	case "toolResult":
		n.toolResult(m, key, ts, scope, out)
	case "bashExecution":
		bashExecution(m, key, ts, scope, out)
	case "custom", "hookMessage":
		// An extension's message in the model's context.
		if !contentMessageIn(key, id, ts, scope, m.Get("content"), sdk.OriginInjected, out) {
			out.Ignored(sdk.S("message/custom"))
		}
	case "branchSummary", "compactionSummary":
		if s := m.Get("summary"); s.Kind() == abi.KindString && !s.Is("") {
			injectedIn(key, id, ts, scope, sdk.Text(s), out)
		} else {
			out.Ignored(sdk.S("message/" + sdk.TypeName(role)))
		}
	case "system":
		// The system prompt (recorded by later versions), or a change
		// of it (toolsAdded, toolsRemoved: the tools' schemas, not
		// mapped).
		if !systemMessage(key, id, ts, scope, m, out) {
			out.Ignored(sdk.S("message/system"))
		}
	default:
		out.Unmapped(sdk.S("message/" + sdk.TypeName(role)))
	}
}

// systemMessage writes a system message's text as a message.user of
// origin system_prompt: its content, else, when that is empty, its
// sections (an object of named parts, as later versions record the
// prompt they built: preamble, cwd, docs, rules, tools, ...), one block
// each in their order; false when it holds no text.
func systemMessage(key, id, ts, scope sdk.Str, m abi.Value, out *sdk.Out) bool {
	c := m.Get("content")
	if !(c.Kind() == abi.KindString && c.Is("")) && contentMessageIn(key, id, ts, scope, c, sdk.OriginSystemPrompt, out) {
		return true
	}
	secs := m.Get("sections")
	opened := false
	for it := secs.Iter(); secs.Kind() == abi.KindObject && it.Next(); {
		v := it.Value()
		if v.Kind() != abi.KindString || v.Is("") {
			continue
		}
		if !opened {
			opened = true
			out.Open(key, sdk.Message{User: true, ID: id, Time: ts, Scope: scope})
		}
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v), Origin: sdk.OriginSystemPrompt})
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
	return opened
}

// injected writes a message.user of one injected-context block.
func injected(key, id, ts, text sdk.Str, out *sdk.Out) { injectedIn(key, id, ts, sdk.Str{}, text, out) }

func injectedIn(key, id, ts, scope, text sdk.Str, out *sdk.Out) {
	out.Open(key, sdk.Message{User: true, ID: id, Time: ts, Scope: scope})
	out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: text, Origin: sdk.OriginInjected})
	out.Close(key, sdk.MessageEnd{})
}

// contentMessage writes content (a string or text and image parts) as a
// message.user whose text blocks have origin; false when it holds no
// text.
func contentMessage(key, id, ts sdk.Str, content abi.Value, origin string, out *sdk.Out) bool {
	return contentMessageIn(key, id, ts, sdk.Str{}, content, origin, out)
}

func contentMessageIn(key, id, ts, scope sdk.Str, content abi.Value, origin string, out *sdk.Out) bool {
	opened := false
	open := func() {
		if !opened {
			opened = true
			out.Open(key, sdk.Message{User: true, ID: id, Time: ts, Scope: scope})
		}
	}
	switch content.Kind() {
	case abi.KindString:
		open()
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(content), Origin: origin})
	case abi.KindArray:
		it := content.Iter()
		for it.Next() {
			p := it.Value()
			if p.Get("type").Is("text") {
				open()
				out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.StringOf(p.Get("text")), Origin: origin})
			}
			// Images are not mapped (the transcript has no block for
			// them); the raw capture keeps them.
		}
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
	return opened
}

// assistant writes an assistant message, its tool calls, its usage and
// cost, and the error it ended with.
func (n *normalizer) assistant(m abi.Value, key, id, ts, scope sdk.Str, out *sdk.Out) {
	f := n.fMsg.of(m)
	model := sdk.StringOf(f[kModel])
	out.Open(key, sdk.Message{ID: id, Model: model, Time: ts, Scope: scope})
	var final sdk.FinalText
	type call struct{ id, name, args abi.Value }
	var calls []call
	it := f[kContent].Iter()
	for it.Next() {
		p := it.Value()
		switch sdk.Name(p.Get("type")) {
		case "text":
			t := p.Get("text")
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.StringOf(t)})
			final.Add(t)
		case "thinking":
			t := p.Get("thinking")
			// Text withheld (encrypted reasoning, a redacted block):
			// the model reasoned, the text is not there.
			redacted := p.Get("redacted").Truthy() || (t.Kind() != abi.KindString || t.Is("")) && p.Get("thinkingSignature").Exists()
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.StringOf(t), Redacted: redacted})
		case "toolCall":
			cid, name, args := p.Get("id"), p.Get("name"), p.Get("arguments")
			out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(name), ToolID: sdk.StringOf(cid), ToolInput: sdk.JSON(args)})
			calls = append(calls, call{cid, name, args})
		default:
			// An image or a part type of a later version: the raw
			// capture keeps it.
			out.Warn("assistant message " + clip(key.String()) + ": a content part of type " + sdk.TypeName(p.Get("type")) + " is not mapped")
		}
	}
	stop := f[kStopReason]
	u := n.fUsage.of(f[kUsage])
	usage := usageOf(f[kUsage], u)
	out.Close(key, sdk.MessageEnd{StopReason: sdk.StringOf(stop), Usage: usage})
	for _, c := range calls {
		kind := kindOf(sdk.Name(c.name))
		tc := sdk.ToolCall{CallID: sdk.StringOf(c.id), Name: sdk.StringOf(c.name), Input: sdk.JSON(c.args), Kind: kind, Scope: scope, Time: ts}
		if kind == "execute" {
			tc.Command = sdk.StringOf(c.args.Get("command"))
		}
		out.ToolCall(tc)
	}
	errMsg := f[kErrorMessage]
	if (stop.Is("error") || stop.Is("aborted")) && !scope.IsSet() {
		// Pi runs no tool of a response that failed or was aborted: its
		// calls end cancelled, unless a result for one follows.
		why := "the response was aborted before the call ran"
		if stop.Is("error") {
			why = "the response ended in an error before the call ran"
		}
		for _, c := range calls {
			if id := c.id.String(); id != "" {
				n.unrun = append(n.unrun, unrunCall{id: id, name: c.name.String(), why: why})
			}
		}
	}
	if scope.IsSet() {
		// A sub-agent's figures stay on its messages: the step's are
		// the session's own (as Claude's result.usage).
		if stop.Is("error") {
			out.Error(sdk.ProviderError{Message: sdk.StringOf(errMsg), Scope: scope})
		}
		return
	}
	out.Usage(usage, sdk.ModeAdd)
	if c := u[kCost].Get("total"); c.Kind() == abi.KindNumber {
		// The cost Pi states for the call, 0 included.
		if cost, ok := c.Float(); ok {
			out.Cost(cost, sdk.ModeAdd)
		}
	}
	if m := model; m.IsSet() && !m.IsEmpty() {
		out.Meta(sdk.Meta{Model: m, Override: true})
	}
	n.lastFailed, n.lastErr = false, ""
	switch {
	case stop.Is("error"):
		msg := sdk.StringOf(errMsg)
		if msg.IsEmpty() {
			msg = sdk.S("the model call failed")
		}
		n.lastFailed, n.lastErr = true, msg.String()
		out.Error(sdk.ProviderError{Message: msg})
	case stop.Is("length"):
		// The model stopped at the output token limit: the answer is
		// cut short.
		out.Warn("the response was cut at the output token limit")
	case stop.Is("aborted"):
		w := "the response was aborted"
		if errMsg.Kind() == abi.KindString && !errMsg.Is("") {
			w += ": " + clip(sdk.View(errMsg))
		}
		out.Warn(w)
		if !scope.IsSet() {
			// The turn was cut short, as a Codex turn_aborted is: a
			// session whose last answer this is is incomplete (the
			// host's session rule); a later answer makes it ok again.
			out.Status(sdk.StatusIncomplete, sdk.S(w), sdk.LevelError)
		}
	}
	final.Report(out)
}

// usageOf reads Pi's usage: input is the input read neither from nor
// written to a cache (sdk.Split), totalTokens the total Pi states.
// f holds u's members.
func usageOf(u abi.Value, f *fields) sdk.Usage {
	if u.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	in := sdk.IntOf(f[kInput])
	if _, ok := in.Value(); !ok {
		// Without input the whole input is unknown: only the parts.
		return sdk.Usage{CacheRead: sdk.IntOf(f[kCacheRead]), CacheWrite: sdk.IntOf(f[kCacheWrite]),
			Output: sdk.IntOf(f[kOutput]), Reasoning: sdk.IntOf(f[kReasoning]), Total: sdk.IntOf(f[kTotalTokens])}
	}
	s := sdk.Split(in, sdk.IntOf(f[kCacheRead]), sdk.IntOf(f[kCacheWrite]))
	s.Output, s.Reasoning, s.Total = sdk.IntOf(f[kOutput]), sdk.IntOf(f[kReasoning]), sdk.IntOf(f[kTotalTokens])
	return s
}

// unrunCall is a call of a response that failed or was aborted: Pi never
// ran it.
type unrunCall struct{ id, name, why string }

// flushUnrun reports the calls Pi did not run as cancelled, once the
// results that follow their response (Pi writes them at once) are past.
func (n *normalizer) flushUnrun(out *sdk.Out) {
	for _, u := range n.unrun {
		out.ToolResult(sdk.ToolResult{CallID: sdk.S(u.id), Name: sdk.S(u.name), IsError: true, Status: sdk.S(toolCancelled), Error: sdk.S(u.why)})
	}
	n.unrun = n.unrun[:0]
}

// Tool result statuses: the closed set of the transcript format (spec §4).
const (
	toolOK        = "ok"
	toolError     = "error"
	toolCancelled = "cancelled"
	toolDenied    = "denied"
)

// toolResult writes a tool result message: its output is its text parts,
// its status error when Pi marked it isError or the output states a
// non-zero exit code ("Command exited with code N", the bash tool's last
// line), cancelled when the command was aborted or timed out. Sub-agents
// the result's details hold become child runs first.
func (n *normalizer) toolResult(m abi.Value, key, ts, scope sdk.Str, out *sdk.Out) {
	cid := sdk.StringOf(m.Get("toolCallId"))
	if !scope.IsSet() {
		id := sdk.View(m.Get("toolCallId"))
		for i, u := range n.unrun {
			if u.id == id {
				n.unrun = append(n.unrun[:i], n.unrun[i+1:]...)
				break
			}
		}
	}
	n.subagents(m.Get("details"), cid, scope, out)
	r := sdk.ToolResult{CallID: cid, Name: sdk.StringOf(m.Get("toolName")), Scope: scope, Time: ts}
	var text string
	r.Output, text = contentText(m.Get("content"))
	failed := m.Get("isError").Truthy()
	code, found := exitCode(text)
	if found {
		r.ExitCode = sdk.N(code)
		failed = failed || code != 0
	}
	setStatus(&r, failed, code, found, text, lineBefore(text))
	out.ToolResult(r)
}

// setStatus sets a result's status and error text from its output text;
// why is what follows "exit code N: " in the error of a command that
// failed with one.
func setStatus(r *sdk.ToolResult, failed bool, code int64, found bool, text, why string) {
	if !failed {
		r.Status = sdk.S(toolOK)
		return
	}
	r.IsError = true
	last := lastLine(text)
	switch t := strings.TrimSpace(text); {
	case t == "Tool execution was blocked":
		// An extension's tool_call handler blocked the call before it
		// ran, giving no reason (agent-loop.ts).
		r.Status, r.Error = sdk.S(toolDenied), sdk.S("the call was blocked before it ran")
		return
	case t == "Skipped due to queued user message.":
		// The user's steering message arrived first: Pi skipped the
		// call (agent-loop.ts, skipToolCall).
		r.Status, r.Error = sdk.S(toolCancelled), sdk.S("skipped due to a queued user message")
		return
	case last == "Command aborted":
		r.Status, r.Error = sdk.S(toolCancelled), sdk.S("command aborted")
		return
	case strings.HasPrefix(last, "Command timed out after "):
		r.Status, r.Error = sdk.S(toolCancelled), sdk.S(strings.ToLower(last[:1])+last[1:])
		return
	}
	r.Status = sdk.S(toolError)
	if found {
		msg := "exit code " + strconv.FormatInt(code, 10)
		if why != "" {
			msg += ": " + why
		}
		r.Error = sdk.S(msg)
		return
	}
	if l := firstLine(text); l != "" {
		r.Error = sdk.S(l)
		return
	}
	r.Error = sdk.S("the tool call failed")
}

// contentText is a tool result's text parts joined by newlines, as a
// record field and as text to read; unset when content is not an array
// (no output given). Image parts are left out.
func contentText(content abi.Value) (sdk.Str, string) {
	if content.Kind() == abi.KindString {
		return sdk.Text(content), content.String()
	}
	if content.Kind() != abi.KindArray {
		return sdk.Str{}, ""
	}
	var b []byte
	n := 0
	var one sdk.Str
	it := content.Iter()
	for it.Next() {
		p := it.Value()
		if !p.Get("type").Is("text") {
			continue
		}
		if n > 0 {
			b = append(b, '\n')
		}
		t := p.Get("text")
		one = sdk.StringOf(t)
		b = sdk.AppendText(b, t)
		n++
	}
	s := string(b)
	if n == 1 && one.IsSet() {
		return one, s
	}
	return sdk.S(s), s
}

// exitCode finds the exit code the bash tool appends to a failed
// command's output as its last line: "Command exited with code N".
func exitCode(text string) (int64, bool) {
	const marker = "Command exited with code "
	last := lastLine(text)
	if !strings.HasPrefix(last, marker) {
		return 0, false
	}
	return wire.ParseInt([]byte(last[len(marker):]))
}

// lastLine is the last non-blank line of text, trimmed.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	return strings.TrimSpace(text)
}

// lineBefore is the last non-blank line before the last one, clipped:
// where a failing command usually says why.
func lineBefore(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	} else {
		return ""
	}
	return clipLine(lastLine(text))
}

// firstLine is the first non-blank line of text, clipped.
func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return clipLine(l)
		}
	}
	return ""
}

func clipLine(l string) string {
	if len(l) > 300 {
		n := 300
		for n > 0 && l[n]&0xC0 == 0x80 {
			n--
		}
		l = l[:n]
	}
	return l
}

// bashExecution is a command the user ran himself ("!cmd"): a tool call
// of its own (it ran, the model did not ask for it) with its result.
func bashExecution(m abi.Value, key, ts, scope sdk.Str, out *sdk.Out) {
	cmd := m.Get("command")
	// Its input is the command, as the bash tool's would be: the JSON
	// string as the line holds it.
	var input sdk.Str
	if cmd.Kind() == abi.KindString {
		in := append([]byte(`{"command":`), cmd.Raw()...)
		if doc, ok := sdk.Parse(append(in, '}')); ok {
			input = sdk.JSON(doc.Root())
		}
	}
	out.ToolCall(sdk.ToolCall{CallID: key, Name: sdk.S("bash"), Input: input, Kind: "execute", Command: sdk.StringOf(cmd), Scope: scope, Time: ts})
	r := sdk.ToolResult{CallID: key, Name: sdk.S("bash"), Output: sdk.StringOf(m.Get("output")), Scope: scope, Time: ts}
	text := m.Get("output").String()
	code, found := m.Get("exitCode").Int()
	if found {
		r.ExitCode = sdk.N(code)
	}
	if m.Get("cancelled").Truthy() {
		r.IsError, r.Status, r.Error = true, sdk.S(toolCancelled), sdk.S("command cancelled")
	} else {
		setStatus(&r, found && code != 0, code, found, text, clipLine(lastLine(text)))
	}
	out.ToolResult(r)
}

// kindOf maps a Pi tool name to the transcript's tool kind.
func kindOf(name string) string {
	for _, t := range &toolKinds {
		if t.name == name {
			return t.kind
		}
	}
	return "other"
}

// toolKinds is kindOf's table: Pi's built-in tools, and the names OMP
// and OpenClaw use for the same actions. (A loop over a table is far
// smaller, under TinyGo, than a switch of string cases.)
var toolKinds = [...]struct{ name, kind string }{
	{"bash", "execute"}, {"exec", "execute"}, {"shell", "execute"}, {"read", "read"}, {"ls", "read"},
	{"edit", "edit"}, {"write", "edit"}, {"apply_patch", "edit"}, {"grep", "search"}, {"find", "search"},
	{"glob", "search"}, {"web_fetch", "fetch"}, {"fetch", "fetch"}, {"web_search", "fetch"},
	{"todo", "think"}, {"todo_write", "think"},
}
