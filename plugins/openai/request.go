package openai

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// prompt collects the request-side texts of one request body into one
// message.user. Requests repeat the whole conversation, so a text already
// reported (by role and content) is skipped.
type prompt struct {
	key  sdk.Str
	slot int
}

func (n *normalizer) promptText(p *prompt, role string, v abi.Value, out *sdk.Out) {
	if v.Kind() != abi.KindString || sdk.Text(v).IsEmpty() {
		return
	}
	// Remembered by a hash of the role and the text's JSON, not kept.
	n.said = append(append(append(n.said[:0], role...), 0), v.Raw()...)
	h := sdk.Hash64(n.said)
	if !n.prompts.Add(h) {
		return
	}
	origin := sdk.OriginPrompt
	if role != "user" {
		origin = sdk.OriginSystemPrompt
	}
	if !p.key.IsSet() {
		p.key = n.newKey("u")
		out.Open(p.key, sdk.Message{User: true})
	}
	out.Block(p.key, p.slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v), Origin: origin})
	p.slot++
}

// promptContent adds a message's content: a string or text parts.
func (n *normalizer) promptContent(p *prompt, role string, c abi.Value, out *sdk.Out) {
	if c.Kind() == abi.KindString {
		n.promptText(p, role, c, out)
		return
	}
	it := c.Iter()
	for it.Next() {
		n.promptText(p, role, it.Value().Get("text"), out)
	}
}

func (p *prompt) close(out *sdk.Out) {
	if p.key.IsSet() {
		out.Close(p.key, sdk.MessageEnd{})
	}
}

// responsesRequest reads a Responses API request body (a request log):
// the prompt, and the outcomes of the calls the previous response made
// (function_call_output and the other *_output items, joined to their
// call by call_id).
func (n *normalizer) responsesRequest(v abi.Value, out *sdk.Out) {
	n.asked = true
	var p prompt
	n.promptText(&p, "system", v.Get("instructions"), out)
	in := v.Get("input")
	if in.Kind() == abi.KindString {
		n.promptText(&p, "user", in, out)
	}
	it := in.Iter()
	for it.Next() {
		i := it.Value()
		t := i.Get("type")
		role := i.Get("role")
		switch {
		case t.Is("message") || !t.Exists() && role.Exists():
			switch {
			case role.Is("user"):
				n.promptContent(&p, "user", i.Get("content"), out)
			case role.Is("system"), role.Is("developer"):
				n.promptContent(&p, "system", i.Get("content"), out)
			}
		case t.Is("function_call"), t.Is("custom_tool_call"):
			// An earlier call echoed as history: reported when this log
			// did not show the response that made it.
			args := i.Get("arguments")
			if !args.Exists() {
				args = i.Get("input")
			}
			input := sdk.JSON(args)
			if sdk.Text(args).IsEmpty() {
				input, _ = jsonInput(nil)
			}
			if id := callIDView(i); id != "" && n.calls[id] == 0 {
				n.toolCall(callIDOf(i), i.Get("name").String(), input, args, sdk.Str{}, false, out)
			}
		case t.Is("shell_call_output"):
			// The shell tool run by the caller: exit codes and timeouts
			// decide its status.
			if id := i.Get("call_id"); id.Kind() == abi.KindString && !id.Is("") && n.results[sdk.View(id)] == 0 {
				n.results[id.String()]++
				r := shellResult(i.Get("output"), i.Get("status"))
				r.CallID, r.Name = sdk.Text(id), sdk.S("shell")
				out.ToolResult(r)
			}
		case t.Kind() == abi.KindString && hasSuffix(t.Raw(), `_output"`):
			id := i.Get("call_id")
			if !id.Exists() && t.Is("local_shell_call_output") {
				// LocalShellCallOutput names its call by id (the call's
				// call_id), having no call_id of its own.
				id = i.Get("id")
			}
			if id.Kind() == abi.KindString && n.results[sdk.View(id)] == 0 {
				n.toolOutput(id, i.Get("output"), i.Get("status"), out)
			}
		case t.Is("mcp_approval_response"):
			// The user's answer to an mcp_approval_request: a refusal is
			// the call's outcome; an approval is followed by the mcp_call
			// that runs it.
			id := i.Get("approval_request_id")
			if ids := id.String(); ids != "" && !i.Get("approve").Truthy() && n.results[ids] == 0 {
				n.results[ids]++
				e := sdk.Text(i.Get("reason"))
				if e.IsEmpty() {
					e = sdk.S("the user did not approve the call")
				}
				out.ToolResult(sdk.ToolResult{CallID: sdk.Text(id), Status: sdk.S(toolDenied), Error: e, IsError: true})
			}
		}
	}
	p.close(out)
}

