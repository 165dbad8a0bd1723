package amp

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// message handles one message of the thread's messages array. It
// reports whether it said anything.
func (n *normalizer) message(m abi.Value, idx int, thread abi.Value, out *sdk.Out) bool {
	if m.Kind() != abi.KindObject {
		out.Warn("amp message " + strconv.Itoa(idx) + " is not an object: not read")
		return false
	}
	id, hasID := m.Get("messageId").Int()
	sum := sdk.Hash64(m.Raw())
	var h uint64
	var seen bool
	if hasID {
		h, seen = n.byID[id]
	} else {
		h, seen = n.byIndex[idx]
	}
	if seen && h == sum {
		return false // the same message again
	}
	switch {
	case hasID && n.byID == nil:
		n.byID = map[int64]uint64{}
	case !hasID && n.byIndex == nil:
		n.byIndex = map[int]uint64{}
	}
	if hasID {
		n.byID[id] = sum
	} else {
		n.byIndex[idx] = sum
	}
	key := messageKey(id, hasID, idx)
	role := m.Get("role")
	if seen && n.streaming[key.String()] && role.Is("assistant") {
		// Reported while Amp streamed it: this version (finished, or
		// further along) is reported whole, as a new version of the
		// message (the same id), its usage once it is final.
		delete(n.streaming, key.String())
		n.assistant(m, key, thread, out)
		return true
	}
	if seen {
		// A later version of a message already reported (the thread
		// rewritten, two versions in one stream): what it adds is the
		// results and calls it holds now; the message is not reported
		// twice.
		return n.again(m, key.String(), role, out)
	}
	switch {
	case role.Is("user"):
		return n.user(m, key, out)
	case role.Is("assistant"):
		n.assistant(m, key, thread, out)
		return true
	case role.Is("info"):
		return n.info(m, key, out)
	}
	out.Warn("amp message of role " + sdk.TypeName(role) + " not read")
	return false
}

// again reads a later version of a message already reported: the tool
// results of a user message (a run that ended since), the calls of an
// assistant message and its failure.
func (n *normalizer) again(m abi.Value, key string, role abi.Value, out *sdk.Out) bool {
	said := false
	ts := msTime(m.Path("meta", "sentAt"))
	if role.Is("assistant") {
		if t := sdk.StringOf(m.Path("usage", "timestamp")); !t.IsEmpty() {
			ts = t
		}
	}
	it := m.Get("content").Iter()
	for it.Next() {
		b := it.Value()
		switch t := b.Get("type"); {
		case role.Is("user") && t.Is("tool_result"):
			said = n.result(b, key, ts, out) || said
		case role.Is("assistant") && t.Is("tool_use"):
			said = n.call(b, key, ts, out) || said
		}
	}
	return said
}

// user handles a user message: the prompt's text blocks and the tool
// results sent back to the model.
func (n *normalizer) user(m abi.Value, key sdk.Str, out *sdk.Out) bool {
	ts := msTime(m.Path("meta", "sentAt"))
	opened, said := false, false
	it := m.Get("content").Iter()
	for it.Next() {
		b := it.Value()
		switch t := b.Get("type"); {
		case t.Is("tool_result"):
			said = n.result(b, key.String(), ts, out) || said
		case t.Is("text"):
			txt := b.Get("text")
			if txt.Kind() != abi.KindString || txt.Is("") {
				continue
			}
			if !opened {
				out.Open(key, sdk.Message{User: true, ID: messageID(m), Time: ts})
				opened = true
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(txt), Origin: sdk.OriginPrompt})
		}
		// Images and other attachments: no text block holds them;
		// the raw capture keeps them.
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
	return opened || said
}

// info handles an info message: Amp's own notes in the thread. A
// summary block (the thread was compacted, or continues another thread)
// is context the model sees, a message.user of injected context; the
// others are the CLI's and not sent to the model.
func (n *normalizer) info(m abi.Value, key sdk.Str, out *sdk.Out) bool {
	opened := false
	it := m.Get("content").Iter()
	for it.Next() {
		b := it.Value()
		if !b.Get("type").Is("summary") {
			continue
		}
		s := b.Get("summary")
		var txt sdk.Str
		switch {
		case s.Get("type").Is("message"):
			txt = sdk.StringOf(s.Get("summary"))
		case s.Get("type").Is("thread"):
			if id := sdk.StringOf(s.Get("thread")); !id.IsEmpty() {
				txt = sdk.S("[summary of thread " + id.String() + "]")
			}
		}
		if txt.IsEmpty() {
			continue
		}
		if !opened {
			out.Open(key, sdk.Message{User: true, ID: messageID(m), Time: msTime(m.Path("meta", "sentAt"))})
			opened = true
		}
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: txt, Origin: sdk.OriginInjected})
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
	return opened
}

