package openai

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// chatResp is one Chat Completions response being streamed: one message
// per choice.
type chatResp struct {
	id      string
	model   sdk.Str // kept literal
	time    sdk.Str
	msgs    []*chatMsg // in order of first appearance
	byIndex map[int64]*chatMsg
	usage   sdk.Usage
	tier    string // the service tier the chunks state, the last one stated
	cost    statedCost
	errored bool // a choice ended in content_filter, or refused
	closed  bool
}

// chatMsg is the message of one choice.
type chatMsg struct {
	key      sdk.Str
	index    int64
	nslots   int
	think    int // slot numbers, -1 until the block appears
	text     int
	refusal  int
	textBuf  []byte // joined content, for the final answer (choice 0)
	refBuf   []byte // joined refusal: the answer when there is no content (choice 0)
	refused  bool   // the choice has a refusal
	calls    []*chatCall
	byIndex  map[int64]*chatCall // calls by fragment index
	byID     map[string]*chatCall
	finish   string
	finished bool
	redacted bool                // a redacted thinking block was set for encrypted reasoning
	exec     map[int64]*execTool // tools the server ran, by executed_tools index
}

// execTool is a tool the server ran itself (executed_tools).
type execTool struct {
	id, name string
	slot     int
	result   bool
}

// chatCall is one streamed tool call, joined by its fragments' index.
type chatCall struct {
	slot     int
	index    int64
	id, name string
	args     []byte
	late     bool // id or name arrived after the block was set
}

func (m *chatMsg) alloc(s *int) int {
	if *s < 0 {
		*s = m.nslots
		m.nslots++
	}
	return *s
}

// chatFor returns the response a chunk belongs to, closing the previous
// one when a new response starts.
func (n *normalizer) chatFor(v abi.Value, out *sdk.Out) *chatResp {
	id := sdk.View(v.Get("id")) // aliases the line until copied below
	if r := n.chat; r != nil {
		// A chunk without id (Azure's prompt_filter_results chunk) or
		// with the current id continues the response; so does a new id
		// while a choice is still unfinished (servers that number
		// every chunk).
		if id == "" || id == r.id || r.unfinished() {
			return r
		}
		n.closeChat(r, out)
	}
	r := &chatResp{id: strings.Clone(id), model: sdk.StringOf(v.Get("model")).Keep(), time: unixTime(v.Get("created"))}
	n.chat = r
	n.model(v.Get("model"), out)
	return r
}

func (r *chatResp) unfinished() bool {
	for _, m := range r.msgs {
		if !m.finished {
			return true
		}
	}
	return false
}

// msg returns the message of choice idx, opening it.
func (n *normalizer) chatMsg(r *chatResp, idx int64, out *sdk.Out) *chatMsg {
	if m := r.byIndex[idx]; m != nil {
		return m
	}
	// The call maps are made with the first call: most messages have
	// none, and a map is an allocation inside WebAssembly.
	m := &chatMsg{key: n.newKey("c"), index: idx, think: -1, text: -1, refusal: -1}
	if r.byIndex == nil {
		r.byIndex = map[int64]*chatMsg{}
	}
	r.byIndex[idx] = m
	r.msgs = append(r.msgs, m)
	out.Open(m.key, sdk.Message{ID: sdk.Opt(r.id), Model: r.model, Time: r.time})
	return m
}

