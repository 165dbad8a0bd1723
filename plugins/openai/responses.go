package openai

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// resp is one Responses API response: one assistant message whose blocks
// are its output items' parts, in output order.
type resp struct {
	id      string
	seq     int // start order
	key     sdk.Str
	time    sdk.Str
	nslots  int
	closed  bool
	counted bool // usage added to the step
	items   []*item
	slots   []*slot // in allocation order
	refusal string  // the first refusal part's text, clipped: the answer is a refusal
}

// item is one output item, remembered across events by its id.
type item struct {
	id, typ  string
	r        *resp
	callID   string
	name     string
	args     []byte // joined argument deltas, for a stream cut before .done
	hasCall  bool   // a tool item
	nparts   int    // blocks allocated to the item
	argsDone bool
	noted    bool // a compaction or an input item kept: reported once
}

// partKey names a block: an item's content part, summary part (offset
// by partSummary) or tool block (partTool, partResult).
type partKey struct {
	item string
	part int
}

const (
	partSummary  = 1 << 20
	partRedacted = 2 << 20
	partTool     = 3 << 20
	partResult   = 3<<20 + 1
)

// slot is one block of a response's message.
type slot struct {
	item string
	n    int
	done bool   // set from a snapshot: later deltas and snapshots are ignored
	text bool   // an answer text block (for the final answer)
	buf  []byte // joined text deltas, until a snapshot arrives
}

// respFor returns the response object v names, opening its message; a new
// response closes the previous one when it was cut short.
func (n *normalizer) respFor(v abi.Value, out *sdk.Out) *resp {
	id := sdk.View(v.Get("id")) // aliases the line until copied below
	if id == "" && n.cur != nil {
		return n.cur
	}
	if r := n.resps[id]; r != nil && id != "" {
		if !r.closed {
			n.cur = r
		}
		return r
	}
	if n.cur != nil {
		n.closeResp(n.cur, out)
	}
	id = strings.Clone(id)
	r := &resp{id: id, seq: len(n.resps), key: n.newKey("r"), time: unixTime(v.Get("created_at"))}
	if id != "" {
		n.resps[id] = r
	} else {
		n.resps["#"+itoa(int64(r.seq))] = r
	}
	n.cur = r
	out.Open(r.key, sdk.Message{ID: sdk.Opt(id), Model: sdk.StringOf(v.Get("model")), Time: r.time})
	n.model(v.Get("model"), out)
	return r
}

// current returns the response being streamed, opening an anonymous one
// for events that arrive without response.created.
func (n *normalizer) current(out *sdk.Out) *resp {
	if n.cur != nil {
		return n.cur
	}
	return n.respFor(abi.Value{}, out)
}

// itemFor returns the item with id (from an event's item_id or item.id).
// id and typ may alias the line (sdk.View): they are copied when kept.
func (n *normalizer) itemFor(id string, typ string, out *sdk.Out) *item {
	if it := n.items[id]; it != nil && id != "" {
		if it.typ == "" {
			it.typ = itemType(typ)
		}
		return it
	}
	r := n.current(out)
	it := &item{id: strings.Clone(id), typ: itemType(typ), r: r}
	if id == "" {
		it.id = "#" + itoa(int64(len(n.items)))
	}
	n.items[it.id] = it
	r.items = append(r.items, it)
	return it
}

// itemType returns an output item's type to keep: the literal for the
// types the API documents (no copy), a copy of any other (t may alias
// the line).
func itemType(t string) string {
	for _, known := range &itemTypes {
		if known == t {
			return known
		}
	}
	return strings.Clone(t)
}

// itemTypes is itemType's table. A loop over a table is a few hundred
// bytes of module where a switch of string cases is, under TinyGo -opt=2,
// a byte-by-byte compare of every literal (2.8 KB), and each byte of code
// costs the host time to validate at every start.
var itemTypes = [...]string{
	"message", "reasoning", "function_call", "custom_tool_call", "web_search_call",
	"file_search_call", "code_interpreter_call", "mcp_call", "mcp_approval_request", "mcp_list_tools",
	"image_generation_call", "local_shell_call", "shell_call", "apply_patch_call", "computer_call",
	"shell_call_output", "tool_search_call", "tool_search_output", "program", "program_output", "x_search_call",
}

// slotFor returns the block of (item, part), allocating the next slot of
// the item's message on first sight: blocks take the order in which the
// model produced them.
func (n *normalizer) slotFor(it *item, part int) *slot {
	k := partKey{it.id, part}
	if s := n.parts[k]; s != nil {
		return s
	}
	s := &slot{item: it.id, n: it.r.nslots}
	it.r.nslots++
	it.nparts++
	it.r.slots = append(it.r.slots, s)
	n.parts[k] = s
	return s
}

