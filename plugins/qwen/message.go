package qwen

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/gemini"
)

// held is the assistant message left open after its record, for the
// records that may follow it with the same uuid: Qwen Code writes a
// message as one record or as several fragments in a row, and reads the
// records of one uuid as one message (SessionService.aggregateRecords:
// the parts of each after the first's, the latest usageMetadata). The
// next record of another uuid, or the end of the input, releases it.
type held struct {
	key   string // the message key ("": none held)
	scope string
	usage sdk.Usage // its latest fragment's that states one
	text  string    // its texts so far, joined by newlines (the final answer)
}

// assistant handles an assistant record: one model response, its parts
// in the order the model produced them (thought parts as thinking, text,
// functionCall as a tool_use block and a tool.call), its usage and model;
// or a fragment of the response held open (fragment: the same uuid),
// whose parts follow the earlier ones'.
func (n *normalizer) assistant(r record, out *sdk.Out, fragment bool) {
	key := r.key()
	model := r.f[kModel]
	if !fragment {
		n.held = held{key: key.String(), scope: r.scope.String()}
	}
	out.Open(key, sdk.Message{ID: sdk.StringOf(r.f[kUUID]), Model: sdk.StringOf(model), Scope: r.scope, Time: r.ts})
	if !r.scope.IsSet() {
		out.LatestModel(model, &n.model)
	}
	texts := false
	parts := r.f[kMessage].Get("parts")
	it := parts.Iter()
	for it.Next() {
		p := it.Value()
		txt := p.Get("text")
		switch {
		case txt.Kind() == abi.KindString && p.Get("thought").Truthy():
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(txt)})
		case txt.Kind() == abi.KindString:
			if txt.Is("") {
				continue
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(txt)})
			if n.held.text != "" {
				n.held.text += "\n"
			}
			n.held.text += txt.String()
			texts = true
		case p.Get("functionCall").Kind() == abi.KindObject:
			fc := p.Get("functionCall")
			out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(fc.Get("name")), ToolID: sdk.StringOf(fc.Get("id")), ToolInput: input(fc.Get("args"))})
		}
	}
	if m := r.f[kUsageMetadata]; m.Kind() == abi.KindObject {
		n.held.usage = usageOf(m)
	}
	// The calls are reported while the message is open: the host writes
	// them after it, as the model requested them.
	it = parts.Iter()
	for it.Next() {
		if fc := it.Value().Get("functionCall"); fc.Kind() == abi.KindObject {
			n.call(fc, r, out)
		}
	}
	if texts && !r.scope.IsSet() {
		out.Final(sdk.S(n.held.text), true)
	}
}

// release closes the message held open, with its usage: each message is
// one model call, its tokens added to the step's (a sidechain's stay on
// its messages, as a sub-agent's).
func (n *normalizer) release(out *sdk.Out) {
	h := n.held
	if h.key == "" {
		return
	}
	n.held = held{}
	if h.scope == "" {
		out.Usage(h.usage, sdk.ModeAdd)
	}
	out.Close(sdk.S(h.key), sdk.MessageEnd{Usage: h.usage})
}

// usageOf reads a record's usageMetadata, Gemini's usage as Qwen Code
// fills it from every provider: promptTokenCount is every input token
// (cachedContentTokenCount of them read from the cache),
// candidatesTokenCount the output. thoughtsTokenCount, the reasoning, is
// inside the candidates when the provider counted it so (OpenAI-compatible
// APIs' completion_tokens hold the reasoning tokens: the total is prompt
// plus candidates) and beside them when it did not (Gemini's API: the
// total is prompt plus candidates plus thoughts): the total says which,
// and without a total the candidates are taken as the whole output.
func usageOf(m abi.Value) sdk.Usage {
	if m.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	var u sdk.Usage
	prompt := sdk.IntOf(m.Get("promptTokenCount"))
	tools := sdk.IntOf(m.Get("toolUsePromptTokenCount"))
	cand := sdk.IntOf(m.Get("candidatesTokenCount"))
	thoughts := sdk.IntOf(m.Get("thoughtsTokenCount"))
	u.Input = prompt.Plus(tools)
	u.CacheRead = sdk.IntOf(m.Get("cachedContentTokenCount"))
	u.Reasoning = thoughts
	u.Output = cand
	u.Total = sdk.IntOf(m.Get("totalTokenCount")) // the provider's own, as stated
	th, _ := thoughts.Value()
	total, hasTotal := sdk.IntOf(m.Get("totalTokenCount")).Value()
	in, _ := u.Input.Value()
	c, _ := cand.Value()
	if th > 0 && hasTotal && total >= in+c+th {
		u.Output = cand.Plus(thoughts)
	}
	return u
}

