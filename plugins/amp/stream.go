package amp

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtStream is the format name of `amp -x --stream-json`.
const fmtStream = "stream-json"

// streamLine handles one line of `amp --execute --stream-json`, the
// Claude Code compatible stream (doc.go, "Stream"): system init, user,
// assistant, result.
func (n *normalizer) streamLine(v, t abi.Value, no int, out *sdk.Out) {
	if !n.sawStream {
		n.sawStream = true
		m := sdk.Meta{Format: sdk.S(fmtStream)}
		if id := v.Get("session_id"); id.Kind() == abi.KindString && !id.Is("") {
			m.SessionID = sdk.Text(id)
		}
		if t.Is("system") {
			if dir := v.Get("cwd"); dir.Kind() == abi.KindString && !dir.Is("") {
				m.Cwd = sdk.Text(dir)
			}
		}
		out.Meta(m)
	}
	n.scope = sdk.Str{}
	if p := v.Get("parent_tool_use_id"); p.Kind() == abi.KindString && !p.Is("") {
		// A sub-agent's line: its Task call's scope, when open.
		if i := n.agent(sdk.View(p)); i >= 0 && n.agents[i].open {
			n.scope = sdk.S(n.agents[i].scope)
		} else {
			out.Warn("amp stream line of sub-agent call " + sdk.Clip(p.String(), 80) + ", which opened no scope: read as the thread's")
		}
	}
	defer func() { n.scope = sdk.Str{} }()
	switch sdk.Name(t) {
	case "system":
		// init: the session, the working directory, the tools (not read).
		out.Ignored(sdk.S("system"))
	case "user":
		n.streamUser(v.Get("message"), no, out)
	case "assistant":
		n.streamAssistant(v.Get("message"), no, out)
	case "result":
		n.streamResult(v, out)
	default:
		out.Unmapped(sdk.S(sdk.TypeName(t)))
	}
}

// streamKey is the key of the message of stream line no.
func streamKey(no int) sdk.Str { return sdk.S("s" + strconv.Itoa(no)) }

// streamUser handles a user line: the prompt's text blocks (a
// sub-agent's prompt is its Task call's, which its scope holds already)
// and the tool results sent back to the model ({tool_use_id, content,
// is_error}).
func (n *normalizer) streamUser(m abi.Value, no int, out *sdk.Out) {
	key := streamKey(no)
	c := m.Get("content")
	if c.Kind() == abi.KindString {
		if !c.Is("") && !n.scope.IsSet() {
			out.Open(key, sdk.Message{User: true})
			out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c), Origin: sdk.OriginPrompt})
			out.Close(key, sdk.MessageEnd{})
			return
		}
		out.Ignored(sdk.S("user"))
		return
	}
	opened, said := false, false
	it := c.Iter()
	for it.Next() {
		b := it.Value()
		switch t := b.Get("type"); {
		case t.Is("tool_result"):
			said = n.result(b, key.String(), sdk.Str{}, out) || said
		case t.Is("text") && !n.scope.IsSet():
			txt := b.Get("text")
			if txt.Kind() != abi.KindString || txt.Is("") {
				continue
			}
			if !opened {
				out.Open(key, sdk.Message{User: true})
				opened = true
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(txt), Origin: sdk.OriginPrompt})
		}
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
	if !opened && !said {
		out.Ignored(sdk.S("user"))
	}
}

// streamAssistant handles an assistant line: one model call, its blocks
// in order and its usage (Anthropic's fields: input_tokens uncached,
// cache_creation_input_tokens, cache_read_input_tokens, output_tokens).
// A sub-agent's usage is its own messages' (its child run's), not added
// to the step's.
func (n *normalizer) streamAssistant(m abi.Value, no int, out *sdk.Out) {
	key := streamKey(no)
	model := m.Get("model")
	out.Open(key, sdk.Message{ID: sdk.StringOf(m.Get("id")), Model: sdk.StringOf(model), Scope: n.scope})
	if !n.scope.IsSet() {
		out.LatestModel(model, &n.model)
	}
	var final sdk.FinalText
	content := m.Get("content")
	assistantBlocks(key, content, &final, out)
	usage := streamUsage(m.Get("usage"))
	if !n.scope.IsSet() {
		out.Usage(usage, sdk.ModeAdd)
	}
	it := content.Iter()
	for it.Next() {
		if b := it.Value(); b.Get("type").Is("tool_use") {
			n.call(b, key.String(), sdk.Str{}, out)
		}
	}
	out.Close(key, sdk.MessageEnd{Usage: usage, StopReason: sdk.StringOf(m.Get("stop_reason"))})
	if !n.scope.IsSet() {
		final.Report(out)
	}
}

// streamResult handles the result line, the stream's terminal event:
// subtype success and is_error false is ok; anything else an error whose
// text is its error, else its result text, else its subtype. Its usage,
// when it states one, is the run's total.
func (n *normalizer) streamResult(v abi.Value, out *sdk.Out) {
	if u := v.Get("usage"); u.Kind() == abi.KindObject {
		out.Usage(streamUsage(u), sdk.ModeSet)
	}
	if st := v.Get("subtype"); !v.Get("is_error").Truthy() && (st.Is("success") || !st.Exists()) {
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
		return
	}
	msg := errText(v.Get("error"))
	if msg.IsEmpty() {
		msg = sdk.StringOf(v.Get("result"))
	}
	if msg.IsEmpty() {
		msg = sdk.S("amp result " + sdk.TypeName(v.Get("subtype")))
	}
	out.Status(sdk.StatusError, msg, sdk.LevelTerminal)
}

// streamUsage reads a stream line's usage (Anthropic's names). Amp
// states input_tokens as the uncached prompt (a real output of amp
// 0.0.1775837683; the manual's tool usage example), as Anthropic does;
// the example of its announcement (ampcode.com/news/streaming-json)
// states it as the whole prompt, equal to cache_creation_input_tokens
// plus cache_read_input_tokens. A figure equal to that sum (and not 0)
// is read as the whole prompt, so that the cache is not counted twice.
func streamUsage(u abi.Value) sdk.Usage {
	if u.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	in := sdk.IntOf(u.Get("input_tokens"))
	read, write := sdk.IntOf(u.Get("cache_read_input_tokens")), sdk.IntOf(u.Get("cache_creation_input_tokens"))
	r := sdk.Split(in, read, write)
	if i, ok := in.Value(); ok && i > 0 {
		if c, okc := read.Plus(write).Value(); okc && c == i {
			r = sdk.Split(sdk.N(0), read, write)
		}
	}
	r.Output = sdk.IntOf(u.Get("output_tokens"))
	return r
}
