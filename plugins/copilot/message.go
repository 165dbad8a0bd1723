package copilot

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// system writes a system.message, the system prompt, as a message.user
// of its own whose one block has origin system_prompt; and a
// system.notification (a background agent or shell finished, an
// instruction file was found), text the CLI puts in front of the model,
// as one whose block is injected context, never the user's prompt. One
// with no content is declared ignored: the model saw nothing.
func (n *normalizer) system(v, t, d abi.Value, ts sdk.Str, out *sdk.Out) {
	c := d.Get("content")
	if c.Kind() != abi.KindString || c.Is("") {
		out.Ignored(sdk.S(sdk.TypeName(t)))
		return
	}
	origin := sdk.OriginSystemPrompt
	if t.Is("system.notification") {
		origin = sdk.OriginInjected
	}
	n.contextMessage(v, c, origin, ts, out)
}

// contextMessage writes text the CLI gave the model (a system prompt, a
// notification, a compaction's summary) as a message.user of one block
// with its origin, in the current agent's scope.
func (n *normalizer) contextMessage(v, text abi.Value, origin string, ts sdk.Str, out *sdk.Out) {
	key := sdk.S(n.newKey("s"))
	out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(v.Get("id")), Scope: scopeOf(n.cur), Time: ts})
	out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text), Origin: origin})
	out.Close(key, sdk.MessageEnd{})
}

// compaction writes a finished compaction's summary (summaryContent),
// which replaces the conversation the model sees from then on, as
// injected context of a message.user (never the user's prompt); a
// failed one is a warning.
func (n *normalizer) compaction(v, d abi.Value, ts sdk.Str, out *sdk.Out) {
	c := d.Get("summaryContent")
	switch {
	case d.Get("success").Kind() == abi.KindFalse:
		out.Warn("copilot: compaction failed: " + strOr(d.Get("error"), "no reason given"))
	case c.Kind() != abi.KindString || c.Is(""):
		out.Ignored(sdk.S("session.compaction_complete"))
	default:
		n.contextMessage(v, c, sdk.OriginInjected, ts, out)
	}
}

// user writes the prompt. transformedContent is the prompt as the model
// received it: wrapped in context the CLI injected (<current_datetime>,
// <system_reminder>, ...). What surrounds the prompt there becomes
// injected_context blocks before and after the prompt block, so the prompt
// is not repeated and the injected text is not taken for the user's.
//
// A message the CLI wrote in the user's role (its source names a skill,
// another agent, a schedule or the system; or autopilot's continuation
// loop sent it) is injected context: the user did not type it. A
// sub-agent's own first message is its prompt whatever its source.
func (n *normalizer) user(v, d abi.Value, ts sdk.Str, out *sdk.Out) {
	n.skillShown(d)
	c := d.Get("content")
	tc := d.Get("transformedContent")
	origin := sdk.OriginPrompt
	if notTyped(d) {
		origin = sdk.OriginInjected
	}
	if a := n.cur; a != nil && !a.prompted {
		// A sub-agent's own prompt: the task call's prompt is not
		// written again.
		a.prompted, a.prompt = true, ""
		origin = sdk.OriginPrompt
	}
	key := sdk.S(n.newKey("u"))
	out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(v.Get("id")), Scope: scopeOf(n.cur), Time: ts})
	prompt := sdk.Block{Type: sdk.BlockText, Text: sdk.StringOf(c), Origin: origin}
	if tc.Kind() != abi.KindString || tc.Is("") {
		if prompt.Text.IsSet() {
			out.Block(key, -1, prompt)
		}
		out.Close(key, sdk.MessageEnd{})
		return
	}
	whole := tc.String()
	p := c.String()
	i := -1
	if p != "" {
		i = strings.Index(whole, p)
	}
	switch {
	case i < 0:
		// The prompt is not inside: keep both as they are (an empty
		// content, as autopilot's continuation has, is no block).
		if p != "" {
			out.Block(key, -1, prompt)
		}
		if whole != p {
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(tc), Origin: sdk.OriginInjected})
		}
	default:
		if pre := whole[:i]; strings.TrimSpace(pre) != "" {
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.S(pre), Origin: sdk.OriginInjected})
		}
		out.Block(key, -1, prompt)
		if post := whole[i+len(p):]; strings.TrimSpace(post) != "" {
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.S(post), Origin: sdk.OriginInjected})
		}
	}
	out.Close(key, sdk.MessageEnd{})
}