// input is a tool's arguments as JSON, {} when missing.
func input(args abi.Value) sdk.Str {
	if !args.Exists() || args.Kind() == abi.KindNull {
		return sdk.S("{}")
	}
	return sdk.JSON(args)
}

// call reports the tool.call of a functionCall part {id, name, args}, and
// opens the scope of the sub-agent it runs, if it runs one.
func (n *normalizer) call(fc abi.Value, r record, out *sdk.Out) {
	id, name, args := fc.Get("id"), fc.Get("name"), fc.Get("args")
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("qwen functionCall without id (" + sdk.TypeName(name) + "): no tool.call reported")
		return
	}
	tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(args), Kind: kindOf(sdk.View(name)), Scope: r.scope, Time: r.ts}
	if tc.Kind == "execute" {
		tc.Command = sdk.StringOf(args.Get("command"))
	}
	out.ToolCall(tc)
	if n.calls == nil {
		n.calls = map[string]string{}
	}
	key := callKey(r.scope, sdk.View(id))
	if t, ok := n.calls[key]; !ok || t != sdk.View(name) {
		n.calls[strings.Clone(key)] = name.String()
	}
	// A call id reused after its call's result (servers make ids unique
	// per response, not per session: a local one names every call
	// call_1) is a new call, as the host reads it: its result is its own,
	// not a second one of the first call.
	delete(n.resulted, key)
	if isAgent(sdk.View(name)) {
		n.startAgent(key, id, args, r, out)
	}
}

// kindOf is a tool's kind: the Gemini CLI's tools and Qwen Code's own
// (its task list and plan tools record the agent's plan: think).
func kindOf(name string) string {
	switch name {
	case "todo_write", "task_create", "task_update", "task_list", "task_get", "exit_plan_mode":
		return "think"
	case "lsp":
		return "read"
	}
	return gemini.ToolKind(name)
}

// toolResult handles a tool_result record: the functionResponse parts
// sent back to the model, with toolCallResult, the CLI's account of the
// call (callId, status, resultDisplay, error).
func (n *normalizer) toolResult(r record, out *sdk.Out) {
	tcr := r.v.Get("toolCallResult")
	said := false
	it := r.v.Path("message", "parts").Iter()
	for it.Next() {
		if fr := it.Value().Get("functionResponse"); fr.Kind() == abi.KindObject {
			said = n.functionResponse(fr, tcr, r, out) || said
		}
	}
	if !said && tcr.Kind() == abi.KindObject && !sdk.StringOf(tcr.Get("callId")).IsEmpty() {
		// No functionResponse part: the CLI's account alone.
		said = n.result(tcr.Get("callId"), abi.Value{}, tcr, r, out)
	}
	if !said {
		out.Ignored(sdk.S("tool_result"))
	}
}

// functionResponse reports the tool.result of a functionResponse part
// {id, name, response{output | error}}; tcr is the record's
// toolCallResult when the part answers the call it describes. It reports
// whether it wrote anything.
func (n *normalizer) functionResponse(fr, tcr abi.Value, r record, out *sdk.Out) bool {
	id := fr.Get("id")
	if id.Kind() != abi.KindString || id.Is("") {
		id = tcr.Get("callId")
	}
	if c := tcr.Get("callId"); c.Kind() == abi.KindString && !c.Is(sdk.View(id)) {
		tcr = abi.Value{} // another call's account
	}
	return n.result(id, fr, tcr, r, out)
}

