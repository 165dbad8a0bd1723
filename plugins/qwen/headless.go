package qwen

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtHeadless is the output of qwen -p --output-format stream-json (one
// message a line) or json (the same messages in one array).
const fmtHeadless = "stream-json"

// headless is what the normalizer keeps of a headless run between lines.
type headless struct {
	on   bool
	seq  int
	open []string // sub-agent scopes open (the agent calls' ids), in order
	// final is the last result message's outcome, reported at the end
	// (a sub-agent's failure is a result message too, before the run's).
	final   bool
	failed  bool
	errText string
}

// isHeadless says whether v is a message of Qwen Code's headless output
// (packages/cli/src/nonInteractive: Claude Code's stream-json shapes,
// session_id in snake case), not a chat record (sessionId).
func isHeadless(v abi.Value) bool {
	if !v.Get("session_id").Exists() || v.Get("sessionId").Exists() {
		return false
	}
	switch sdk.View(v.Get("type")) {
	case "system", "assistant", "user", "result", "stream_event":
		return true
	}
	return false
}

// headlessLine handles one message of the headless output (a line of
// stream-json, an element of json's array). The messages
// (nonInteractive/io/BaseJsonOutputAdapter.ts): system {subtype: init,
// session_id, cwd, model, qwen_code_version, ...} first, then assistant
// {message: {id, model, content, usage}, parent_tool_use_id} (one kind of
// block a message: a response with text and calls is split in several,
// the response's usage on the last), user {message: {content}} (the
// prompt; tool_result blocks {tool_use_id, is_error, content}), and at
// the end result {subtype, is_error, result, usage, error: {message}}.
// parent_tool_use_id names the agent call a sub-agent's message belongs
// to. stream_event (partial messages) and control messages (permission
// requests) repeat or precede what the messages say: declared ignored.
func (n *normalizer) headlessLine(v abi.Value, no int, out *sdk.Out) {
	h := &n.hl
	if !h.on {
		h.on = true
		out.Meta(sdk.Meta{Format: sdk.S(fmtHeadless), SessionID: sdk.Text(v.Get("session_id"))})
	}
	scope := n.headlessScope(v, out)
	switch typ := sdk.View(v.Get("type")); typ {
	case "system":
		switch st := sdk.View(v.Get("subtype")); st {
		case "init", "session_start":
			out.Meta(sdk.Meta{Model: sdk.StringOf(v.Get("model")), Cwd: sdk.StringOf(v.Get("cwd")), ProviderVersion: sdk.StringOf(v.Get("qwen_code_version"))})
			out.Ignored(sdk.S("system/" + st))
		case "model_fallback":
			d := v.Get("data")
			out.Warn("Qwen Code fell back from model " + d.Get("fromModel").String() + " to " + d.Get("toModel").String())
		default:
			out.Ignored(sdk.S("system/" + st))
		}
	case "assistant":
		n.headlessAssistant(v, no, scope, out)
	case "user":
		n.headlessUser(v, no, scope, out)
	case "result":
		n.headlessResult(v, scope, out)
	default:
		out.Ignored(sdk.S(typ))
	}
}

// headlessScope is the scope of a sub-agent's message (its
// parent_tool_use_id: the agent call's id), opened at its first message;
// unset for the run's own.
func (n *normalizer) headlessScope(v abi.Value, out *sdk.Out) sdk.Str {
	p := v.Get("parent_tool_use_id")
	if p.Kind() != abi.KindString || p.Is("") {
		return sdk.Str{}
	}
	if n.hl.scopeAt(sdk.View(p)) < 0 {
		n.hl.open = append(n.hl.open, p.String())
		out.ScopeOpen(sdk.Text(p), sdk.Text(p), sdk.Text(p), sdk.Str{})
	}
	return sdk.Text(p)
}

// scopeAt is the index of the open scope of agent call p, -1 when none.
func (h *headless) scopeAt(p string) int {
	for i, s := range h.open {
		if s == p {
			return i
		}
	}
	return -1
}

// headlessKey is a message's key: its uuid, else its line.
func (n *normalizer) headlessKey(v abi.Value, no int) sdk.Str {
	if id := sdk.StringOf(v.Get("uuid")); !id.IsEmpty() {
		return id
	}
	n.hl.seq++
	return sdk.S("h" + strconv.Itoa(no) + "-" + strconv.Itoa(n.hl.seq))
}

// headlessUsage reads a message's usage as Qwen Code fills it from
// usageMetadata (createUsage, computeUsageFromMetrics): input_tokens is
// promptTokenCount, every input token, cached ones included
// (cache_read_input_tokens of them), unlike Claude Code's; output_tokens
// the candidates; total_tokens the provider's total, which counts the
// thoughts beside the candidates where the provider did (usageOf).
func headlessUsage(u abi.Value) sdk.Usage {
	if u.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	us := sdk.Usage{
		Input: sdk.IntOf(u.Get("input_tokens")), Output: sdk.IntOf(u.Get("output_tokens")),
		CacheRead: sdk.IntOf(u.Get("cache_read_input_tokens")), Total: sdk.IntOf(u.Get("total_tokens")),
	}
	in, _ := us.Input.Value()
	o, _ := us.Output.Value()
	if t, ok := us.Total.Value(); ok && t > in+o {
		us.Reasoning, us.Output = sdk.N(t-in-o), sdk.N(t-in)
	}
	return us
}

// headlessAssistant handles an assistant message: its blocks, each
// tool_use a call, its usage (zero on all but a response's last message).
func (n *normalizer) headlessAssistant(v abi.Value, no int, scope sdk.Str, out *sdk.Out) {
	m := v.Get("message")
	key := n.headlessKey(v, no)
	out.Open(key, sdk.Message{ID: sdk.StringOf(m.Get("id")), Model: sdk.StringOf(m.Get("model")), Scope: scope})
	slot := 0
	it := m.Get("content").Iter()
	for ; it.Next(); slot++ {
		b := it.Value()
		switch sdk.View(b.Get("type")) {
		case "text":
			out.Block(key, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(b.Get("text"))})
		case "thinking":
			out.Block(key, slot, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(b.Get("thinking"))})
		case "tool_use":
			id, name, args := b.Get("id"), b.Get("name"), b.Get("input")
			tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(args), Kind: kindOf(sdk.View(name)), Scope: scope}
			if tc.Kind == "execute" {
				tc.Command = sdk.StringOf(args.Get("command"))
			}
			out.ToolUse(key, slot, tc)
			if n.calls == nil {
				n.calls = map[string]string{}
			}
			// The key is made from views of the line: kept, it is cloned.
			n.calls[strings.Clone(callKey(scope, sdk.View(id)))] = name.String()
		default:
			out.Unmapped(sdk.S("assistant/" + sdk.TypeName(b.Get("type"))))
		}
	}
	end := sdk.MessageEnd{StopReason: sdk.StringOf(m.Get("stop_reason"))}
	u := headlessUsage(m.Get("usage"))
	counted := scope.IsEmpty() && !isZero(u)
	if counted {
		end.Usage = u
	}
	out.Close(key, end)
	if counted {
		// The response's usage: added to the run's until the result
		// message states the run's whole.
		out.Usage(u, sdk.ModeAdd)
	}
}