// notTyped says whether a user.message is one the CLI wrote, not the
// user: autopilot's continuation (isAutopilotContinuation), or one whose
// source names who did (the schema's examples: "skill-pdf", a skill's
// hidden context, "<skill-context ...>"; "agent-<id>", another agent's
// prompt; the CLI's scheduled prompts, system, retrieval and instruction
// context). Any other source, or none, is the user's.
func notTyped(d abi.Value) bool {
	if d.Get("isAutopilotContinuation").Kind() == abi.KindTrue {
		return true
	}
	src := d.Get("source")
	if src.Kind() != abi.KindString {
		return false
	}
	s := sdk.View(src)
	for _, p := range [...]string{"skill-", "agent-", "schedule-", "system", "embedding-", "instruction-"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// msgFor returns the open assistant message with this messageId, opening
// it (with reasoning that arrived before it) when it is new.
func (n *normalizer) msgFor(id abi.Value, ts sdk.Str, out *sdk.Out) *message {
	sid := ""
	if id.Kind() == abi.KindString {
		sid = id.String()
	}
	if m := n.msgs[sid]; m != nil {
		return m
	}
	if sid != "" && n.done[sid] {
		return nil
	}
	n.prompt(n.cur, ts, out)
	if len(n.skills) > 0 {
		n.skillFlush(n.cur, out)
	}
	if n.hasThinking && n.thinkingScope != n.cur {
		n.flushThinking(out)
	}
	m := &message{key: n.newKey("a"), scope: n.cur}
	n.msgs[sid] = m
	n.open = append(n.open, m)
	out.Open(sdk.S(m.key), sdk.Message{ID: sdk.StringOf(id), Scope: scopeOf(m.scope), Time: ts})
	if n.hasThinking {
		out.Block(sdk.S(m.key), slotThinking, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(string(n.thinking))})
		m.hasThinking = true
		n.thinking, n.hasThinking = n.thinking[:0], false
	}
	return m
}

// assistantMessage handles the complete message: it replaces what deltas
// built (so the text is written once), adds reasoning and the tool
// requests, reports the calls and closes the message.
func (n *normalizer) assistantMessage(d abi.Value, ts sdk.Str, out *sdk.Out) {
	m := n.msgFor(d.Get("messageId"), ts, out)
	if m == nil {
		// The same message again (a replayed or resumed log): it was
		// written; only calls not seen yet are reported.
		said := false
		it := d.Get("toolRequests").Iter()
		for it.Next() {
			tr := it.Value()
			said = n.call(tr.Get("toolCallId"), tr.Get("name"), tr.Get("arguments"), ts, false, out) || said
		}
		if !said {
			out.Ignored(sdk.S("assistant.message"))
		}
		return
	}
	key := sdk.S(m.key)
	model := sdk.StringOf(d.Get("model"))
	out.Open(key, sdk.Message{Model: model})
	if !n.modelSent && m.scope == nil {
		n.model(d.Get("model"), false, out)
	}
	rt := d.Get("reasoningText")
	switch {
	case rt.Kind() == abi.KindString && !rt.Is(""):
		out.Block(key, slotThinking, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(rt)})
	case !m.hasThinking && (nonEmpty(d.Get("encryptedContent")) || nonEmpty(d.Get("reasoningOpaque"))):
		// Reasoning happened but only its encrypted form was returned.
		out.Block(key, slotThinking, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(""), Redacted: true})
	}
	c := d.Get("content")
	if c.Kind() == abi.KindString && !c.Is("") {
		out.Block(key, slotText, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c)})
		if m.scope == nil {
			// A sub-agent's answer is its parent's tool result, not the
			// step's answer.
			out.Final(sdk.Text(c), true)
		}
	}
	slot := slotTools
	it := d.Get("toolRequests").Iter()
	for it.Next() {
		tr := it.Value()
		id, name, args := tr.Get("toolCallId"), tr.Get("name"), tr.Get("arguments")
		out.Block(key, slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(name), ToolID: sdk.StringOf(id), ToolInput: input(args)})
		slot++
		n.call(id, name, args, ts, true, out)
	}
	var e sdk.MessageEnd
	e.Usage.Output = sdk.IntOf(d.Get("outputTokens"))
	n.usage.messageOutput(e.Usage.Output, m.scope != nil)
	n.closeMsg(m, e, out)
	if id := d.Get("messageId"); id.Kind() == abi.KindString && !id.Is("") {
		n.done[id.String()] = true
	}
}

// reasoning handles assistant.reasoning(_delta): it belongs to the message
// being streamed, else to the next message. It reports whether it
// reported anything now: reasoning held for the next message is reported
// with it (its line is then declared ignored).
func (n *normalizer) reasoning(c abi.Value, delta bool, out *sdk.Out) bool {
	if c.Kind() != abi.KindString {
		return false
	}
	if m := n.lastOpen(n.cur); m != nil {
		key := sdk.S(m.key)
		if delta {
			out.Append(key, slotThinking, sdk.BlockThinking, sdk.Text(c))
		} else {
			out.Block(key, slotThinking, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(c)})
		}
		m.hasThinking = true
		return true
	}
	if n.hasThinking && n.thinkingScope != n.cur {
		n.flushThinking(out)
	}
	if !delta {
		n.thinking = n.thinking[:0]
	}
	n.thinking = sdk.AppendText(n.thinking, c)
	n.hasThinking, n.thinkingScope = true, n.cur
	return false
}

