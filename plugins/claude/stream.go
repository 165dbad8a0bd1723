package claude

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// event handles one Anthropic streaming payload: wrapped in a Claude
// stream_event line (raw false) or on its own (raw true, the API's SSE).
func (n *normalizer) event(e abi.Value, scope string, raw bool, out *sdk.Out) {
	t := e.Get("type")
	switch sdk.Name(t) {
	case "message_start":
		msg := e.Get("message")
		id, known := n.idOf(n.get(msg, kId))
		m := n.msgFor(id, known, scope, out)
		n.setCurrent(scope, m)
		n.header(m, n.get(msg, kModel), abi.Value{}, out)
		m.mergeUsage(n.get(msg, kUsage))
	case "content_block_start":
		m := n.streaming(scope, out)
		cb := e.Get("content_block")
		typ := blockType(cb.Get("type"))
		idx, _ := e.Get("index").Int()
		if cb.Get("type").Is("compaction") {
			// Its summary streams as compaction_delta: written when
			// the block stops.
			if m.compact == nil {
				m.compact = map[int][]byte{}
			}
			m.compact[int(idx)] = sdk.AppendText(nil, cb.Get("content"))
			n.ignore("block/compaction", out)
			return
		}
		if cb.Get("type").Is("fallback") {
			// Arrives whole, with no deltas.
			n.fallback(m, cb, out)
			return
		}
		if cb.Get("type").Is("container_upload") {
			n.ignore("block/container_upload", out)
			return
		}
		if typ == "" {
			name := "block/" + sdk.TypeName(cb.Get("type"))
			out.Unmapped(sdk.S(name))
			if m.unknown == nil {
				m.unknown = map[int]string{}
			}
			m.unknown[int(idx)] = name
			return
		}
		delete(m.unknown, int(idx)) // a continued message reusing the index
		s := n.startSlot(m, int(idx), typ, cb)
		if s.snap {
			return // a snapshot wrote this block before its deltas
		}
		switch typ {
		case sdk.BlockText:
			txt := sdk.Text(cb.Get("text"))
			if !txt.IsSet() {
				txt = sdk.S("")
			}
			s.hasText = !txt.IsEmpty()
			out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockText, Text: txt})
		case sdk.BlockThinking:
			if cb.Get("type").Is("redacted_thinking") {
				m.setSnap(s)
				out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(""), Redacted: true})
				return
			}
			th := sdk.Text(cb.Get("thinking"))
			if !th.IsSet() {
				th = sdk.S("")
			}
			s.hasText = !th.IsEmpty()
			s.hasSig = !sdk.Text(cb.Get("signature")).IsEmpty()
			out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockThinking, Thinking: th})
		case sdk.BlockToolUse:
			s.toolName = cb.Get("name").String()
			// The input arrives as input_json_delta; a non-empty start
			// input (not sent by the API today) seeds it.
			if in := cb.Get("input"); in.Kind() == abi.KindObject && in.Len() > 0 {
				s.input = append(s.input, in.Raw()...)
			}
			out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Text(cb.Get("name")), ToolID: sdk.S(s.toolID)})
		case sdk.BlockToolResult:
			// Server tool results arrive whole in content_block_start.
			m.setSnap(s)
			n.writeBlock(m, s, cb, abi.Value{}, out)
		}
	case "content_block_delta":
		m := n.streaming(scope, out)
		idx, _ := e.Get("index").Int()
		d := e.Get("delta")
		dt := d.Get("type")
		s := m.idx[int(idx)]
		if b, ok := m.compact[int(idx)]; ok && s == nil {
			if dt.Is("compaction_delta") {
				m.compact[int(idx)] = sdk.AppendText(b, d.Get("content"))
				n.ignore("delta/compaction_delta", out)
				n.touch(m, out)
			} else {
				out.Unmapped(sdk.S("delta/" + sdk.TypeName(dt)))
			}
			return
		}
		if name, ok := m.unknown[int(idx)]; ok && s == nil {
			// A delta of a block this plugin does not know: whatever it
			// carries (even a text_delta) is not the model's text.
			out.Unmapped(sdk.S(name))
			return
		}
		if s == nil {
			// A delta with no content_block_start (a cut or glitched
			// stream): the delta says what the block is.
			typ := sdk.BlockText
			switch sdk.Name(dt) {
			case "thinking_delta", "signature_delta":
				typ = sdk.BlockThinking
			case "input_json_delta":
				typ = sdk.BlockToolUse
			}
			s = n.startSlot(m, int(idx), typ, abi.Value{})
		}
		if s.snap || s.stopped {
			// The block came whole, or stopped: nothing to add.
			n.ignore("delta/"+sdk.TypeName(dt), out)
			n.touch(m, out)
			return
		}
		switch sdk.Name(dt) {
		case "text_delta":
			v := sdk.Text(d.Get("text"))
			s.hasText = s.hasText || !v.IsEmpty()
			n.grow(m, s, sdk.BlockText, v, "delta/text_delta", out)
		case "thinking_delta":
			v := sdk.Text(d.Get("thinking"))
			s.hasText = s.hasText || !v.IsEmpty()
			n.grow(m, s, sdk.BlockThinking, v, "delta/thinking_delta", out)
		case "signature_delta":
			s.hasSig = s.hasSig || !sdk.Text(d.Get("signature")).IsEmpty()
			n.ignore("delta/signature_delta", out)
			n.touch(m, out)
		case "input_json_delta":
			// Joined here; the whole input is written when the block
			// stops.
			n.ignore("delta/input_json_delta", out)
			n.touch(m, out)
			pj := d.Get("partial_json")
			s.input = sdk.AppendText(s.input, pj)
		case "citations_delta":
			// Citations annotate text already delivered.
			n.ignore("delta/citations_delta", out)
			n.touch(m, out)
		default:
			out.Unmapped(sdk.S("delta/" + sdk.TypeName(dt)))
		}
	case "content_block_stop":
		// Known: it completes a block, whose records (a joined tool
		// input) may come now or at the message's close.
		n.ignore("stream_event/content_block_stop", out)
		m := n.current(scope)
		if m == nil {
			return
		}
		idx, _ := e.Get("index").Int()
		if b, ok := m.compact[int(idx)]; ok {
			n.compaction(m, sdk.S(string(b)), out)
			m.compactions++
			delete(m.compact, int(idx))
			return
		}
		if s := m.idx[int(idx)]; s != nil {
			n.finish(m, s, out)
		}
	case "message_delta":
		// Its stop reason and usage are written with the message.
		n.ignore("stream_event/message_delta", out)
		m := n.streaming(scope, out)
		n.touch(m, out)
		if sr := e.Path("delta", "stop_reason"); sr.Kind() == abi.KindString && !sr.Is(m.stop) {
			m.stop = sr.String()
		}
		n.refusal = refusalDetails(e.Path("delta", "stop_details"))
		m.mergeUsage(e.Get("usage"))
	case "message_stop":
		if m := n.current(scope); m != nil {
			if raw {
				n.sseStop = m.stop
			}
			n.close(m, out)
		} else {
			// No message to close (a cut or glitched stream).
			n.ignore("stream_event/message_stop", out)
		}
		if raw {
			n.sseStopped = true
		}
	case "ping":
		n.ignore("ping", out)
		if m := n.current(scope); m != nil {
			n.touch(m, out)
		}
	case "error":
		msg := sdk.Text(e.Path("error", "message"))
		if msg.IsEmpty() {
			msg = sdk.Text(e.Path("error", "type"))
		}
		n.errSeen = true
		level := sdk.LevelError
		if raw {
			// For the bare API an error event ends the stream.
			level = sdk.LevelTerminal
		}
		out.Status(sdk.StatusError, msg, level)
	default:
		out.Unmapped(sdk.S("stream_event/" + sdk.TypeName(t)))
	}
}