// headlessUser handles a user message: the prompt (a sub-agent's, in its
// scope), or the results of calls.
func (n *normalizer) headlessUser(v abi.Value, no int, scope sdk.Str, out *sdk.Out) {
	c := v.Path("message", "content")
	if c.Kind() == abi.KindString {
		key := n.headlessKey(v, no)
		out.Open(key, sdk.Message{User: true, Scope: scope})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c), Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
		return
	}
	var key sdk.Str
	it := c.Iter()
	for it.Next() {
		b := it.Value()
		switch sdk.View(b.Get("type")) {
		case "text":
			if key.IsEmpty() {
				key = n.headlessKey(v, no)
				out.Open(key, sdk.Message{User: true, Scope: scope})
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(b.Get("text")), Origin: sdk.OriginPrompt})
		case "tool_result":
			n.headlessToolResult(b, scope, out)
		default:
			out.Unmapped(sdk.S("user/" + sdk.TypeName(b.Get("type"))))
		}
	}
	if !key.IsEmpty() {
		out.Close(key, sdk.MessageEnd{})
	}
}

// headlessToolResult reports a tool_result block: is_error, which Qwen
// Code sets for a failed, refused or cancelled call, is an error (denied
// when its text is Qwen Code's refusal, refused), and a shell call whose
// output states a non-zero exit code too; it closes the sub-agent scope
// the call ran.
func (n *normalizer) headlessToolResult(b abi.Value, scope sdk.Str, out *sdk.Out) {
	id := b.Get("tool_use_id")
	key := callKey(scope, sdk.View(id))
	res := sdk.ToolResult{CallID: sdk.Text(id), Scope: scope}
	if name := n.calls[key]; name != "" {
		res.Name = sdk.S(name)
	}
	text := sdk.Text(b.Get("content"))
	if b.Get("content").Kind() == abi.KindArray {
		var parts []string
		it := b.Get("content").Iter()
		for it.Next() {
			if t := it.Value().Get("text"); t.Kind() == abi.KindString {
				parts = append(parts, t.String())
			}
		}
		text = sdk.S(strings.Join(parts, "\n"))
	}
	if b.Get("is_error").Truthy() {
		res.IsError, res.Status, res.Error = true, sdk.S(toolError), text
		if refused(text.String()) {
			res.Status = sdk.S(toolDenied)
		}
		if res.Error.IsEmpty() {
			res.Error = sdk.S("the tool call failed")
		}
	} else {
		res.Status, res.Output = sdk.S(toolOK), text
		if kindOf(n.calls[key]) == "execute" {
			shellOutcome(&res)
		}
	}
	out.ToolResult(res)
	if i := n.hl.scopeAt(sdk.View(id)); i >= 0 {
		p := n.hl.open[i]
		n.hl.open = append(n.hl.open[:i], n.hl.open[i+1:]...)
		st, e := sdk.StatusOK, sdk.Str{}
		if res.IsError {
			st, e = sdk.StatusError, res.Error
		}
		out.ScopeClose(sdk.S(p), st, e)
	}
}

