package cursor

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtStream is the format of `cursor-agent --print --output-format
// stream-json` (doc.go, "Stream").
const fmtStream = "stream-json"

// stream is the state of a stream-json input.
type stream struct {
	on       bool
	thinking []byte // thinking deltas not yet written
	// deltas: the stream has --stream-partial-output text deltas; seg is
	// the text of the deltas since the last segment written, turn the
	// text written since the last prompt (a consolidated re-send repeats
	// them).
	deltas    bool
	seg, turn []byte
	calls     map[string]bool // call ids reported
}

// streamLine handles a line of the stream: {"type": ...} with a
// session_id (system, user, thinking, assistant, tool_call, result).
func (n *normalizer) streamLine(typ string, v abi.Value, out *sdk.Out) {
	if !n.s.on {
		n.s.on, n.meta = true, true
		m := sdk.Meta{Format: sdk.S(fmtStream), SessionID: sdk.StringOf(v.Get("session_id"))}
		if m.SessionID.IsEmpty() && n.fact != "" {
			m.SessionID = sdk.S(n.fact)
		}
		if typ == "system" {
			m.Model, m.Cwd = sdk.StringOf(v.Get("model")), sdk.StringOf(v.Get("cwd"))
		}
		out.Meta(m)
	}
	switch typ {
	case "system":
		out.Ignored(sdk.S("system"))
	case "user":
		n.flushStream(out)
		n.s.turn = n.s.turn[:0]
		n.user("user", v.Get("message").Get("content"), out)
	case "thinking":
		if t := v.Get("text"); t.Kind() == abi.KindString {
			n.s.thinking = sdk.AppendText(n.s.thinking, t)
		}
		if v.Get("subtype").Is("completed") {
			n.flushThinking(out)
		}
		out.Ignored(sdk.S("thinking"))
	case "assistant":
		n.streamText(v, out)
	case "tool_call":
		n.flushStream(out)
		n.streamTool(v, out)
	case "result":
		n.flushStream(out)
		n.streamResult(v, out)
	default:
		out.Unmapped(sdk.S(typ))
	}
}

// streamText handles an assistant line. Without --stream-partial-output
// each is a whole segment of the answer (the text between two calls).
// With it, each is a delta (timestamp_ms, no model_call_id), then the
// segment again whole (model_call_id), and at the turn's end the turn's
// text again (neither): a segment is written once, from its whole
// re-send, else from its deltas; a re-send of what was written adds only
// what it holds beyond it.
func (n *normalizer) streamText(v abi.Value, out *sdk.Out) {
	text := assistantText(v.Get("message").Get("content"))
	switch {
	case v.Get("timestamp_ms").Exists() && !v.Get("model_call_id").Exists():
		n.s.deltas = true
		n.s.seg = append(n.s.seg, text...)
		out.Ignored(sdk.S("assistant_delta"))
		return
	case v.Get("model_call_id").Exists() && n.s.deltas:
		n.flushThinking(out)
		n.s.seg = n.s.seg[:0]
	case n.s.deltas:
		n.flushStream(out)
		t := string(n.s.turn)
		switch {
		case strings.HasPrefix(text, t):
			text = text[len(t):]
		case strings.HasSuffix(t, text):
			text = ""
		}
		if strings.TrimSpace(text) == "" {
			out.Ignored(sdk.S("assistant_resend"))
			return
		}
	default:
		n.flushThinking(out)
	}
	n.writeText(text, out)
}

// assistantText is the text of an assistant message's text blocks.
func assistantText(c abi.Value) string {
	if c.Kind() == abi.KindString {
		return c.String()
	}
	var b []byte
	it := c.Iter()
	for it.Next() {
		if p := it.Value(); p.Get("type").Is("text") {
			b = sdk.AppendText(b, p.Get("text"))
		}
	}
	return string(b)
}

// writeText writes a segment of the answer as an assistant message.
func (n *normalizer) writeText(text string, out *sdk.Out) {
	k := n.open(false, "", out)
	out.Block(k, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.S(text)})
	out.Close(k, sdk.MessageEnd{})
	n.s.turn = append(n.s.turn, text...)
	if strings.TrimSpace(text) != "" {
		n.final = text
	}
}

// flushThinking writes the thinking streamed so far as a message.
func (n *normalizer) flushThinking(out *sdk.Out) {
	if len(n.s.thinking) == 0 {
		return
	}
	k := n.open(false, "", out)
	out.Block(k, 0, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(string(n.s.thinking))})
	out.Close(k, sdk.MessageEnd{})
	n.s.thinking = n.s.thinking[:0]
}