// Responses API streaming events the plugin knows, numbered so that one
// map lookup replaces a chain of string compares (a switch on strings is
// one runtime call per case inside a TinyGo plugin). evLifecycle marks
// the events whose content is written from items and parts.
const (
	evCreated uint8 = iota + 1
	evCompleted
	evItemAdded
	evItemDone
	evTextDelta
	evTextDone
	evRefusalDone
	evPartDone
	evSummaryDelta
	evSummaryDone
	evSummaryPartDone
	evReasoningDelta
	evReasoningDone
	evArgsDelta
	evArgsDone
	evAnnounce

	evLifecycle uint8 = 0x80
)

// eventKinds is read-only after package initialization.
var eventKinds = map[string]uint8{
	"response.created":                       evCreated | evLifecycle,
	"response.in_progress":                   evCreated | evLifecycle,
	"response.queued":                        evCreated | evLifecycle,
	"response.completed":                     evCompleted,
	"response.failed":                        evCompleted,
	"response.incomplete":                    evCompleted,
	"response.output_item.added":             evItemAdded | evLifecycle,
	"response.output_item.done":              evItemDone | evLifecycle,
	"response.output_text.delta":             evTextDelta,
	"response.refusal.delta":                 evTextDelta,
	"response.output_text.done":              evTextDone | evLifecycle,
	"response.refusal.done":                  evRefusalDone | evLifecycle,
	"response.content_part.done":             evPartDone | evLifecycle,
	"response.reasoning_summary_text.delta":  evSummaryDelta,
	"response.reasoning_summary_text.done":   evSummaryDone | evLifecycle,
	"response.reasoning_summary_part.done":   evSummaryPartDone | evLifecycle,
	"response.reasoning_text.delta":          evReasoningDelta,
	"response.reasoning_text.done":           evReasoningDone,
	"response.function_call_arguments.delta": evArgsDelta,
	"response.custom_tool_call_input.delta":  evArgsDelta,
	"response.function_call_arguments.done":  evArgsDone,
	"response.custom_tool_call_input.done":   evArgsDone,
	"response.output_text.annotation.added":  evAnnounce | evLifecycle,
	"response.content_part.added":            evAnnounce | evLifecycle,
	"response.reasoning_summary_part.added":  evAnnounce | evLifecycle,
}

// event handles one Responses API streaming event.
func (n *normalizer) event(v, typ abi.Value, out *sdk.Out) {
	k := eventKinds[sdk.View(typ)] // sdk.View aliases the line: looked up only
	progress := false
	switch {
	case k&evLifecycle != 0:
		// Known lifecycle events: what they carry is written from the
		// items and parts (each once), so the line itself may add
		// nothing; declared so that it is accounted for (spec §6.8).
		// Many in a row (a web search's url_citation annotations, one
		// event each) must not let the host close the message: see
		// touch.
		out.Ignored(sdk.Text(typ))
		n.touch(v, out)
	case k == 0 && isProgress(typ):
		// A hosted tool's progress (searching, interpreting, ...): its
		// item arrives whole in output_item.done.
		progress = true
		out.Ignored(sdk.Text(typ))
		n.touch(v, out)
	}
	switch k &^ evLifecycle {
	case evCreated:
		n.respFor(v.Get("response"), out)
	case evCompleted:
		n.responseObject(v.Get("response"), typ, out)
	case evItemAdded:
		n.itemAdded(v.Get("item"), out)
	case evItemDone:
		i := v.Get("item")
		it := n.itemFor(sdk.View(i.Get("id")), sdk.View(i.Get("type")), out)
		n.snapItem(it, i, out)
	case evTextDelta:
		it := n.itemFor(sdk.View(v.Get("item_id")), "message", out)
		idx, _ := v.Get("content_index").Int()
		n.deltaText(it, int(idx), sdk.BlockText, v.Get("delta"), out)
	case evTextDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "message", out)
		idx, _ := v.Get("content_index").Int()
		n.snapText(it, int(idx), sdk.BlockText, v.Get("text"), out)
	case evRefusalDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "message", out)
		idx, _ := v.Get("content_index").Int()
		it.r.refuse(v.Get("refusal"))
		n.snapText(it, int(idx), sdk.BlockText, v.Get("refusal"), out)
	case evPartDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "message", out)
		idx, _ := v.Get("content_index").Int()
		n.snapPart(it, int(idx), v.Get("part"), out)
	case evSummaryDelta:
		it := n.itemFor(sdk.View(v.Get("item_id")), "reasoning", out)
		idx, _ := v.Get("summary_index").Int()
		n.deltaText(it, partSummary+int(idx), sdk.BlockThinking, v.Get("delta"), out)
	case evSummaryDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "reasoning", out)
		idx, _ := v.Get("summary_index").Int()
		n.snapText(it, partSummary+int(idx), sdk.BlockThinking, v.Get("text"), out)
	case evSummaryPartDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "reasoning", out)
		idx, _ := v.Get("summary_index").Int()
		n.snapText(it, partSummary+int(idx), sdk.BlockThinking, v.Path("part", "text"), out)
	case evReasoningDelta:
		it := n.itemFor(sdk.View(v.Get("item_id")), "reasoning", out)
		idx, _ := v.Get("content_index").Int()
		n.deltaText(it, int(idx), sdk.BlockThinking, v.Get("delta"), out)
	case evReasoningDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "reasoning", out)
		idx, _ := v.Get("content_index").Int()
		n.snapText(it, int(idx), sdk.BlockThinking, v.Get("text"), out)
	case evArgsDelta:
		it := n.itemFor(sdk.View(v.Get("item_id")), "", out)
		d := v.Get("delta")
		if it.argsDone || d.Kind() != abi.KindString || sdk.Text(d).IsEmpty() {
			return
		}
		s := n.slotFor(it, partTool)
		if !s.done {
			out.Append(it.r.key, s.n, sdk.BlockToolUse, sdk.Text(d))
		}
		it.args = sdk.AppendText(it.args, d)
	case evArgsDone:
		it := n.itemFor(sdk.View(v.Get("item_id")), "", out)
		args := v.Get("arguments")
		if !args.Exists() {
			args = v.Get("input")
		}
		if it.callID == "" || args.Kind() != abi.KindString {
			return // the item's done event completes it
		}
		it.argsDone, it.args = true, nil
		n.toolUse(it, sdk.JSON(args), args, out)
	case evAnnounce:
		// Annotations qualify text already delivered; empty parts are
		// announced before their deltas.
	default:
		if !progress {
			out.Unmapped(sdk.S(sdk.TypeName(typ)))
		}
	}
}