// chatRequest reads a Chat Completions request body: the prompt and the
// tool messages that answer earlier calls. A request resends the whole
// conversation, and a server may give calls of different responses one
// id (call_1 each time), so a call or result is told from the ones
// already reported by its place: the k-th assistant call (or tool
// message) naming an id in this history is new only when fewer than k
// were reported for that id. A history trimmed of early messages
// undercounts, so a new call reusing an id there is missed rather than
// one reported twice.
func (n *normalizer) chatRequest(v abi.Value, out *sdk.Out) {
	n.asked = true
	var p prompt
	var calls, results map[string]int // occurrences per id in this history
	it := v.Get("messages").Iter()
	for it.Next() {
		m := it.Value()
		role := m.Get("role")
		switch {
		case role.Is("user"):
			n.promptContent(&p, "user", m.Get("content"), out)
		case role.Is("system"), role.Is("developer"):
			n.promptContent(&p, "system", m.Get("content"), out)
		case role.Is("assistant"):
			tc := m.Get("tool_calls").Iter()
			for tc.Next() {
				c := tc.Value()
				args := c.Path("function", "arguments")
				input := sdk.JSON(args)
				if sdk.Text(args).IsEmpty() {
					input, _ = jsonInput(nil)
				}
				id := c.Get("id")
				if id.Kind() != abi.KindString || id.Is("") {
					continue
				}
				ids := id.String()
				if place(&calls, ids) <= n.calls[ids] || n.calls[ids] > 0 && !n.settled(ids) {
					continue // reported, or a repeat before the result
				}
				// A call whose response is not in the log: a message of
				// its own holds its tool_use block, which is how the host
				// tells a later call reusing the id from this one
				// reported again.
				name := c.Path("function", "name").String()
				key := n.newKey("h")
				out.Open(key, sdk.Message{})
				out.Block(key, 0, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(name), ToolID: sdk.Text(id), ToolInput: input})
				out.Close(key, sdk.MessageEnd{})
				n.toolCall(ids, name, input, args, sdk.Str{}, true, out)
			}
		case role.Is("tool"):
			id := m.Get("tool_call_id")
			if id.Kind() != abi.KindString || id.Is("") {
				continue
			}
			if ids := id.String(); place(&results, ids) > n.results[ids] {
				n.toolOutput(id, m.Get("content"), abi.Value{}, out)
			}
		}
	}
	p.close(out)
}

// place counts an occurrence of id in a request's history (in *m, made
// on first use) and returns its number: 1 for the first.
func place(m *map[string]int, id string) int {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[id]++
	return (*m)[id]
}

// toolOutput reports a tool.result for call id; the caller tells that it
// was not reported yet. The output is a string, or content parts (their
// texts joined, else their JSON).
func (n *normalizer) toolOutput(id, o, status abi.Value, out *sdk.Out) {
	if id.Kind() != abi.KindString || sdk.Text(id).IsEmpty() {
		return
	}
	n.results[id.String()]++
	r := sdk.ToolResult{CallID: sdk.Text(id), Status: sdk.S(toolStatus(status, false))}
	switch o.Kind() {
	case abi.KindString:
		r.Output = sdk.Text(o)
	case abi.KindArray:
		var b []byte
		texts := true
		it := o.Iter()
		for it.Next() {
			t := it.Value().Get("text")
			if t.Kind() != abi.KindString {
				texts = false
				break
			}
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = sdk.AppendText(b, t)
		}
		if texts {
			r.Output = sdk.S(string(b))
		} else {
			r.Output = sdk.JSON(o)
		}
	case abi.KindInvalid, abi.KindNull:
	default:
		r.Output = sdk.JSON(o)
	}
	if st := r.Status.String(); st != toolOK {
		r.IsError = st == toolError
		r.Error = sdk.S("the tool call is " + sdk.TypeName(status))
	}
	if o.Kind() == abi.KindString {
		statedExit(&r, o)
	}
	out.ToolResult(r)
}

// statedExit reads the exit code a shell tool's output states (the
// caller ran the command; Codex's shell functions write "Exit code: N" or
// "Process exited with code N" above "Output:", or the JSON {output,
// metadata: {exit_code}}): it is the result's exit code, and a non-zero
// one makes a result the item calls completed an error (spec §4).
func statedExit(r *sdk.ToolResult, o abi.Value) {
	text := sdk.AppendText(nil, o)
	head, _ := sdk.SplitOutputHeader(text)
	code := sdk.HeaderExitCode(head)
	if _, ok := code.Value(); !ok {
		code = sdk.IntOf(argsRoot(o).Path("metadata", "exit_code"))
	}
	v, ok := code.Value()
	if !ok {
		return
	}
	r.ExitCode = code
	if v != 0 && !r.IsError && r.Status.String() == toolOK {
		r.IsError, r.Status = true, sdk.S(toolError)
		r.Error = sdk.S("exit code " + itoa(v))
	}
}

// The tool result statuses (spec §4), the same words in every plugin.
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// toolStatus maps an item's status to the spec's words: completed (or
// none) is ok, failed is error, incomplete (stopped before it finished)
// is cancelled; failed also stands for an item that carries an error.
func toolStatus(st abi.Value, failed bool) string {
	switch {
	case st.Is("failed"), failed && !st.Is("incomplete"):
		return toolError
	case st.Is("incomplete"), st.Is("cancelled"):
		return toolCancelled
	}
	return toolOK
}

// errorText is e, or def when e is empty: a result that is not ok
// always says why.
func errorText(e sdk.Str, def string) sdk.Str {
	if e.IsEmpty() {
		return sdk.S(def)
	}
	return e
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && sdk.HasPrefix(b[len(b)-len(s):], s)
}