// chunk handles one chat.completion.chunk.
func (n *normalizer) chunk(v abi.Value, out *sdk.Out) {
	// object found v's members (n.of): read before any call.
	f := &n.of
	tier, choices, usage, errv := f[oServiceTier], f[oChoices], f[oUsage], f[oError]
	n.setFormat(FormatChatSSE, out)
	r := n.chatFor(v, out)
	if t := sdk.TierOf(tier); t != "" {
		r.tier = t
	}
	// said: the chunk added something to the transcript. One that adds
	// nothing (an empty delta between pieces, a delta of annotations
	// only, an empty reasoning_details entry) is declared ignored at the
	// end, so every line is accounted for (spec §6.8).
	said := false
	pos := int64(0)
	it := choices.Iter()
	for ; it.Next(); pos++ {
		c := it.Value()
		idx, ok := c.Get("index").Int()
		if !ok {
			idx = pos
		}
		opened := len(r.msgs)
		m := n.chatMsg(r, idx, out)
		said = said || len(r.msgs) > opened
		d := c.Get("delta")
		if !d.Exists() {
			d = c.Get("message")
		}
		if !d.Exists() {
			// A legacy Completions chunk (text_completion): the choice's
			// text is the delta.
			d = c
		}
		if n.delta(r, m, d, out) {
			said = true
		}
		if fr := c.Get("finish_reason"); fr.Kind() == abi.KindString && !sdk.Text(fr).IsEmpty() && !m.finished {
			// A finish_reason repeated after the choice's (OpenRouter
			// sends it again with an empty delta) says nothing new.
			m.finish = fr.String()
			n.finishChoice(r, m, out)
			said = true
		}
	}
	if mod := v.Get("moderation"); mod.Kind() == abi.KindObject {
		// The moderation results the request asked for (the chunk after
		// the last choice's): what they flagged is a warning.
		moderation(mod, out)
		if !said {
			out.Ignored(sdk.S("moderation"))
			said = true
		}
	}
	u := usage
	if u.Kind() != abi.KindObject {
		// Groq states a stream's usage in its own x_groq object, on
		// the chunk of the finish_reason (its bodies use usage).
		u = v.Path("x_groq", "usage")
	}
	if u.Kind() == abi.KindObject {
		said = true
		// The last report wins: a server that repeats usage on every
		// chunk sends running totals.
		r.usage = usageOf(u)
		r.cost = costOf(u)
		if choices.Kind() != abi.KindArray || choices.Len() > 0 {
			// Reported when the response closes, by another line:
			// declared, so a chunk that only repeats a finish_reason
			// and states usage (OpenRouter) is accounted for (spec
			// §6.8).
			out.Ignored(sdk.S("chunk_usage"))
		}
	}
	if e := errv; e.Kind() == abi.KindObject {
		n.apiError(e, out)
		said = true
	}
	if choices.Kind() == abi.KindArray && choices.Len() == 0 && usage.Kind() == abi.KindObject {
		// include_usage: the usage chunk is the response's last.
		n.closeChat(r, out)
	}
	if !said {
		if k := unknownDelta(choices); k != "" {
			// A delta field this plugin does not read, with a value:
			// counted, so that what a server adds shows in the drift
			// report instead of passing as an empty chunk.
			out.Unmapped(sdk.S("delta/" + k))
		} else {
			out.Ignored(sdk.S("chunk_without_content"))
		}
	}
}

// knownDelta are the delta fields the plugin reads or knows carry
// nothing to keep (Hugging Face's token_id, annotations qualifying text
// already delivered).
var knownDelta = [...]string{
	"role", "content", "reasoning", "reasoning_content", "reasoning_details", "refusal", "tool_calls",
	"function_call", "audio", "annotations", "executed_tools", "text", "token_id",
}

// unknownDelta is the first field of a choice's delta that the plugin
// does not know and that holds something (not null, "", [] or {}), ""
// when there is none.
func unknownDelta(choices abi.Value) string {
	it := choices.Iter()
	for it.Next() {
		f := it.Value().Get("delta").Iter()
		for f.Next() {
			k := sdk.View(f.Key())
			known := false
			for _, d := range &knownDelta {
				known = known || d == k
			}
			v := f.Value()
			switch {
			case known, v.Kind() == abi.KindNull, v.Kind() == abi.KindString && sdk.Text(v).IsEmpty(),
				(v.Kind() == abi.KindArray || v.Kind() == abi.KindObject) && v.Len() == 0:
				continue
			}
			return strings.Clone(k)
		}
	}
	return ""
}