// lastOpen is the newest open message of agent a (nil: the main agent).
func (n *normalizer) lastOpen(a *agent) *message {
	for i := len(n.open) - 1; i >= 0; i-- {
		if n.open[i].scope == a {
			return n.open[i]
		}
	}
	return nil
}

// flushThinking writes reasoning that no message followed (the stream
// ended, or another agent wrote next) as a message of its own.
func (n *normalizer) flushThinking(out *sdk.Out) {
	if !n.hasThinking {
		return
	}
	key := sdk.S(n.newKey("r"))
	out.Open(key, sdk.Message{Scope: scopeOf(n.thinkingScope)})
	out.Block(key, slotThinking, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(string(n.thinking))})
	out.Close(key, sdk.MessageEnd{})
	n.thinking, n.hasThinking, n.thinkingScope = n.thinking[:0], false, nil
}

// closeMsg closes an open message.
func (n *normalizer) closeMsg(m *message, e sdk.MessageEnd, out *sdk.Out) {
	out.Close(sdk.S(m.key), e)
	for i, o := range n.open {
		if o == m {
			n.open = append(n.open[:i], n.open[i+1:]...)
			break
		}
	}
	for k, o := range n.msgs {
		if o == m {
			delete(n.msgs, k)
		}
	}
}

func nonEmpty(v abi.Value) bool { return v.Kind() == abi.KindString && !v.Is("") }

// skillLoad is a skill.invoked whose content the model has not been
// shown in the transcript yet: the CLI injects it as a user.message of
// its own (source "skill-<name>", content "<skill-context name=...>")
// right after the event, which then carries it.
type skillLoad struct {
	scope         *agent
	name, content string
	id, ts        string
}

// skillInvoked handles skill.invoked: a skill loaded into the
// conversation (the user's slash command, the agent's skill tool, or a
// custom agent's preloaded skills). Its content reaches the model as the
// skill's user.message that follows, which is recorded as injected
// context; the event is held until then. Should no such message come
// before the agent's next response (or its end), the content is written
// as that message would have been (skillFlush).
func (n *normalizer) skillInvoked(v, d abi.Value, ts sdk.Str, out *sdk.Out) {
	out.Ignored(sdk.S("skill.invoked"))
	c := d.Get("content")
	if c.Kind() != abi.KindString || c.Is("") {
		return // nothing was given to the model
	}
	n.skills = append(n.skills, skillLoad{scope: n.cur, name: sdk.StringOf(d.Get("name")).String(), content: c.String(),
		id: sdk.StringOf(v.Get("id")).String(), ts: ts.String()})
}

// skillShown drops the held skill.invoked that user.message d (of the
// current agent) carries: a message the CLI wrote for a skill (source
// "skill-<name>", or content "<skill-context ...>"), the held load of
// that name, else the agent's oldest.
func (n *normalizer) skillShown(d abi.Value) {
	if len(n.skills) == 0 {
		return
	}
	src, c := sdk.StringOf(d.Get("source")).String(), sdk.StringOf(d.Get("content")).String()
	if !strings.HasPrefix(src, "skill-") && !strings.HasPrefix(c, "<skill-context") {
		return
	}
	first := -1
	for i, s := range n.skills {
		if s.scope != n.cur {
			continue
		}
		if src == "skill-"+s.name || strings.Contains(c, `name="`+s.name+`"`) {
			first = i
			break
		}
		if first < 0 {
			first = i
		}
	}
	if first >= 0 {
		n.skills = append(n.skills[:first], n.skills[first+1:]...)
	}
}

// skillFlush writes the skills agent a loaded that no user.message
// carried: each a message.user of one injected_context block, the
// skill's content, at the skill.invoked's time.
func (n *normalizer) skillFlush(a *agent, out *sdk.Out) {
	kept := n.skills[:0]
	for _, s := range n.skills {
		if s.scope != a {
			kept = append(kept, s)
			continue
		}
		key := sdk.S(n.newKey("k"))
		out.Open(key, sdk.Message{User: true, ID: sdk.Opt(s.id), Scope: scopeOf(a), Time: sdk.Opt(s.ts)})
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.S(s.content), Origin: sdk.OriginInjected})
		out.Close(key, sdk.MessageEnd{})
	}
	n.skills = kept
}