// touch tells the host that message m, being streamed, is still being
// written (reopening an open message only refreshes it), on an event
// that writes nothing to it: the host closes a message no record has
// named for 64 raw lines, and a tool's input streams as input_json_delta
// events (hundreds for a Write of a long file), joined here and written
// when its block stops; pings keep a long server tool call alive;
// citations come one event each. Without it, what the message wrote
// after those lines became a second message, its tool_use block a
// second time.
func (n *normalizer) touch(m *message, out *sdk.Out) {
	h := sdk.Message{}
	if m.scope != "" {
		h.Scope = sdk.S(m.scope)
	}
	out.Open(sdk.S(m.key), h)
}

// streaming returns the message being streamed in scope, creating an
// anonymous one when deltas arrive without message_start.
func (n *normalizer) streaming(scope string, out *sdk.Out) *message {
	if m := n.current(scope); m != nil {
		return m
	}
	m := n.msgFor("", nil, scope, out)
	n.setCurrent(scope, m)
	n.header(m, abi.Value{}, abi.Value{}, out)
	return m
}

// startSlot binds stream index idx of m to a slot: the slot a snapshot
// already wrote for this block when there is one (the snapshot came
// first), else a new one.
func (n *normalizer) startSlot(m *message, idx int, typ string, cb abi.Value) *slot {
	if s := m.idx[idx]; s != nil {
		return s
	}
	toolID := ""
	if typ == sdk.BlockToolUse || typ == sdk.BlockToolResult {
		toolID = toolIDOf(cb)
	}
	var s *slot
	if c := m.spare(typ); c != nil {
		if *c > 0 {
			// A snapshot wrote this block before its deltas.
			*c--
			s = &slot{n: -1, typ: typ, snap: true, streamed: true}
		}
	} else if m.snapOnly > 0 {
		for _, x := range m.slots {
			if x.typ == typ && x.snap && !x.streamed && (toolID == "" || x.toolID == toolID) {
				s = x
				break
			}
		}
	}
	if s == nil {
		s = m.newSlot(typ, toolID)
	}
	m.setStreamed(s)
	if m.idx == nil {
		m.idx = map[int]*slot{}
	}
	m.idx[idx] = s
	return s
}