// moderation reports what the moderation results of a response (Chat
// Completions' moderation, a chunk's or a body's; the Responses API's)
// flagged, side by side: input and output, each one result or a list
// of them ({flagged, categories}). A result that flagged nothing says
// nothing: the response is what it is either way (the API answers in
// full even under a block policy).
func moderation(mod abi.Value, out *sdk.Out) {
	for _, side := range [...]string{"input", "output"} {
		v := mod.Get(side)
		var flagged []byte
		if rs := v.Get("results"); rs.Kind() == abi.KindArray {
			it := rs.Iter()
			for it.Next() {
				flagged = flaggedCategories(flagged, it.Value())
			}
		} else {
			flagged = flaggedCategories(flagged, v)
		}
		if len(flagged) > 0 {
			model := v.Get("model").String()
			msg := "openai moderation flagged the " + side + ": " + string(flagged)
			if model != "" {
				msg += " (" + model + ")"
			}
			out.Warn(msg)
		}
	}
}

// flaggedCategories appends to b the categories a flagged moderation
// result names true ("flagged" when it names none), comma separated.
func flaggedCategories(b []byte, r abi.Value) []byte {
	if f, ok := r.Get("flagged").Bool(); !ok || !f {
		return b
	}
	n := len(b)
	it := r.Get("categories").Iter()
	for it.Next() {
		if t, ok := it.Value().Bool(); ok && t {
			if len(b) > 0 {
				b = append(b, ", "...)
			}
			b = append(b, it.Key().String()...)
		}
	}
	if len(b) == n {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "flagged"...)
	}
	return b
}

// delta applies one choice's delta and says whether it added anything
// (an empty delta, or one of annotations alone, adds nothing).
func (n *normalizer) delta(r *chatResp, m *chatMsg, d abi.Value, out *sdk.Out) bool {
	said := false
	th := d.Get("reasoning_content")
	if th.Kind() != abi.KindString {
		th = d.Get("reasoning")
	}
	if th.Kind() == abi.KindString && !sdk.Text(th).IsEmpty() {
		out.Append(m.key, m.alloc(&m.think), sdk.BlockThinking, sdk.Text(th))
		said = true
	}
	if !m.redacted && m.think < 0 && encryptedReasoning(d.Get("reasoning_details")) {
		// OpenRouter's reasoning_details: the text of reasoning.text
		// entries is also the reasoning string above; a
		// reasoning.encrypted entry is reasoning the model did that no
		// one can read (Responses' encrypted_content): a redacted
		// thinking block, once.
		m.redacted = true
		slot := -1
		out.Block(m.key, m.alloc(&slot), sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(""), Redacted: true})
		said = true
	}
	c := d.Get("content")
	if c.Kind() == abi.KindArray {
		// Content parts (Mistral): thinking and text pieces, in order.
		pt := c.Iter()
		for pt.Next() {
			p := pt.Value()
			if th := thinkingOf(p); th.IsSet() {
				if !th.IsEmpty() {
					out.Append(m.key, m.alloc(&m.think), sdk.BlockThinking, th)
					said = true
				}
			} else if t := p.Get("text"); t.Kind() == abi.KindString && !sdk.Text(t).IsEmpty() {
				out.Append(m.key, m.alloc(&m.text), sdk.BlockText, sdk.Text(t))
				said = true
				if m.index == 0 {
					m.textBuf = sdk.AppendText(m.textBuf, t)
				}
			}
		}
	}
	if c.Kind() != abi.KindString {
		c = d.Get("text") // a legacy Completions choice
	}
	if c.Kind() == abi.KindString && !sdk.Text(c).IsEmpty() {
		out.Append(m.key, m.alloc(&m.text), sdk.BlockText, sdk.Text(c))
		said = true
		if m.index == 0 {
			m.textBuf = sdk.AppendText(m.textBuf, c)
		}
	}
	if tr := d.Path("audio", "transcript"); tr.Kind() == abi.KindString && !sdk.Text(tr).IsEmpty() {
		// An answer spoken (audio output, modalities ["text", "audio"]):
		// its content is null and what the model said is the audio's
		// transcript, streamed in pieces like content. The audio itself
		// (base64 data) is not kept.
		out.Append(m.key, m.alloc(&m.text), sdk.BlockText, sdk.Text(tr))
		said = true
		if m.index == 0 {
			m.textBuf = sdk.AppendText(m.textBuf, tr)
		}
	}
	if rf := d.Get("refusal"); rf.Kind() == abi.KindString && !sdk.Text(rf).IsEmpty() {
		out.Append(m.key, m.alloc(&m.refusal), sdk.BlockText, sdk.Text(rf))
		said = true
		m.refused = true
		m.refBuf = sdk.AppendText(m.refBuf, rf)
	}
	pos := int64(0)
	it := d.Get("tool_calls").Iter()
	for ; it.Next(); pos++ {
		n.toolFragment(r, m, it.Value(), pos, out) // a block, an append or a declared fragment
		said = true
	}
	if fc := d.Get("function_call"); fc.Kind() == abi.KindObject {
		// The pre-tools function_call: one call per choice, no id.
		n.fragment(m, m.callAt(-1, ""), -1, sdk.Str{}, fc, out)
		said = true
	}
	if n.executedTools(r, m, d.Get("executed_tools"), out) {
		said = true
	}
	return said
}

