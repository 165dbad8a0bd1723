package droid

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// droid exec's output (doc.go, "Format stream-json" and "Format json"):
// flat events, one a line, rather than the session's Anthropic blocks.

// Formats of droid exec's output, reported in OpMeta and the manifest.
const (
	fmtStream = "stream-json" // --output-format stream-json (and debug)
	fmtJSON   = "json"        // --output-format json: one result object
)

// execLine reports whether v is an event of droid exec's output and,
// when it is, maps it. A message of the session log holds a message
// object; one of exec's output holds its role and text flat.
func (n *normalizer) execLine(v abi.Value, no int, out *sdk.Out) bool {
	t := v.Get("type")
	if n.held.set {
		n.releaseHeld(v, out)
	}
	switch {
	case t.Is("system"):
		n.execStart(fmtStream, v, out)
		if !v.Get("subtype").Is("init") {
			out.Unmapped(sdk.S("system/" + sdk.TypeName(v.Get("subtype"))))
			return true
		}
		out.LatestModel(v.Get("model"), &n.model)
	case t.Is("message") && v.Get("message").Kind() != abi.KindObject:
		n.execStart(fmtStream, v, out)
		n.execMessage(v, no, out)
	case t.Is("reasoning"):
		n.execStart(fmtStream, v, out)
		key := n.execKey(v, "reasoning", no)
		out.Open(key, sdk.Message{ID: sdk.StringOf(v.Get("id")), Model: sdk.Opt(n.model), Time: execTime(v)})
		out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(v.Get("text"))})
		out.Close(key, sdk.MessageEnd{})
	case t.Is("tool_call"):
		n.execStart(fmtStream, v, out)
		n.execCall(v, no, out)
	case t.Is("tool_result"):
		n.execStart(fmtStream, v, out)
		n.execResult(v, out)
	case t.Is("completion"):
		n.execStart(fmtStream, v, out)
		n.execDone(v, v.Get("finalText"), v.Get("isError").Truthy(), out)
	case t.Is("result"):
		// --output-format json's one object ({type: result, subtype,
		// is_error, duration_ms, num_turns, result, session_id}).
		n.execStart(fmtJSON, v, out)
		n.execDone(v, v.Get("result"), v.Get("is_error").Truthy() || !v.Get("subtype").Is("success") && v.Get("subtype").Exists(), out)
	case t.Is("error"):
		// {type: error, source, message, timestamp}: an error the CLI
		// reported; the run's status is the completion's when one
		// follows (spec §6.7: the terminal event first).
		n.execStart(fmtStream, v, out)
		n.notePermission(v)
		out.Error(sdk.ProviderError{Message: strOr(sdk.StringOf(v.Get("message")), "droid reported an error"), Code: sdk.StringOf(v.Get("source"))})
	case !t.Exists() && v.Get("level").Kind() == abi.KindString && v.Get("error").Kind() == abi.KindObject:
		// A log record the CLI printed among the events ({level,
		// error: {name, message, stack}, msg}): an error it met.
		n.execStart(fmtStream, v, out)
		n.notePermission(v)
		msg := sdk.StringOf(v.Path("error", "message"))
		if !v.Get("level").Is("error") {
			out.Warn("droid logged (" + sdk.TypeName(v.Get("level")) + "): " + msg.String())
			return true
		}
		out.Error(sdk.ProviderError{Message: strOr(msg, "droid logged an error"), Code: sdk.StringOf(v.Path("error", "name"))})
	default:
		return false
	}
	return true
}

// execStart reports, at the first event, the format and what the event
// says of the session: its id (session_id, sessionId in the versions
// that write camel case) and working directory (the init event's cwd).
// Every event names the session; the first one that does is reported.
func (n *normalizer) execStart(format string, v abi.Value, out *sdk.Out) {
	if !n.exec {
		n.exec = true
		out.Meta(sdk.Meta{Format: sdk.S(format)})
	}
	if !n.execCwd && v.Get("type").Is("system") {
		if cwd := sdk.StringOf(v.Get("cwd")); !cwd.IsEmpty() {
			n.execCwd = true
			out.Meta(sdk.Meta{Cwd: cwd})
		}
	}
	if n.sessionID {
		return
	}
	id := sdk.StringOf(v.Get("session_id"))
	if id.IsEmpty() {
		id = sdk.StringOf(v.Get("sessionId"))
	}
	if !id.IsEmpty() {
		n.sessionID = true
		out.Meta(sdk.Meta{SessionID: id})
	}
}