// touch tells the host that the response an event is about is still
// being written (an open message reopened only refreshes it): a hosted
// tool's progress may stream for hundreds of lines (the code
// interpreter's code, a patch's diff, an MCP call's arguments) before its
// item's done event writes anything, and an answer's annotations come
// one event each; the host closes a message no record has named for 64
// raw lines, and what the response wrote after that became a second
// message (its text a second time, when the .done events repeated it).
func (n *normalizer) touch(v abi.Value, out *sdk.Out) {
	r := n.cur
	if it := n.items[sdk.View(v.Get("item_id"))]; it != nil {
		r = it.r
	}
	if r != nil && !r.closed {
		out.Open(r.key, sdk.Message{})
	}
}

// isProgress reports the hosted tools' progress events.
func isProgress(typ abi.Value) bool {
	raw := typ.Raw()
	for _, p := range [...]string{
		`"response.web_search_call.`, `"response.file_search_call.`, `"response.code_interpreter_call`,
		`"response.mcp_call`, `"response.mcp_list_tools.`, `"response.image_generation_call.`,
		// The shell tool's command and output, and apply_patch's diff,
		// streamed: the done items carry them whole.
		`"response.shell_call_command.`, `"response.shell_call_output_content.`, `"response.apply_patch_call_operation_diff.`,
	} {
		if sdk.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// itemAdded registers an item: a tool call's block gets its name and id
// now, its input from the argument deltas.
func (n *normalizer) itemAdded(i abi.Value, out *sdk.Out) {
	it := n.itemFor(sdk.View(i.Get("id")), sdk.View(i.Get("type")), out)
	if it.typ != "function_call" && it.typ != "custom_tool_call" {
		return
	}
	it.hasCall = true
	it.callID, it.name = callIDOf(i), i.Get("name").String()
	s := n.slotFor(it, partTool)
	if !s.done {
		out.Block(it.r.key, s.n, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(it.name), ToolID: sdk.Opt(it.callID)})
	}
}

func callIDOf(i abi.Value) string {
	if c := i.Get("call_id"); c.Kind() == abi.KindString && !sdk.Text(c).IsEmpty() {
		return c.String()
	}
	return i.Get("id").String()
}

// callIDView is callIDOf without the copy (sdk.View): valid during the
// Line call only, for a lookup.
func callIDView(i abi.Value) string {
	if c := i.Get("call_id"); c.Kind() == abi.KindString && !sdk.Text(c).IsEmpty() {
		return sdk.View(c)
	}
	return sdk.View(i.Get("id"))
}

// deltaText appends a text or thinking delta to its block.
func (n *normalizer) deltaText(it *item, part int, blockType string, d abi.Value, out *sdk.Out) {
	if d.Kind() != abi.KindString || sdk.Text(d).IsEmpty() {
		return
	}
	s := n.slotFor(it, part)
	if s.done {
		return
	}
	out.Append(it.r.key, s.n, blockType, sdk.Text(d))
	if blockType == sdk.BlockText {
		s.text = true
		s.buf = sdk.AppendText(s.buf, d)
	}
}

// snapText sets a block from a complete value; the first snapshot wins,
// since later ones (output_item.done, response.completed) repeat it.
func (n *normalizer) snapText(it *item, part int, typ string, v abi.Value, out *sdk.Out) {
	s := n.slotFor(it, part)
	if s.done {
		return
	}
	s.done, s.buf = true, nil
	b := sdk.Block{Type: typ}
	txt := sdk.Text(v)
	if !txt.IsSet() {
		txt = sdk.S("")
	}
	if typ == sdk.BlockThinking {
		b.Thinking = txt
	} else {
		b.Text = txt
		s.text = true
		if !txt.IsEmpty() {
			out.Final(txt, true)
		}
	}
	out.Block(it.r.key, s.n, b)
}

// refuse notes a refusal part's text (the first one), which makes the
// response an error when it completes.
func (r *resp) refuse(v abi.Value) {
	if t := sdk.Text(v); r.refusal == "" && !t.IsEmpty() {
		r.refusal = sdk.Clip(t.String(), 200)
	}
}

// snapPart sets a message content part: output_text or refusal.
func (n *normalizer) snapPart(it *item, idx int, p abi.Value, out *sdk.Out) {
	pt := p.Get("type")
	switch {
	case pt.Is("output_text"), pt.Is("text"):
		n.snapText(it, idx, sdk.BlockText, p.Get("text"), out)
	case pt.Is("refusal"):
		it.r.refuse(p.Get("refusal"))
		n.snapText(it, idx, sdk.BlockText, p.Get("refusal"), out)
	case pt.Is("reasoning_text"):
		n.snapText(it, idx, sdk.BlockThinking, p.Get("text"), out)
	default:
		out.Unmapped(sdk.S("content/" + sdk.TypeName(pt)))
	}
}

// snapItem sets every block of a complete output item and reports the
// tool call (and result) it carries.
func (n *normalizer) snapItem(it *item, i abi.Value, out *sdk.Out) {
	t := i.Get("type")
	switch {
	case t.Is("message") && i.Get("role").Kind() == abi.KindString && !i.Get("role").Is("assistant"):
		n.keptItem(it, i, out)
	case t.Is("message"):
		idx := 0
		p := i.Get("content").Iter()
		for ; p.Next(); idx++ {
			n.snapPart(it, idx, p.Value(), out)
		}
	case t.Is("reasoning"):
		found := false
		idx := 0
		p := i.Get("summary").Iter()
		for ; p.Next(); idx++ {
			if tx := p.Value().Get("text"); tx.Kind() == abi.KindString && !sdk.Text(tx).IsEmpty() {
				n.snapText(it, partSummary+idx, sdk.BlockThinking, tx, out)
				found = true
			}
		}
		idx = 0
		p = i.Get("content").Iter()
		for ; p.Next(); idx++ {
			if tx := p.Value().Get("text"); tx.Kind() == abi.KindString && !sdk.Text(tx).IsEmpty() {
				n.snapText(it, idx, sdk.BlockThinking, tx, out)
				found = true
			}
		}
		if !found && !n.hasParts(it) {
			// The model reasoned but sent nothing readable (encrypted
			// content only, or no summary requested): mark it.
			s := n.slotFor(it, partRedacted)
			if !s.done {
				s.done = true
				out.Block(it.r.key, s.n, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(""), Redacted: true})
			}
		}
	case t.Is("function_call"):
		it.hasCall = true
		it.callID, it.name = callIDOf(i), i.Get("name").String()
		args := i.Get("arguments")
		n.toolUse(it, sdk.JSON(args), args, out)
	case t.Is("custom_tool_call"):
		// Freeform tools: the input is text, kept as a string unless it
		// is JSON.
		it.hasCall = true
		it.callID, it.name = callIDOf(i), i.Get("name").String()
		n.toolUse(it, sdk.JSON(i.Get("input")), abi.Value{}, out)
	case t.Is("shell_call_output"), t.Is("tool_search_output"), t.Is("program_output"):
		n.outputItem(it, i, t, out)
	case t.Is("compaction"), t.Is("compaction_summary"):
		// The context compacted into encrypted content: nothing
		// readable, but the model no longer sees what it replaced.
		if !it.noted {
			it.noted = true
			out.Warn("openai compaction: the conversation before it was replaced by an encrypted compaction item in the model's context; the transcript keeps what it replaced")
		}
	default:
		if !n.hostedTool(it, i, t, out) {
			out.Unmapped(sdk.S("item/" + sdk.TypeName(t)))
		}
	}
}