// flushStream writes what the stream holds back: the thinking, and the
// deltas of a segment no whole re-send followed.
func (n *normalizer) flushStream(out *sdk.Out) {
	n.flushThinking(out)
	if len(n.s.seg) > 0 {
		t := string(n.s.seg)
		n.s.seg = n.s.seg[:0]
		n.writeText(t, out)
	}
}

// streamTool handles a tool_call line: {subtype started|completed,
// call_id, tool_call {<kind>ToolCall {args, result}}}. started is the
// call (a message holding its tool_use block, and its tool.call);
// completed its result (and its call, when started was not read).
func (n *normalizer) streamTool(v abi.Value, out *sdk.Out) {
	id := v.Get("call_id").String()
	if id == "" {
		out.Unmapped(sdk.S("tool_call_without_id"))
		return
	}
	key, body := toolBody(v.Get("tool_call"))
	name, kind := toolName(key, body)
	if !n.s.calls[id] {
		if n.s.calls == nil {
			n.s.calls = map[string]bool{}
		}
		n.s.calls[id] = true
		args := body.Get("args")
		if !args.Exists() {
			args = body.Get("arguments")
		}
		in := sdk.S("{}")
		if args.Exists() && args.Kind() != abi.KindNull {
			in = sdk.JSON(args)
		}
		k := n.open(false, "", out)
		out.Block(k, 0, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(name), ToolID: sdk.S(id), ToolInput: in})
		out.Close(k, sdk.MessageEnd{})
		c := sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: in, Kind: kind}
		if kind == "execute" {
			c.Command = sdk.StringOf(args.Get("command"))
		}
		out.ToolCall(c)
	}
	if !v.Get("subtype").Is("completed") {
		return
	}
	res := body.Get("result")
	r := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S(name)}
	fk := outcomeKey(res)
	switch outcomeClass(fk) {
	case outcomeOK:
		ok := res.Get(fk)
		r.Status, r.Output = sdk.S("ok"), toolOutput(ok)
		if code := sdk.IntOf(ok.Get("exitCode")); kind == "execute" {
			r.ExitCode = code
			if c, set := code.Value(); set && c != 0 {
				r.IsError, r.Status = true, sdk.S("error")
				r.Error = sdk.S("exit code " + strconv.FormatInt(c, 10))
			}
		}
	case outcomeDenied:
		rj := res.Get(fk)
		r.IsError, r.Status = true, sdk.S("denied")
		r.Error = sdk.StringOf(rj.Get("reason"))
		if r.Error.IsEmpty() {
			r.Error = sdk.S("the tool call was rejected")
		}
	case outcomePending:
		// The call was answered, but its work is not done (approved, run
		// in the background, waiting for a confirmation): no outcome yet.
		out.Warn("cursor tool call " + sdk.Clip(id, 80) + " completed as " + fk + ": its outcome is not known")
		return
	case outcomeFailed:
		// failure, error, timeout, spawnError, fileNotFound...: any
		// other outcome is not a success.
		f := res.Get(fk)
		r.IsError, r.Status = true, sdk.S("error")
		r.Output = toolOutput(f)
		if code := sdk.IntOf(f.Get("exitCode")); kind == "execute" {
			r.ExitCode = code
		}
		r.Error = sdk.StringOf(f.Get("error"))
		if f.Kind() == abi.KindString {
			r.Error = sdk.Text(f)
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(f.Get("message"))
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.StringOf(f.Get("stderr"))
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.S("the tool call ended with " + fk)
		}
	default:
		// Completed without a result: its outcome is not known.
		out.Warn("cursor tool call " + sdk.Clip(id, 80) + " completed without a result")
		return
	}
	out.ToolResult(r)
}

// outcomeKey is the member of a tool result that holds its outcome
// (success, failure, rejected, timeout, ...), whatever the order of the
// members: its first member named for an outcome outcomeClass knows or
// whose value is an object or a string. Flags written beside it
// (isBackground: a boolean) are no outcome. "" when none is.
func outcomeKey(res abi.Value) string {
	if res.Kind() != abi.KindObject {
		return ""
	}
	it := res.Iter()
	for it.Next() {
		k, vk := it.Key().String(), it.Value().Kind()
		if vk == abi.KindObject || vk == abi.KindString || outcomeClass(k) != outcomeFailed {
			return k
		}
	}
	return ""
}

// How a tool result's outcome member ends the call.
const (
	outcomeNone    = iota // no outcome member
	outcomeOK             // it succeeded
	outcomeDenied         // a policy or the user refused it
	outcomePending        // answered, but its work is not done
	outcomeFailed         // any other outcome
)