// executedTools reports the tools the server ran itself, listed in a
// message or a stream's deltas as executed_tools (Groq's compound
// models search, visit pages and run code so: [{index, type, arguments,
// output, search_results}]): each entry's tool call and tool_use block
// when it is first seen, its result and tool_result block once it
// carries an output (a stream states the call, then again with its
// output). The server gives them no id: one stable per response, choice
// and index. It says whether it reported anything.
func (n *normalizer) executedTools(r *chatResp, m *chatMsg, list abi.Value, out *sdk.Out) bool {
	said := false
	pos := int64(0)
	it := list.Iter()
	for ; it.Next(); pos++ {
		e := it.Value()
		idx, ok := e.Get("index").Int()
		if !ok {
			idx = pos
		}
		x := m.exec[idx]
		if x == nil {
			x = &execTool{id: r.id + "#" + itoa(m.index) + ".executed." + itoa(idx), name: e.Get("type").String(), slot: m.nslots}
			m.nslots++
			if m.exec == nil {
				m.exec = map[int64]*execTool{}
			}
			m.exec[idx] = x
			args := e.Get("arguments")
			input := sdk.JSON(args)
			if sdk.Text(args).IsEmpty() {
				input, _ = jsonInput(nil)
			}
			out.Block(m.key, x.slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(x.name), ToolID: sdk.S(x.id), ToolInput: input})
			n.toolCall(x.id, x.name, input, args, r.time, false, out)
			said = true
		}
		o := e.Get("output")
		if x.result || o.Kind() != abi.KindString {
			continue
		}
		x.result = true
		slot := m.nslots
		m.nslots++
		out.Block(m.key, slot, sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(x.id), ToolContent: sdk.Text(o)})
		n.results[x.id]++
		out.ToolResult(sdk.ToolResult{CallID: sdk.S(x.id), Name: sdk.Opt(x.name), Output: sdk.Text(o), Status: sdk.S(toolOK), Time: r.time})
		said = true
	}
	return said
}

// encryptedReasoning says whether a reasoning_details list holds a
// reasoning.encrypted entry with data.
func encryptedReasoning(ds abi.Value) bool {
	it := ds.Iter()
	for it.Next() {
		d := it.Value()
		if d.Get("type").Is("reasoning.encrypted") && !sdk.Text(d.Get("data")).IsEmpty() {
			return true
		}
	}
	return false
}

// thinkingOf is the text of a thinking content part (Mistral's
// {type: thinking, thinking: "..." | [{type: text, text}]}), unset for
// any other part.
func thinkingOf(p abi.Value) sdk.Str {
	if !p.Get("type").Is("thinking") {
		return sdk.Str{}
	}
	th := p.Get("thinking")
	if th.Kind() != abi.KindArray {
		if t := sdk.StringOf(th); t.IsSet() {
			return t
		}
		return sdk.S("")
	}
	if th.Len() == 1 {
		if t := sdk.StringOf(th.Index(0).Get("text")); t.IsSet() {
			return t
		}
	}
	var b []byte
	it := th.Iter()
	for it.Next() {
		b = sdk.AppendText(b, it.Value().Get("text"))
	}
	return sdk.S(string(b))
}

// callAt finds the call a fragment continues: by index, else by id,
// else the latest one.
func (m *chatMsg) callAt(index int64, id string) *chatCall {
	if c := m.byIndex[index]; c != nil {
		return c
	}
	if id != "" {
		return m.byID[id]
	}
	return nil
}