// keptItem reports a message of another role than the assistant's in a
// response's output: an input item a /responses/compact body keeps beside
// its compaction item. It is context the model continues from, not what
// the model said: a message.user of injected context, once.
func (n *normalizer) keptItem(it *item, i abi.Value, out *sdk.Out) {
	if it.noted {
		return
	}
	it.noted = true
	var key sdk.Str
	c := i.Get("content")
	text := func(v abi.Value) {
		if v.Kind() != abi.KindString || sdk.Text(v).IsEmpty() {
			return
		}
		if !key.IsSet() {
			key = n.newKey("k")
			out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(i.Get("id")), Time: it.r.time})
		}
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v), Origin: sdk.OriginInjected})
	}
	if c.Kind() == abi.KindString {
		text(c)
	}
	p := c.Iter()
	for p.Next() {
		text(p.Value().Get("text"))
	}
	if key.IsSet() {
		out.Close(key, sdk.MessageEnd{})
	}
}

// outputItem reports the result a response's own output item carries
// for a call of the same response: a shell_call_output (the shell tool
// run in OpenAI's container), a tool_search_output, a program_output
// (programmatic tool calling). A server-run tool search names no call
// id: its output answers the latest search without a result.
func (n *normalizer) outputItem(it *item, i, t abi.Value, out *sdk.Out) {
	id := ""
	if c := i.Get("call_id"); c.Kind() == abi.KindString {
		id = sdk.View(c)
	}
	if id == "" && t.Is("tool_search_output") {
		id = n.search
	}
	if id == "" || n.results[id] > 0 {
		return
	}
	callID := strings.Clone(id)
	n.results[callID]++
	var r sdk.ToolResult
	switch {
	case t.Is("shell_call_output"):
		r = shellResult(i.Get("output"), i.Get("status"))
		r.Name = sdk.S("shell")
	case t.Is("tool_search_output"):
		r = sdk.ToolResult{Name: sdk.S("tool_search"), Output: jsonOrUnset(i.Get("tools")), Status: sdk.S(toolStatus(i.Get("status"), false))}
	default:
		r = sdk.ToolResult{Name: sdk.S("program"), Output: sdk.StringOf(i.Get("result")), Status: sdk.S(toolStatus(i.Get("status"), false))}
	}
	if st := r.Status.String(); st != toolOK && r.Error.IsEmpty() {
		r.IsError, r.Error = st == toolError, sdk.S("the tool call is "+sdk.TypeName(i.Get("status")))
	}
	r.CallID, r.Time = sdk.S(callID), it.r.time
	rs := n.slotFor(it, partResult)
	if !rs.done {
		rs.done = true
		content := r.Output
		if !content.IsSet() {
			content = r.Error
		}
		out.Block(it.r.key, rs.n, sdk.Block{Type: sdk.BlockToolResult, ToolID: r.CallID, ToolContent: content, IsError: r.IsError})
	}
	out.ToolResult(r)
}