// headlessResult handles a result message: the run's outcome and usage
// (computeUsageFromMetrics: the session's, every model call's, set). A
// sub-agent's failure is a result message too (no usage, no
// parent_tool_use_id): the last result decides, reported at the end.
func (n *normalizer) headlessResult(v abi.Value, scope sdk.Str, out *sdk.Out) {
	h := &n.hl
	h.final, h.failed, h.errText = true, false, ""
	if scope.IsEmpty() {
		if u := headlessUsage(v.Get("usage")); !isZero(u) {
			out.Usage(u, sdk.ModeSet)
		}
	}
	if v.Get("is_error").Truthy() {
		h.failed = true
		h.errText = v.Path("error", "message").String()
		if h.errText == "" {
			h.errText = "Qwen Code reported " + v.Get("subtype").String()
		}
		out.Error(sdk.ProviderError{Message: sdk.S(h.errText), Code: sdk.StringOf(v.Get("subtype")), Scope: scope})
		return
	}
	if r := v.Get("result"); r.Kind() == abi.KindString && scope.IsEmpty() {
		out.Final(sdk.Text(r), false)
	}
}

// isZero says whether a usage states no token at all (Qwen Code writes
// {input_tokens: 0, output_tokens: 0} where it had none).
func isZero(u sdk.Usage) bool {
	in, _ := u.Input.Value()
	o, _ := u.Output.Value()
	return in == 0 && o == 0
}

// headlessEnd reports the run's outcome: the last result's, else (the
// output cut before it) nothing, and the host says incomplete; sub-agents
// still open are incomplete.
func (n *normalizer) headlessEnd(out *sdk.Out) {
	h := &n.hl
	for _, p := range h.open {
		out.ScopeClose(sdk.S(p), sdk.StatusIncomplete, sdk.S("the output ended before the sub-agent's call had its result"))
	}
	h.open = nil
	switch {
	case h.final && h.failed:
		out.Status(sdk.StatusError, sdk.S(h.errText), sdk.LevelTerminal)
	case h.final:
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	}
}