// Tool result statuses (spec §4).
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// result reports the tool.result of call id from its functionResponse
// part fr (either may be missing) and the CLI's account tcr.
func (n *normalizer) result(id, fr, tcr abi.Value, r record, out *sdk.Out) bool {
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("qwen tool result without a call id: no tool.result reported")
		return true
	}
	key := callKey(r.scope, sdk.View(id))
	if n.resulted[key] {
		return false
	}
	name := fr.Get("name")
	res := sdk.ToolResult{CallID: sdk.Text(id), Name: sdk.StringOf(name), Scope: r.scope, Time: r.ts}
	if res.Name.IsEmpty() {
		res.Name = sdk.StringOf(tcr.Get("name"))
	}
	resp := fr.Get("response")
	failed := false
	if e := resp.Get("error"); e.Exists() && e.Kind() != abi.KindNull {
		res.Error, failed = gemini.ErrText(e), true
	}
	switch o := resp.Get("output"); {
	case o.Exists() && o.Kind() != abi.KindNull:
		res.Output = sdk.Text(o)
	case resp.Kind() == abi.KindObject && !failed:
		res.Output = sdk.JSON(resp)
	}
	st := tcr.Get("status")
	switch {
	case st.Is("success"), !st.Exists() && !failed:
		res.Status = sdk.S(toolOK)
	default: // error, cancelled, or a response that holds an error
		res.IsError = true
		if res.Error.IsEmpty() {
			res.Error = gemini.ErrText(tcr.Get("error"))
		}
		if res.Error.IsEmpty() {
			res.Error = sdk.StringOf(tcr.Get("resultDisplay"))
		}
		if res.Error.IsEmpty() {
			res.Error = res.Output
		}
		res.Status = sdk.S(gemini.FailedStatus(st, res.Error))
		if tcr.Get("errorType").Is("execution_denied") || refused(res.Error.String()) {
			res.Status = sdk.S(toolDenied)
		}
		if res.Error.IsEmpty() {
			res.Error = sdk.S("the tool call " + statusWord(st))
		}
	}
	tool := n.calls[key]
	if tool == "" {
		tool = sdk.View(name)
	}
	if kindOf(tool) == "execute" {
		shellOutcome(&res)
	}
	if n.resulted == nil {
		n.resulted = map[string]bool{}
	}
	n.resulted[strings.Clone(key)] = true
	out.ToolResult(res)
	if i := n.agent(key); i >= 0 && n.agents[i].open {
		n.endAgent(&n.agents[i], res, tcr.Get("resultDisplay"), out)
	}
	return true
}

// refused says whether a failed call's text is Qwen Code's refusal to
// run it (coreToolScheduler, permissions: ToolErrorType.EXECUTION_DENIED,
// status error): a permission rule or the user declined it ('Qwen Code
// requires permission to use "X", but that permission was declined.',
// with the matching deny rule after it, or "(non-interactive mode cannot
// prompt for confirmation)" in headless runs), the tool is outside the
// core tools allowlist, or plan mode blocked it. A refused call is
// denied (spec §4), not an error of the tool's.
func refused(t string) bool {
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "Qwen Code requires permission to use ") && strings.Contains(t, "but that permission was declined") ||
		strings.Contains(t, "is not listed in the active core tools allowlist") ||
		strings.HasPrefix(t, "Plan mode blocked a non-read-only tool call") ||
		strings.HasPrefix(t, "Tool \"") && strings.Contains(t, "\" is blocked in plan mode")
}

// statusWord is a status for a message: the CLI's word, else "failed".
func statusWord(st abi.Value) string {
	if st.Kind() == abi.KindString && !st.Is("") {
		return sdk.Clip(st.String(), 40)
	}
	return "failed"
}

// shellOutcome reads a shell call's output as Qwen Code writes it: the
// Gemini CLI's trailer ("Command: ...\nOutput: ...\nExit Code: N"), whose
// non-zero exit code makes a call the CLI marked success an error, or a
// command stopped before it finished ("Command timed out after Nms",
// "Command was cancelled by user"): cancelled.
func shellOutcome(r *sdk.ToolResult) {
	gemini.ShellExit(r)
	if r.IsError {
		return
	}
	o := r.Output.String()
	for _, p := range [...]string{"Command timed out after ", "Command was cancelled by user"} {
		if strings.HasPrefix(o, p) {
			line := o
			if i := strings.IndexByte(o, '\n'); i >= 0 {
				line = o[:i]
			}
			r.IsError, r.Status, r.Error = true, sdk.S(toolCancelled), sdk.S(sdk.Clip(line, 300))
			return
		}
	}
}