// shellResult reads a shell tool's output, one entry per command
// {stdout, stderr, outcome: {type: exit, exit_code} | {type: timeout}}:
// the output is every command's stdout and stderr; a command that timed
// out makes the call cancelled, a non-zero exit code an error stating
// it (the first non-zero code is the call's; else the last).
func shellResult(o, status abi.Value) sdk.ToolResult {
	r := sdk.ToolResult{Status: sdk.S(toolStatus(status, false))}
	if o.Kind() != abi.KindArray {
		r.Output = jsonOrUnset(o)
		return r
	}
	var b []byte
	var failed abi.Value // the entry that failed or timed out first
	var code sdk.Int
	timedOut := false
	it := o.Iter()
	for it.Next() {
		e := it.Value()
		for _, f := range [...]string{"stdout", "stderr"} {
			if v := e.Get(f); v.Kind() == abi.KindString && !v.Is("") {
				if len(b) > 0 && b[len(b)-1] != '\n' {
					b = append(b, '\n')
				}
				b = sdk.AppendText(b, v)
			}
		}
		oc := e.Get("outcome")
		switch {
		case oc.Get("type").Is("timeout"):
			if !failed.Exists() {
				failed, timedOut = e, true
			}
		case oc.Get("exit_code").Exists():
			c := sdk.IntOf(oc.Get("exit_code"))
			if ec, ok := oc.Get("exit_code").Int(); ok && ec != 0 && !failed.Exists() {
				failed, code = e, c
			} else if !failed.Exists() {
				code = c
			}
		}
	}
	r.Output, r.ExitCode = sdk.S(string(b)), code
	switch {
	case timedOut:
		// The exit codes stated are of the commands before it.
		r.Status, r.IsError, r.Error, r.ExitCode = sdk.S(toolCancelled), false, sdk.S("the command timed out"), sdk.Int{}
	case failed.Exists():
		ec, _ := failed.Path("outcome", "exit_code").Int()
		msg := "exit code " + itoa(ec)
		if l := lastLine(failed.Get("stderr")); l != "" {
			msg += ": " + l
		} else if l := lastLine(failed.Get("stdout")); l != "" {
			msg += ": " + l
		}
		r.Status, r.IsError, r.Error = sdk.S(toolError), true, sdk.S(msg)
	}
	return r
}