// toolFragment applies one tool_calls[] fragment.
func (n *normalizer) toolFragment(r *chatResp, m *chatMsg, tc abi.Value, pos int64, out *sdk.Out) {
	id := sdk.StringOf(tc.Get("id"))
	idx, ok := tc.Get("index").Int()
	var c *chatCall
	switch {
	case ok:
		c = m.callAt(idx, "")
	case !id.IsEmpty():
		// Servers that leave out index send one whole call per
		// fragment.
		c = m.callAt(-2, id.String())
		idx = int64(1000 + len(m.calls))
	case len(m.calls) > 0:
		// ...or continue the latest call without an id.
		c = m.calls[len(m.calls)-1]
	default:
		idx = pos
	}
	n.fragment(m, c, idx, id, tc.Get("function"), out)
}

// fragment joins one piece of a call (id, function.name,
// function.arguments) into c, creating the call when c is nil.
func (n *normalizer) fragment(m *chatMsg, c *chatCall, idx int64, id sdk.Str, fn abi.Value, out *sdk.Out) {
	name := fn.Get("name")
	if c == nil {
		c = &chatCall{slot: m.nslots, index: idx, id: id.String(), name: name.String()}
		m.nslots++
		m.calls = append(m.calls, c)
		if m.byIndex == nil {
			m.byIndex, m.byID = map[int64]*chatCall{}, map[string]*chatCall{}
		}
		m.byIndex[idx] = c
		if c.id != "" {
			m.byID[c.id] = c
		}
		out.Block(m.key, c.slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(c.name), ToolID: sdk.Opt(c.id)})
	} else {
		said := false
		if c.id == "" && !id.IsEmpty() {
			c.id, c.late, said = id.String(), true, true
			m.byID[c.id] = c
		}
		if c.name == "" && name.Kind() == abi.KindString && !sdk.Text(name).IsEmpty() {
			c.name, c.late, said = name.String(), true, true
		}
		if a := fn.Get("arguments"); !said && (a.Kind() != abi.KindString || sdk.Text(a).IsEmpty()) && a.Kind() != abi.KindObject {
			// A fragment that adds nothing to its call (Qwen repeats
			// the call with "" arguments and id): declared, so the
			// chunk is accounted for (spec §6.8).
			out.Ignored(sdk.S("tool_call_fragment"))
		}
	}
	if a := fn.Get("arguments"); a.Kind() == abi.KindString && !sdk.Text(a).IsEmpty() {
		out.Append(m.key, c.slot, sdk.BlockToolUse, sdk.Text(a))
		c.args = sdk.AppendText(c.args, a)
	} else if a.Kind() == abi.KindObject {
		// Some compatible servers send the arguments as an object.
		out.Append(m.key, c.slot, sdk.BlockToolUse, sdk.Text(a))
		c.args = append(c.args, a.Raw()...)
	}
}

// finishChoice ends a choice: its tool calls are complete and its
// finish_reason decides the status (see the package documentation).
func (n *normalizer) finishChoice(r *chatResp, m *chatMsg, out *sdk.Out) {
	if m.finished {
		return
	}
	m.finished = true
	for i, c := range m.calls {
		if c.id == "" {
			// No id from the server: one that is stable per response
			// and choice.
			c.id, c.late = r.id+"#"+itoa(m.index)+"."+itoa(int64(i)), true
		}
		input, root := jsonInput(c.args)
		if c.late {
			out.Block(m.key, c.slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(c.name), ToolID: sdk.S(c.id), ToolInput: input})
		}
		n.toolCall(c.id, c.name, input, root, r.time, true, out)
	}
	if m.finish == "" {
		return
	}
	refused := ""
	if m.refused {
		refused = sdk.Clip(string(m.refBuf), 200)
	}
	n.finishReason(r, m.finish, refused, out)
}