// execKey is the key of an event's message: its id, else its kind and
// line number.
func (n *normalizer) execKey(v abi.Value, kind string, no int) sdk.Str {
	if id := sdk.StringOf(v.Get("id")); !id.IsEmpty() {
		return sdk.S(kind + ":" + id.String())
	}
	return sdk.S(kind + "-l" + strconv.Itoa(no))
}

// execTime is an event's time: epoch milliseconds, or an RFC 3339 string
// as some versions write it.
func execTime(v abi.Value) sdk.Str {
	ts := v.Get("timestamp")
	if ts.Kind() == abi.KindString {
		return sdk.Text(ts)
	}
	if ms, ok := ts.Int(); ok && ms > 0 {
		return sdk.S(sdk.RFC3339Millis(ms))
	}
	return sdk.Str{}
}

// execMessage maps {type: message, role, id, text}: the user's prompt
// (the stream repeats the one it was given) or the assistant's text.
func (n *normalizer) execMessage(v abi.Value, no int, out *sdk.Out) {
	text := v.Get("text")
	if text.Kind() != abi.KindString {
		text = v.Get("content") // some versions name it so
	}
	role := v.Get("role")
	if !role.Is("user") && !role.Is("assistant") {
		out.Unmapped(sdk.S("message/" + sdk.TypeName(role)))
		return
	}
	if text.Kind() != abi.KindString || text.Is("") {
		out.Ignored(sdk.S("message/" + sdk.TypeName(role) + " (empty)"))
		return
	}
	key := n.execKey(v, "message", no)
	if role.Is("user") {
		out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(v.Get("id")), Time: execTime(v)})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text), Origin: origin(text)})
		out.Close(key, sdk.MessageEnd{})
		return
	}
	out.Open(key, sdk.Message{ID: sdk.StringOf(v.Get("id")), Model: sdk.Opt(n.model), Time: execTime(v)})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
	out.Close(key, sdk.MessageEnd{})
	out.Final(sdk.Text(text), true)
}

// execCall maps {type: tool_call, id, messageId, toolId, toolName,
// parameters}: a tool_use block in a message of its own and the
// tool.call. Its id is toolCallId when the event states one (the versions
// that write it give id to the event), else id, else one made from the
// line.
func (n *normalizer) execCall(v abi.Value, no int, out *sdk.Out) {
	id := sdk.StringOf(v.Get("toolCallId"))
	if id.IsEmpty() {
		id = sdk.StringOf(v.Get("id"))
	}
	if id.IsEmpty() {
		id = sdk.S("droid-call-l" + strconv.Itoa(no))
	}
	name := sdk.StringOf(v.Get("toolName"))
	if name.IsEmpty() {
		name = sdk.StringOf(v.Get("toolId"))
	}
	ts := execTime(v)
	params := input(v.Get("parameters"))
	key := sdk.S("call:" + id.String())
	out.Open(key, sdk.Message{ID: sdk.StringOf(v.Get("messageId")), Model: sdk.Opt(n.model), Time: ts})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockToolUse, ToolName: name, ToolID: id, ToolInput: params})
	out.Close(key, sdk.MessageEnd{})
	tc := sdk.ToolCall{CallID: id, Name: name, Input: params, Kind: kindOf(name.String()), Time: ts}
	if tc.Kind == "execute" {
		tc.Command = sdk.StringOf(v.Path("parameters", "command"))
	}
	out.ToolCall(tc)
	n.pending = append(n.pending, pendingCall{id: id.String(), name: name.String()})
}

// pendingCall is a call of droid exec's output still waiting for its
// result.
type pendingCall struct{ id, name string }