// assistant handles an assistant message: one model call, its blocks in
// order, its usage and its state.
func (n *normalizer) assistant(m abi.Value, key sdk.Str, thread abi.Value, out *sdk.Out) {
	u := m.Get("usage")
	model := u.Get("model")
	ts := sdk.StringOf(u.Get("timestamp"))
	if ts.IsEmpty() {
		ts = msTime(m.Path("meta", "sentAt"))
	}
	out.Open(key, sdk.Message{ID: messageID(m), Model: sdk.StringOf(model), Time: ts})
	out.LatestModel(model, &n.model)
	var final sdk.FinalText
	content := m.Get("content")
	assistantBlocks(key, content, &final, out)
	usage := usageOf(u)
	n.unsaid = slices.DeleteFunc(n.unsaid, func(u unsaid) bool { return u.key == key.String() })
	live := streaming(m)
	if live {
		// Still being written: its figures are not final, and its
		// finished version is reported again (message). So are its
		// calls' inputs: its calls wait for that version (or the end).
		if n.streaming == nil {
			n.streaming = map[string]bool{}
		}
		n.streaming[key.String()] = true
		usage = sdk.Usage{}
		n.unsaid = append(n.unsaid, unsaid{key: key.String(), raw: bytes.Clone(m.Raw()), ts: ts.String()})
	}
	out.Usage(usage, sdk.ModeAdd)
	it := content.Iter()
	for it.Next() {
		if b := it.Value(); b.Get("type").Is("tool_use") && !live {
			n.call(b, key.String(), ts, out)
		}
	}
	st := m.Get("state")
	out.Close(key, sdk.MessageEnd{Usage: usage, StopReason: sdk.StringOf(st.Get("stopReason"))})
	switch {
	case st.Get("type").Is("error"):
		msg := errText(st.Get("error"))
		if msg.IsEmpty() {
			msg = sdk.S("the model call failed")
		}
		out.Error(sdk.ProviderError{Message: msg})
	case st.Get("type").Is("cancelled"):
		out.Warn("amp assistant message cancelled by the user before it completed")
	}
	final.Report(out)
}

// assistantBlocks adds the blocks of an assistant message's content (a
// thread's message, a stream's line), in order: text (added to final),
// thinking, redacted_thinking and tool_use (its tool.call is the
// caller's).
func assistantBlocks(key sdk.Str, content abi.Value, final *sdk.FinalText, out *sdk.Out) {
	it := content.Iter()
	for it.Next() {
		b := it.Value()
		switch t := b.Get("type"); {
		case t.Is("text"):
			txt := b.Get("text")
			if txt.Kind() != abi.KindString || txt.Is("") {
				continue
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(txt)})
			final.Add(txt)
		case t.Is("thinking"):
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.StringOf(b.Get("thinking"))})
		case t.Is("redacted_thinking"):
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
		case t.Is("tool_use"):
			out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(b.Get("name")), ToolID: sdk.StringOf(b.Get("id")), ToolInput: input(b.Get("input"))})
		}
	}
}

// usageOf reads an assistant message's usage: Amp splits the prompt
// into inputTokens (uncached), cacheCreationInputTokens and
// cacheReadInputTokens, with totalInputTokens their sum. For OpenAI
// models (gpt-*) Amp states inputTokens 0 and files the uncached prompt
// under cacheCreationInputTokens: OpenAI writes no cache a request pays
// for, so that figure is uncached input (doc.go, "Usage").
func usageOf(u abi.Value) sdk.Usage {
	if u.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	in := sdk.IntOf(u.Get("inputTokens"))
	write := sdk.IntOf(u.Get("cacheCreationInputTokens"))
	read := sdk.IntOf(u.Get("cacheReadInputTokens"))
	if openAI(u.Get("model")) {
		in, write = in.Plus(write), sdk.Int{}
	}
	r := sdk.Split(in, read, write)
	if _, ok := r.Input.Value(); !ok {
		r.Input = sdk.IntOf(u.Get("totalInputTokens"))
	}
	r.Output = sdk.IntOf(u.Get("outputTokens"))
	return r
}

// openAI reports whether a model is one of OpenAI's (gpt-*, o1, o3,
// o4-mini...), whose prompt Amp files under cache creation.
func openAI(model abi.Value) bool {
	if model.Kind() != abi.KindString {
		return false
	}
	s := strings.ToLower(sdk.View(model))
	s = strings.TrimPrefix(s, "openai/")
	if strings.HasPrefix(s, "gpt-") {
		return true
	}
	return len(s) >= 2 && s[0] == 'o' && s[1] >= '1' && s[1] <= '9'
}

// input is a tool input as JSON ("{}" when absent).
func input(args abi.Value) sdk.Str {
	if !args.Exists() || args.Kind() == abi.KindNull {
		return sdk.S("{}")
	}
	return sdk.JSON(args)
}

// errText is an error's text: a string, or an object's message.
func errText(e abi.Value) sdk.Str {
	if e.Kind() == abi.KindString {
		return sdk.Text(e)
	}
	if m := sdk.StringOf(e.Get("message")); !m.IsEmpty() {
		return m
	}
	if e.Kind() == abi.KindObject {
		return sdk.JSON(e)
	}
	return sdk.Str{}
}