// outcomeClass classes a tool result's outcome member (the member of a
// protobuf oneof): success and its variants (complete, registered,
// startSuccess, saveSuccess, discardSuccess) succeeded; rejected was
// refused; approved, async, stillRunning and needsConfirmation leave the
// work undone (a peer's parser of current cursor-agent streams lists
// them: ZhengyiLuo/AgentsServer); every other one (failure, error,
// timeout, spawnError, permissionDenied, fileNotFound, ...) failed.
func outcomeClass(key string) int {
	switch key {
	case "":
		return outcomeNone
	case "success", "complete", "registered", "startSuccess", "saveSuccess", "discardSuccess":
		return outcomeOK
	case "rejected":
		return outcomeDenied
	case "approved", "async", "stillRunning", "needsConfirmation":
		return outcomePending
	}
	return outcomeFailed
}

// toolBody is a tool_call's one member: its key (shellToolCall,
// readToolCall, mcpToolCall, function...) and value.
func toolBody(tc abi.Value) (string, abi.Value) {
	it := tc.Iter()
	for it.Next() {
		return it.Key().String(), it.Value()
	}
	return "", abi.Value{}
}

// toolName is a tool's name and kind: the key less "ToolCall" (an MCP
// call's tool name, a function's name).
func toolName(key string, body abi.Value) (string, string) {
	name := strings.TrimSuffix(key, "ToolCall")
	switch {
	case key == "mcpToolCall":
		if t := body.Get("args").Get("name").String(); t != "" {
			return t, "other"
		}
	case key == "function":
		if t := body.Get("name").String(); t != "" {
			return t, "other"
		}
	}
	if name == "" {
		name = "unknown"
	}
	switch name {
	case "shell":
		return name, "execute"
	case "read", "ls", "readLints":
		return name, "read"
	case "edit", "write", "delete", "applyPatch":
		return name, "edit"
	case "grep", "glob", "semSearch", "codebaseSearch":
		return name, "search"
	case "webSearch", "webFetch", "fetch":
		return name, "fetch"
	case "todo", "updateTodos", "todoWrite":
		return name, "think"
	}
	return name, "other"
}

// toolOutput is a result's text: a shell's interleaved output (else its
// stdout and stderr), a file's content, an edit's diff or message, an
// MCP call's texts, else the result as JSON.
func toolOutput(v abi.Value) sdk.Str {
	for _, k := range [...]string{"interleavedOutput", "content", "diffString", "message"} {
		if f := v.Get(k); f.Kind() == abi.KindString {
			return sdk.Text(f)
		}
	}
	if so, se := v.Get("stdout"), v.Get("stderr"); so.Kind() == abi.KindString || se.Kind() == abi.KindString {
		s := so.String()
		if e := se.String(); e != "" {
			if s != "" && !strings.HasSuffix(s, "\n") {
				s += "\n"
			}
			s += e
		}
		return sdk.S(s)
	}
	if c := v.Get("content"); c.Kind() == abi.KindArray {
		var b []byte
		it := c.Iter()
		for it.Next() {
			if t := it.Value().Path("text", "text"); t.Kind() == abi.KindString {
				if len(b) > 0 {
					b = append(b, '\n')
				}
				b = sdk.AppendText(b, t)
			}
		}
		return sdk.S(string(b))
	}
	if !v.Exists() {
		return sdk.Str{}
	}
	return sdk.JSON(v)
}

// streamResult handles the result line, the terminal event: is_error
// (or a subtype other than success) an error with its result text; its
// usage (inputTokens the uncached prompt, cacheReadTokens,
// cacheWriteTokens, outputTokens) the run's.
func (n *normalizer) streamResult(v abi.Value, out *sdk.Out) {
	if u := v.Get("usage"); u.Kind() == abi.KindObject {
		usage := sdk.Split(sdk.IntOf(u.Get("inputTokens")), sdk.IntOf(u.Get("cacheReadTokens")), sdk.IntOf(u.Get("cacheWriteTokens")))
		usage.Output = sdk.IntOf(u.Get("outputTokens"))
		out.Usage(usage, sdk.ModeSet)
	}
	if t := v.Get("result"); t.Kind() == abi.KindString && strings.TrimSpace(t.String()) != "" {
		n.final = t.String()
	}
	if st := v.Get("subtype"); !v.Get("is_error").Truthy() && (st.Is("success") || !st.Exists()) {
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
		return
	}
	msg := sdk.StringOf(v.Get("error"))
	if msg.IsEmpty() {
		msg = sdk.StringOf(v.Get("result"))
	}
	if msg.IsEmpty() {
		msg = sdk.S("cursor result " + sdk.TypeName(v.Get("subtype")))
	}
	out.Status(sdk.StatusError, msg, sdk.LevelTerminal)
}