// lastLine is the last non-blank line of string v.
func lastLine(v abi.Value) string {
	s := strings.TrimRight(v.String(), " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// hasParts reports whether an item already has blocks (built from
// deltas of a stream whose snapshot lost them).
func (n *normalizer) hasParts(it *item) bool { return it.nparts > 0 }

// toolUse sets an item's tool_use block and reports its tool.call; args
// is as toolCall takes it.
func (n *normalizer) toolUse(it *item, input sdk.Str, args abi.Value, out *sdk.Out) {
	if !input.IsSet() || (input.IsEmpty() && !argsRoot(args).Exists()) {
		input, args = jsonInput(nil)
	}
	s := n.slotFor(it, partTool)
	if !s.done {
		s.done = true
		out.Block(it.r.key, s.n, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(it.name), ToolID: sdk.Opt(it.callID), ToolInput: input})
	}
	it.args = nil
	n.toolCall(it.callID, it.name, input, args, it.r.time, false, out)
}

// hostedTool maps the built-in tool items. Those OpenAI runs itself
// (web and file search, code interpreter, MCP) carry their outcome; those
// the caller runs (local shell, computer, shell, apply_patch) get their
// result as an input item of the next request.
func (n *normalizer) hostedTool(it *item, i, t abi.Value, out *sdk.Out) bool {
	var name, kind string
	var input sdk.Str
	var args abi.Value // as toolCall takes it
	var command sdk.Str
	server := true
	switch {
	case t.Is("web_search_call"):
		name, kind = "web_search", "fetch"
		input = sdk.JSON(i.Get("action"))
	case t.Is("file_search_call"):
		name, kind = "file_search", "search"
		input = objectOf("queries", i.Get("queries"))
	case t.Is("code_interpreter_call"):
		name, kind = "code_interpreter", "execute"
		input = objectOf("code", i.Get("code"))
	case t.Is("mcp_call"), t.Is("mcp_approval_request"):
		name, kind = i.Get("name").String(), "other"
		if l := i.Get("server_label").String(); l != "" {
			name = l + "." + name
		}
		input, args = sdk.JSON(i.Get("arguments")), i.Get("arguments")
		// A call waiting for the user's approval (spec §6.12): its
		// outcome is the approved mcp_call, or the refusal in the next
		// request's mcp_approval_response; dangling until then.
		server = t.Is("mcp_call")
	case t.Is("mcp_list_tools"):
		// OpenAI listing an MCP server's tools for the model: not an
		// action of the agent. A listing that failed is an error the
		// provider reported.
		if e := i.Get("error"); e.Exists() && e.Kind() != abi.KindNull {
			msg := sdk.Text(e.Get("message"))
			if msg.IsEmpty() {
				msg = sdk.Text(e)
			}
			out.Status(sdk.StatusError, msg, sdk.LevelError)
		}
		return true
	case t.Is("image_generation_call"):
		// The prompt the tool used (revised_prompt) is its input, the
		// image (result, base64) its output.
		name, kind = "image_generation", "other"
		input = objectOf("revised_prompt", i.Get("revised_prompt"))
	case t.Is("local_shell_call"):
		name, kind, server = "local_shell", "execute", false
		input = sdk.JSON(i.Get("action"))
		command = shellJoin(i.Path("action", "command"))
	case t.Is("shell_call"):
		name, kind, server = "shell", "execute", false
		input = sdk.JSON(i.Get("action"))
		if c := i.Path("action", "commands"); c.Kind() == abi.KindArray && c.Len() == 1 {
			command = sdk.StringOf(c.Index(0))
		}
	case t.Is("apply_patch_call"):
		name, kind, server = "apply_patch", "edit", false
		input = sdk.JSON(i.Get("operation"))
	case t.Is("computer_call"):
		name, kind, server = "computer", "other", false
		input = sdk.JSON(i.Get("action"))
	case t.Is("x_search_call"):
		// xAI's Responses API searching X: run by the server, like
		// web_search_call; the item names the search it ran.
		name, kind = "x_search", "search"
		if nm := i.Get("name").String(); nm != "" {
			name = nm
		}
		input = jsonOrUnset(i.Get("arguments"))
	case t.Is("tool_search_call"):
		// The model searching the tools it may load: its outcome is a
		// tool_search_output item (this response's when OpenAI runs it).
		name, kind, server = "tool_search", "search", false
		input = jsonOrUnset(i.Get("arguments"))
	case t.Is("program"):
		// Programmatic tool calling: code OpenAI runs, which calls the
		// caller's tools; its outcome is a program_output item.
		name, kind, server = "program", "execute", false
		input = objectOf("code", i.Get("code"))
	default:
		return false
	}
	it.hasCall = true
	it.callID, it.name = callIDOf(i), name
	if t.Is("tool_search_call") {
		n.search = it.callID
	}
	if a := i.Get("approval_request_id").String(); a != "" && n.calls[a] > 0 {
		// The approved execution of a call already reported as waiting
		// for approval: its outcome is that call's result.
		it.callID = a
	}
	if !input.IsSet() {
		input, _ = jsonInput(nil)
	}
	s := n.slotFor(it, partTool)
	if !s.done {
		s.done = true
		out.Block(it.r.key, s.n, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(name), ToolID: sdk.Opt(it.callID), ToolInput: input})
	}
	if n.calls[it.callID] == 0 && it.callID != "" {
		n.calls[it.callID]++
		tc := sdk.ToolCall{CallID: sdk.S(it.callID), Name: sdk.Opt(name), Input: input, Kind: kind, Command: command, Time: it.r.time}
		if kind == "execute" && !command.IsSet() {
			if root := argsRoot(args); root.Exists() {
				tc.Command = commandOf(root)
			}
		}
		out.ToolCall(tc)
	}
	st := i.Get("status")
	if !server || n.results[it.callID] > 0 || it.callID == "" {
		return true
	}
	failed := st.Is("failed") || st.Is("incomplete") || i.Get("error").Kind() == abi.KindString || i.Get("error").Kind() == abi.KindObject
	if !st.Is("completed") && !failed && !(t.Is("mcp_call") && (i.Get("output").Exists() || failed)) {
		return true // still running: no outcome yet
	}
	var output sdk.Str
	switch {
	case t.Is("web_search_call"):
		output = jsonOrUnset(i.Path("action", "sources"))
	case t.Is("file_search_call"):
		output = jsonOrUnset(i.Get("results"))
	case t.Is("code_interpreter_call"):
		output = logsOf(i.Get("outputs"))
	case t.Is("mcp_call"):
		output = sdk.StringOf(i.Get("output"))
	case t.Is("image_generation_call"):
		output = sdk.StringOf(i.Get("result"))
	}
	var errS sdk.Str
	if e := i.Get("error"); e.Kind() == abi.KindString {
		errS = sdk.Text(e)
	} else if e.Kind() == abi.KindObject {
		errS = sdk.Text(e.Get("message"))
	}
	n.results[it.callID]++
	status := sdk.S(toolStatus(st, failed))
	if status.String() != toolOK {
		errS = errorText(errS, "the tool call "+sdk.TypeName(st))
	}
	rs := n.slotFor(it, partResult)
	content := output
	if !content.IsSet() {
		content = errS
	}
	if !rs.done {
		rs.done = true
		out.Block(it.r.key, rs.n, sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(it.callID), ToolContent: content, IsError: failed})
	}
	out.ToolResult(sdk.ToolResult{CallID: sdk.S(it.callID), Name: sdk.Opt(name), Output: output, Error: errS, IsError: failed, Status: status, Time: it.r.time})
	return true
}