// finishReason reports the status a finish_reason implies; refused is
// the choice's refusal text ("" when it has none).
func (n *normalizer) finishReason(r *chatResp, reason, refused string, out *sdk.Out) {
	switch {
	case reason == "content_filter":
		r.errored = true
		n.status(sdk.StatusError, sdk.S("content_filter: the output was withheld by the provider's content filter"), out)
		return
	case refused != "":
		// The model declined to answer (message.refusal): an error, as
		// an Anthropic stop_reason refusal is, and, like a content
		// filter's, not overridden by another choice.
		r.errored = true
		n.status(sdk.StatusError, sdk.S(refusalError(refused)), out)
		return
	case reason == "length", reason == "max_tokens":
		// The output was cut at the token limit: the same situation as
		// a Responses "incomplete" (spec §6.7).
		if !r.errored {
			n.status(sdk.StatusIncomplete, sdk.S("output cut at the token limit (finish_reason "+reason+")"), out)
		}
		return
	}
	if !r.errored {
		n.status(sdk.StatusOK, sdk.Str{}, out)
	}
}

// toolCall reports a tool.call for a call id not reported yet or, when
// reuse is set (Chat Completions, whose servers may name every call
// call_1), whose latest call is settled (see settled). args is the call's arguments as
// argsRoot reads them (an object, or a string holding one): parsed only
// for an execute call reported here, since most calls are seen again in
// later snapshots and only an execute call's command is read from them.
func (n *normalizer) toolCall(id, name string, input sdk.Str, args abi.Value, ts sdk.Str, reuse bool, out *sdk.Out) {
	if id == "" || n.calls[id] > 0 && !(reuse && n.settled(id)) {
		return
	}
	n.calls[id]++
	kind := toolKind(name)
	tc := sdk.ToolCall{CallID: sdk.S(id), Name: sdk.Opt(name), Input: input, Kind: kind, Time: ts}
	if kind == "execute" {
		tc.Command = commandOf(argsRoot(args))
	}
	out.ToolCall(tc)
}

// settled says the latest call reported with id has its result: a call
// naming id again is then a new call that reuses the id (providers make
// ids unique per response, not per session: a local server names every
// call call_1), as the host reads it (internal/normalize, reused). A
// repeat before the result (another choice, a snapshot read again) is
// the same call.
func (n *normalizer) settled(id string) bool {
	return n.results[id] >= n.calls[id]
}

// closeChat writes the messages of a streamed response.
func (n *normalizer) closeChat(r *chatResp, out *sdk.Out) {
	if r.closed {
		return
	}
	r.closed = true
	if n.chat == r {
		n.chat = nil
	}
	r.usage.Tier = r.tier
	for _, m := range r.msgs {
		n.finishChoice(r, m, out)
		e := sdk.MessageEnd{StopReason: sdk.Opt(m.finish)}
		if len(r.msgs) == 1 {
			// Usage is per response: it belongs to a message only when
			// the response has one.
			e.Usage = r.usage
		}
		out.Close(m.key, e)
		switch {
		case m.index != 0:
		case len(m.textBuf) > 0:
			out.Final(sdk.S(string(m.textBuf)), true)
		case len(m.refBuf) > 0:
			out.Final(sdk.S(string(m.refBuf)), true)
		}
	}
	out.Usage(r.usage, sdk.ModeAdd)
	r.cost.report(out)
}