// finish completes a streamed block once: a tool call gets its joined
// input, a thinking block with only a signature is marked redacted.
func (n *normalizer) finish(m *message, s *slot, out *sdk.Out) {
	if s.stopped {
		return
	}
	s.stopped = true
	if s.snap || !s.streamed || s.n < m.base {
		return
	}
	switch s.typ {
	case sdk.BlockThinking:
		if !s.hasText && s.hasSig {
			out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(""), Redacted: true})
		}
	case sdk.BlockToolUse:
		in := trimBlanks(s.input)
		var input sdk.Str
		var val abi.Value
		if len(in) == 0 {
			input = sdk.S("{}")
			if doc, ok := sdk.Parse([]byte("{}")); ok {
				val = doc.Root()
				input = sdk.JSON(val)
			}
		} else if doc, ok := sdk.Parse(in); ok {
			val = doc.Root()
			input = sdk.JSON(val)
		} else {
			// Cut mid-input: keep the text rather than lose it.
			input = sdk.S(string(in))
			out.Warn("claude: tool " + s.toolID + ": streamed input is not complete JSON")
		}
		out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(s.toolName), ToolID: sdk.S(s.toolID), ToolInput: input})
		if val.Exists() {
			n.toolCall(m, s, val, abi.Value{}, out)
		} else {
			c := n.noteCall(m.scope, s.toolID, s.toolName, abi.Value{})
			if n.fresh(c, m, s.toolName, abi.Value{}) {
				out.ToolCall(sdk.ToolCall{CallID: sdk.S(s.toolID), Name: sdk.S(s.toolName), Input: input, Kind: kindOf(s.toolName), Scope: sdk.Opt(m.scope)})
			}
		}
		s.input = nil
	}
}

// trimBlanks trims spaces, tabs and CRs, but not LFs (unlike
// sdk.TrimSpace): a streamed input that is only a newline, or is cut
// after one, is kept as it came.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// grow appends v to slot s of m; a delta without its text (a glitched
// line) adds nothing and is declared ignored as native, so that the line
// is still accounted for (spec §6.8).
func (n *normalizer) grow(m *message, s *slot, blockType string, v sdk.Str, native string, out *sdk.Out) {
	if !v.IsSet() {
		n.ignore(native, out)
		return
	}
	out.Append(sdk.S(m.key), m.rel(s), blockType, v)
}