// jsonOrUnset is v as JSON, unset when missing or null (not stated).
func jsonOrUnset(v abi.Value) sdk.Str {
	if v.Kind() == abi.KindNull {
		return sdk.Str{}
	}
	return sdk.JSON(v)
}

// objectOf builds {"key": value} around a value of the current line.
func objectOf(key string, v abi.Value) sdk.Str {
	if !v.Exists() {
		return sdk.Str{}
	}
	b := make([]byte, 0, len(key)+len(v.Raw())+6)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, v.Raw()...)
	b = append(b, '}')
	in, _ := jsonInput(b)
	return in
}

// logsOf is a code interpreter's output: its logs, joined.
func logsOf(outputs abi.Value) sdk.Str {
	var b []byte
	other := false
	it := outputs.Iter()
	for it.Next() {
		o := it.Value()
		if l := o.Get("logs"); l.Kind() == abi.KindString {
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = sdk.AppendText(b, l)
		} else {
			other = true
		}
	}
	if other {
		return sdk.JSON(outputs)
	}
	if outputs.Kind() != abi.KindArray {
		return sdk.Str{}
	}
	return sdk.S(string(b))
}

// responseObject handles a whole response: a body, or the final object
// of response.completed / .failed / .incomplete (ev names the event).
func (n *normalizer) responseObject(v, ev abi.Value, out *sdk.Out) {
	if v.Kind() != abi.KindObject {
		// A terminal event without its response: the event decides.
		v = abi.Value{}
	}
	r := n.respFor(v, out)
	if r.closed {
		return // a repeated terminal event
	}
	o := v.Get("output").Iter()
	for o.Next() {
		i := o.Value()
		it := n.itemFor(sdk.View(i.Get("id")), sdk.View(i.Get("type")), out)
		if it.r != r {
			continue // an id reused across responses: already written
		}
		n.snapItem(it, i, out)
	}
	st := v.Get("status")
	switch {
	case st.Is("in_progress"), st.Is("queued"):
		if !ev.Exists() {
			// A background response polled before it finished: its
			// message so far, no status.
			n.closeResp(r, out)
			return
		}
	}
	reason := v.Path("incomplete_details", "reason")
	u := usageOf(v.Get("usage"))
	u.Tier = sdk.TierOf(v.Get("service_tier"))
	n.closeRespWith(r, sdk.MessageEnd{StopReason: sdk.StringOf(reason), Usage: u}, out)
	costOf(v.Get("usage")).report(out)
	if mod := v.Get("moderation"); mod.Kind() == abi.KindObject {
		moderation(mod, out)
	}
	switch {
	case r.refusal != "" && (st.Is("completed") || !st.Exists() && ev.Is("response.completed")):
		// The model declined to answer (a refusal content part): the
		// response completed without the answer asked for, which is an
		// error, as an Anthropic stop_reason refusal is.
		n.status(sdk.StatusError, sdk.S(refusalError(r.refusal)), out)
	case st.Is("completed") || !st.Exists() && (ev.Is("response.completed") || v.Get("object").Is("response.compaction")):
		n.status(sdk.StatusOK, sdk.Str{}, out)
	case st.Is("failed") || !st.Exists() && ev.Is("response.failed"):
		e := v.Get("error")
		msg := sdk.Text(e.Get("message"))
		if msg.IsEmpty() {
			msg = sdk.Text(e.Get("code"))
		}
		if msg.IsEmpty() {
			msg = sdk.S("response failed")
		}
		n.status(sdk.StatusError, msg, out)
	case st.Is("incomplete") || !st.Exists() && ev.Is("response.incomplete"):
		switch {
		case reason.Is("content_filter"):
			n.status(sdk.StatusError, sdk.S("content_filter: the output was withheld by the provider's content filter"), out)
		default:
			msg := sdk.S("response incomplete")
			switch {
			case reason.Is("max_output_tokens"):
				msg = sdk.S("response incomplete: output cut at the token limit (max_output_tokens)")
			case reason.Kind() == abi.KindString:
				msg = sdk.S("response incomplete: " + sdk.TypeName(reason))
			}
			n.status(sdk.StatusIncomplete, msg, out)
		}
	case st.Is("cancelled"):
		n.status(sdk.StatusError, sdk.S("response cancelled"), out)
	}
}

// closeResp closes a response cut before its terminal event.
func (n *normalizer) closeResp(r *resp, out *sdk.Out) {
	n.closeRespWith(r, sdk.MessageEnd{}, out)
}

// closeRespWith completes what deltas left open (a tool call whose
// arguments never finished, text that never got its .done) and writes
// the message.
func (n *normalizer) closeRespWith(r *resp, e sdk.MessageEnd, out *sdk.Out) {
	if r.closed {
		return
	}
	r.closed = true
	if n.cur == r {
		n.cur = nil
	}
	for _, it := range r.items {
		if it.hasCall && n.calls[it.callID] == 0 && it.callID != "" {
			input, root := jsonInput(it.args)
			n.toolUse(it, input, root, out)
		}
	}
	// The answer is the last text block; one that only deltas built
	// (a stream cut before its .done) has its text here.
	var last *slot
	for _, s := range r.slots {
		if s.text {
			last = s
		}
	}
	if last != nil && !last.done && len(last.buf) > 0 {
		out.Final(sdk.S(string(last.buf)), true)
	}
	out.Close(r.key, e)
	if !r.counted {
		r.counted = true
		out.Usage(e.Usage, sdk.ModeAdd)
	}
}