// execResult maps {type: tool_result, id, messageId, toolId, isError,
// value | error: {type, message}}: the result of the call its
// toolCallId names (the versions that write it give id to the event),
// else its id; a result naming neither (some versions left the id out)
// answers the earliest call still waiting, of the same tool when one is.
// The value is the output (a string, else its JSON); an error object,
// isError, or a failed command's stated exit code make it an error.
func (n *normalizer) execResult(v abi.Value, out *sdk.Out) {
	tool := sdk.View(v.Get("toolId"))
	tc, id := sdk.View(v.Get("toolCallId")), sdk.View(v.Get("id"))
	i := -1
	switch {
	case tc == "" && id == "":
		i = n.pendingIndex("", tool)
	case tc != "":
		i = n.pendingIndex(tc, tool)
		if i < 0 && id != "" {
			i = n.pendingIndex(id, tool)
		}
	default:
		i = n.pendingIndex(id, tool)
	}
	if i < 0 {
		out.Warn("droid tool_result for no call waiting (" + sdk.TypeName(v.Get("toolId")) + "): not reported")
		return
	}
	p := n.pending[i]
	n.pending = append(n.pending[:i], n.pending[i+1:]...)
	r := sdk.ToolResult{CallID: sdk.S(p.id), Name: sdk.Opt(p.name), Time: execTime(v)}
	var text []byte
	val := v.Get("value")
	switch val.Kind() {
	case abi.KindString:
		r.Output = sdk.Text(val)
		text = sdk.AppendText(nil, val)
	case abi.KindInvalid, abi.KindNull:
	default:
		r.Output = sdk.JSON(val)
		r.ExitCode = sdk.IntOf(val.Get("exitCode"))
	}
	errText := sdk.StringOf(v.Path("error", "message"))
	if len(text) == 0 {
		// A failed Execute states its exit code in the error's message.
		text = sdk.AppendText(nil, v.Path("error", "message"))
	}
	if code, ok := sdk.StatedExitCode(text, "Error: Command failed (exit code: ").Value(); ok {
		r.ExitCode = sdk.N(code)
	}
	n.notePermission(v)
	if said := notRunText(errText.String(), string(text)); said != "" {
		n.notRun(p, r, said, out)
		return
	}
	code, hasCode := r.ExitCode.Value()
	if v.Get("isError").Truthy() || !errText.IsEmpty() || hasCode && code != 0 {
		r.IsError, r.Status = true, sdk.S("error")
		r.Error = strOr(errText, r.Output.String())
		if r.Error.IsEmpty() {
			r.Error = sdk.S("the tool reported an error")
		}
		if r.Output.IsEmpty() {
			r.Output = r.Error
		}
	} else {
		r.Status = sdk.S("ok")
	}
	out.ToolResult(r)
}

// cancelledText is droid exec's result of a call it did not run.
const cancelledText = "Error: tool execution cancelled"

// notRunText is the error or output text (the first that does) saying
// droid exec did not run the call ("Error: tool execution cancelled"),
// else "".
func notRunText(texts ...string) string {
	for _, t := range texts {
		t = strings.TrimSpace(t)
		if len(t) >= len(cancelledText) && strings.EqualFold(t[:len(cancelledText)], cancelledText) {
			return t
		}
	}
	return ""
}

// heldResult is the result of a call droid exec did not run, held until
// the next event (releaseHeld); set while one is held. Its members are
// strings of their own: the line's memory dies with it.
type heldResult struct {
	set                      bool
	id, name, output, err, t string
}

// notRun reports the result of call p that droid exec did not run
// (notRunText said): denied once an event said the run lacked the
// permission a call needs (permissionSaid: droid exec ends a run that
// needs a higher autonomy level than it was given), else held until the
// next event, which usually says why (the run's end for want of
// permission: denied; anything else: cancelled, stopped before it
// finished). Not an error: the tool did not run.
func (n *normalizer) notRun(p pendingCall, r sdk.ToolResult, said string, out *sdk.Out) {
	n.held = heldResult{set: true, id: p.id, name: p.name, err: said, t: r.Time.String()}
	if o := r.Output.String(); o != said {
		n.held.output = o
	}
	if n.permission {
		n.releaseHeld(abi.Value{}, out)
		return
	}
	out.Ignored(sdk.S("tool_result (of a call not run: reported at the next event, which says why)"))
}