// completion handles a whole chat.completion body.
func (n *normalizer) completion(v abi.Value, out *sdk.Out) {
	n.setFormat(FormatChat, out)
	if n.chat != nil {
		n.closeChat(n.chat, out)
	}
	r := &chatResp{id: v.Get("id").String(), model: sdk.StringOf(v.Get("model")), time: unixTime(v.Get("created")), closed: true}
	n.model(v.Get("model"), out)
	u := usageOf(v.Get("usage"))
	u.Tier = sdk.TierOf(v.Get("service_tier"))
	choices := v.Get("choices")
	nchoices := choices.Len()
	pos := int64(0)
	it := choices.Iter()
	for ; it.Next(); pos++ {
		c := it.Value()
		idx, ok := c.Get("index").Int()
		if !ok {
			idx = pos
		}
		key := n.newKey("c")
		out.Open(key, sdk.Message{ID: sdk.Opt(r.id), Model: r.model, Time: r.time})
		msg := c.Get("message")
		slot := 0
		th := msg.Get("reasoning_content")
		if th.Kind() != abi.KindString {
			th = msg.Get("reasoning")
		}
		if th.Kind() == abi.KindString && !sdk.Text(th).IsEmpty() {
			out.Block(key, slot, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(th)})
			slot++
		}
		content := msg.Get("content")
		switch content.Kind() {
		case abi.KindString:
			if !sdk.Text(content).IsEmpty() {
				out.Block(key, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(content)})
				slot++
				if idx == 0 {
					out.Final(sdk.Text(content), true)
				}
			}
		case abi.KindArray:
			// Content parts, from some compatible servers: text, and
			// Mistral's thinking parts.
			pt := content.Iter()
			for pt.Next() {
				p := pt.Value()
				if th := thinkingOf(p); th.IsSet() {
					out.Block(key, slot, sdk.Block{Type: sdk.BlockThinking, Thinking: th})
					slot++
				} else if t := p.Get("text"); t.Kind() == abi.KindString {
					out.Block(key, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(t)})
					slot++
					if idx == 0 {
						out.Final(sdk.Text(t), true)
					}
				}
			}
		}
		if tr := msg.Path("audio", "transcript"); tr.Kind() == abi.KindString && !sdk.Text(tr).IsEmpty() {
			// A spoken answer: its content is null, its transcript what
			// the model said (see delta).
			out.Block(key, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(tr)})
			slot++
			if idx == 0 && sdk.Text(content).IsEmpty() {
				out.Final(sdk.Text(tr), true)
			}
		}
		refused := ""
		if rf := msg.Get("refusal"); rf.Kind() == abi.KindString && !sdk.Text(rf).IsEmpty() {
			out.Block(key, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(rf)})
			slot++
			refused = sdk.Clip(sdk.Text(rf).String(), 200)
			if idx == 0 && sdk.Text(content).IsEmpty() {
				out.Final(sdk.Text(rf), true)
			}
		}
		var calls []abi.Value
		tc := msg.Get("tool_calls").Iter()
		for tc.Next() {
			calls = append(calls, tc.Value())
		}
		if fc := msg.Get("function_call"); fc.Kind() == abi.KindObject {
			calls = append(calls, msg) // its function_call is read below
		}
		if ex := msg.Get("executed_tools"); ex.Kind() == abi.KindArray {
			em := &chatMsg{key: key, index: idx, nslots: slot}
			n.executedTools(r, em, ex, out)
			slot = em.nslots
		}
		for i, tc := range calls {
			fn := tc.Get("function")
			if !fn.Exists() {
				fn = tc.Get("function_call")
			}
			id := tc.Get("id").String()
			if id == "" {
				id = r.id + "#" + itoa(idx) + "." + itoa(int64(i))
			}
			name := fn.Get("name").String()
			args := fn.Get("arguments")
			input := sdk.JSON(args)
			if sdk.Text(args).IsEmpty() {
				input, _ = jsonInput(nil)
			}
			out.Block(key, slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Opt(name), ToolID: sdk.S(id), ToolInput: input})
			slot++
			n.toolCall(id, name, input, args, r.time, true, out)
		}
		e := sdk.MessageEnd{StopReason: sdk.StringOf(c.Get("finish_reason"))}
		if nchoices == 1 {
			e.Usage = u
		}
		out.Close(key, e)
		if fr := c.Get("finish_reason"); fr.Kind() == abi.KindString && !sdk.Text(fr).IsEmpty() {
			n.finishReason(r, sdk.View(fr), refused, out) // compared, copied by a concatenation
		} else if refused != "" {
			n.finishReason(r, "stop", refused, out)
		} else if !r.errored {
			// A body is a whole response even without a finish_reason.
			n.status(sdk.StatusOK, sdk.Str{}, out)
		}
	}
	if nchoices == 0 && !v.Get("error").Exists() {
		n.status(sdk.StatusOK, sdk.Str{}, out)
	}
	if mod := v.Get("moderation"); mod.Kind() == abi.KindObject {
		moderation(mod, out)
	}
	out.Usage(u, sdk.ModeAdd)
	costOf(v.Get("usage")).report(out)
}