// releaseHeld reports the result held (notRun), if any, before event v
// (none at the end of the input): denied when v or an event before it
// said the run lacked permission, else cancelled.
func (n *normalizer) releaseHeld(v abi.Value, out *sdk.Out) {
	h := n.held
	if !h.set {
		return
	}
	n.held = heldResult{}
	status := "cancelled"
	if n.permission || v.Exists() && permissionSaid(v) {
		status = "denied"
	}
	out.ToolResult(sdk.ToolResult{CallID: sdk.S(h.id), Name: sdk.Opt(h.name), Output: sdk.Opt(h.output), Status: sdk.S(status), Error: sdk.S(h.err), Time: sdk.Opt(h.t)})
}

// notePermission notes an event saying the run lacked permission
// (permissionSaid): a call droid exec did not run after it was denied.
func (n *normalizer) notePermission(v abi.Value) {
	if !n.permission && permissionSaid(v) {
		n.permission = true
	}
}

// permissionSaid says whether event v says the run lacked the permission
// a call needed: its error or result text ("Exec ended early:
// insufficient permission to proceed. Re-run with --auto medium or --auto
// high.", a tool's "Insufficient permission to proceed", "permission
// denied"), or a result's permission_denials listing one.
func permissionSaid(v abi.Value) bool {
	if d := v.Get("permission_denials"); d.Kind() == abi.KindArray && d.Len() > 0 {
		return true
	}
	for _, t := range [...]abi.Value{v.Path("error", "message"), v.Get("message"), v.Get("result"), v.Get("finalText")} {
		if t.Kind() != abi.KindString {
			continue
		}
		l := strings.ToLower(t.String())
		if strings.Contains(l, "insufficient permission") || strings.Contains(l, "permission denied") || strings.Contains(l, "re-run with --auto") {
			return true
		}
	}
	return false
}

// pendingIndex is the index in pending of the call id names, else (no
// id) of the earliest call of tool (its toolId, the tool's name), else
// of the earliest call; -1 when none is waiting or id names none.
func (n *normalizer) pendingIndex(id, tool string) int {
	if id != "" {
		for i, p := range n.pending {
			if p.id == id {
				return i
			}
		}
		return -1
	}
	for i, p := range n.pending {
		if p.name == tool {
			return i
		}
	}
	if len(n.pending) > 0 {
		return 0
	}
	return -1
}

// execDone maps the run's end: stream-json's completion {finalText,
// numTurns, durationMs, usage, session_id; isError when the run failed}
// or json's result {subtype,
// is_error, result, duration_ms, num_turns, usage, total_cost_usd,
// session_id}. It is the terminal event: ok, or an error when failed
// (json's is_error, a subtype other than success) with the text as its
// error. Its usage is the run's, as Anthropic names the figures
// (input_tokens uncached, cache_read_input_tokens and
// cache_creation_input_tokens the cache's), thinking_tokens apart from
// output_tokens as Droid counts it (doc.go, Usage).
func (n *normalizer) execDone(v, text abi.Value, failed bool, out *sdk.Out) {
	n.notePermission(v)
	if u := v.Get("usage"); u.Kind() == abi.KindObject {
		out.Usage(droidUsage(sdk.IntOf(u.Get("input_tokens")), sdk.IntOf(u.Get("cache_read_input_tokens")), sdk.IntOf(u.Get("cache_creation_input_tokens")),
			sdk.IntOf(u.Get("output_tokens")), sdk.IntOf(u.Get("thinking_tokens"))), sdk.ModeSet)
	}
	if c, ok := v.Get("total_cost_usd").Float(); ok {
		out.Cost(c, sdk.ModeSet)
	}
	for _, p := range n.pending {
		out.Warn("droid exec ended with the call " + p.id + " (" + p.name + ") without its result")
	}
	n.pending = n.pending[:0]
	if failed {
		msg := strOr(sdk.StringOf(text), "droid exec failed ("+sdk.TypeName(v.Get("subtype"))+")")
		out.Error(sdk.ProviderError{Message: msg, Code: sdk.StringOf(v.Get("subtype"))})
		out.Status(sdk.StatusError, msg, sdk.LevelTerminal)
		return
	}
	if text.Kind() == abi.KindString && !text.Is("") {
		out.Final(sdk.Text(text), true)
	}
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
}

// strOr is s, else def.
func strOr(s sdk.Str, def string) sdk.Str {
	if s.IsEmpty() {
		return sdk.S(def)
	}
	return s
}
