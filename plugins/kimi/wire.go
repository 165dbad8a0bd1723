package kimi

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// wire handles one Kimi Code journal record, {type, ...payload, time}.
func (n *normalizer) wire(typ string, v abi.Value, ts stamp, out *sdk.Out) {
	switch typ {
	case "turn.prompt", "turn.steer":
		n.closeAll(out)
		n.reportStepErr(out)
		n.looped = false
		n.said(v.Get("input"))
		if !n.user(v.Get("input"), originOf(v.Get("origin")), "", ts, out) {
			out.Ignored(sdk.S(typ))
		}
	case "forked":
		n.forked(out)
	case "context.append_loop_event":
		n.loop(v.Get("event"), ts, out)
	case "context.append_message":
		n.appendMessage(v.Get("message"), ts, out)
	case "usage.record":
		n.usageRecord(v, out)
	case "llm.request":
		// The model the request was sent to (the provider's name for
		// it; usage.record names the alias the user chose).
		n.requested = true
		out.LatestModel(v.Get("model"), &n.model)
		out.Ignored(sdk.S(typ))
	case "turn.ended":
		n.stepOpen = false
		n.closeAll(out)
		n.turnEnded(v, out)
	case "turn.cancel":
		n.stepOpen = false
		n.closeAll(out)
		n.reportStepErr(out)
		out.Warn("kimi: the user cancelled the turn")
	case "context.apply_compaction":
		out.Warn("kimi: the context was compacted; the transcript keeps the turns it replaced")
	case "profile.bind":
		// The profile's environment disclosure states the working
		// directory the agent was told of; Kimi names no repository root.
		if cwd := sdk.StringOf(v.Path("environmentDisclosure", "cwd")); cwd.IsSet() {
			out.Meta(sdk.Meta{Cwd: cwd})
			return
		}
		out.Ignored(sdk.S(typ))
	case "config.update":
		// Kimi Code's own sessions state the working directory here too
		// (its session viewer's fixture, protocol 1.1).
		if cwd := sdk.StringOf(v.Get("cwd")); cwd.IsSet() {
			out.Meta(sdk.Meta{Cwd: cwd})
			return
		}
		out.Ignored(sdk.S(typ))
	case "llm.tools_snapshot", "tools.set_active_tools",
		"tools.reset_active_tools", "tools.register_user_tool", "tools.unregister_user_tool", "tools.update_store",
		"permission.set_mode", "permission.record_approval_result", "interaction.request", "interaction.resolved",
		"prompt.accepted", "plugin.session_start", "mcp.tools_discovered", "runtime.set_binding",
		"token_counting.measured", "token_counting.rebased", "token_counting.truncated", "token_counting.turn_recorded",
		"task.started", "task.terminated", "task.waitDelivered", "context.clear", "context.undo",
		"cron.add", "cron.cursor", "cron.delete", "goal.clear", "goal.create", "goal.update",
		"full_compaction.begin", "full_compaction.cancel", "full_compaction.complete", "interruptionReminder.recorded",
		"plan_mode.cancel", "plan_mode.enter", "plan_mode.exit", "plan.revision",
		"staleGuard.cleared", "staleGuard.recorded", "swarm_mode.enter", "swarm_mode.exit",
		"tower_mode.enter", "tower_mode.exit":
		// The agent's configuration and bookkeeping: the model answers,
		// calls and results are in the loop events; approvals show in
		// the results; a request's model in its usage record.
		out.Ignored(sdk.S(typ))
	default:
		out.Unmapped(sdk.S(typ))
	}
}

// loop handles a loop event: a model call's step (step.begin, its
// content parts and tool calls, step.end with its usage) and the tools'
// results.
func (n *normalizer) loop(ev abi.Value, ts stamp, out *sdk.Out) {
	t := ev.Get("type")
	switch {
	case t.Is("step.begin"):
		n.close("", out)
		n.reportStepErr(out) // a retry: the failed step's error is its own
		n.looped, n.stepOpen = true, true
		n.stepOf("", sdk.View(ev.Get("uuid")), ts, out)
	case t.Is("content.part"):
		n.looped = true
		if s := n.steps[""]; s != nil && s.ended {
			n.close("", out)
		}
		p := ev.Get("part")
		pt := p.Get("type")
		switch {
		case pt.Is("text") && p.Get("text").Kind() == abi.KindString:
			text := p.Get("text")
			n.content("", sdk.BlockText, sdk.Text(text), text, ts, out)
		case pt.Is("think") && p.Get("think").Kind() == abi.KindString:
			think := p.Get("think")
			n.content("", sdk.BlockThinking, sdk.Text(think), think, ts, out)
		default:
			// Media parts: no block holds them; the raw capture keeps them.
			out.Ignored(sdk.S("content.part/" + sdk.TypeName(pt)))
		}
	case t.Is("tool.call"):
		n.looped = true
		n.toolCall("", sdk.View(ev.Get("toolCallId")), sdk.View(ev.Get("name")), argsText(ev.Get("args")), ts, true, out)
	case t.Is("tool.result"):
		r := ev.Get("result")
		n.result("", sdk.View(ev.Get("toolCallId")), r.Get("output"), r.Get("isError").Truthy(), r.Get("note"), "", ts, out)
	case t.Is("step.end"):
		s := n.stepOf("", sdk.View(ev.Get("uuid")), ts, out)
		s.ended, n.stepOpen = true, false
		s.stop = str(ev.Get("finishReason"))
		if u, ok := usageOf(ev.Get("usage")); ok {
			s.usage, s.hasUsage = u, true
		}
		// The message is open under the step's uuid already, so the
		// provider's messageId fills no field (the SDK updates empty
		// header fields only); the record accounts for the line.
		out.Open(sdk.S(s.key), sdk.Message{ID: sdk.StringOf(ev.Get("messageId"))})
		out.LatestModel(ev.Get("model"), &n.model)
		// An error is reported once the turn's end says whether it
		// states it (reportStepErr).
		n.stepErr = s.stop == "error"
		// Closed at the usage.record that follows (the request's usage
		// and model), or at the next record.
	default:
		out.Unmapped(sdk.S("context.append_loop_event/" + sdk.TypeName(t)))
	}
}

// usageRecord handles a usage.record: one model request's usage and
// model (the model alias the user chose). A loop request's usage is its
// step's (step.end states the same figures): it is counted once, on
// that step's message; a request outside the loop (a compaction's)
// counts for the step alone.
func (n *normalizer) usageRecord(v abi.Value, out *sdk.Out) {
	if !n.requested {
		out.LatestModel(v.Get("model"), &n.model)
	}
	u, ok := usageOf(v.Get("usage"))
	if s := n.steps[""]; s != nil && s.ended {
		if ok {
			s.usage, s.hasUsage = u, true
		}
		out.Open(sdk.S(s.key), sdk.Message{Model: sdk.Opt(n.model)})
		n.close("", out)
		return
	}
	if ok {
		n.addUsage(u, out)
	} else {
		out.Ignored(sdk.S("usage.record"))
	}
}

// turnEnded handles turn.ended (reason completed, cancelled, failed or
// blocked; agent-core-v2 loopService.ts): a failed turn is an error the
// provider reported (its message and code), which is the error of the
// step that ended in error just before, if one did (listed once); a
// blocked one (a UserPromptSubmit hook refused the prompt) an error too,
// a status error below the terminal level; a cancelled one a warning and
// a status incomplete below the terminal level. Both statuses are on the
// turn's end, after its answers, so the session rule settles a session
// whose last turn ended so as error or incomplete, and a later answer
// makes it ok again.
func (n *normalizer) turnEnded(v abi.Value, out *sdk.Out) {
	e := v.Get("error")
	msg := sdk.StringOf(e.Get("message"))
	switch {
	case v.Get("reason").Is("failed"):
		n.stepErr = false
		if msg.IsEmpty() {
			msg = sdk.S("the turn failed")
		}
		out.Error(sdk.ProviderError{Message: msg, Code: sdk.Text(e.Get("code"))})
		return
	case v.Get("reason").Is("blocked"):
		n.reportStepErr(out)
		why := "the turn was blocked: a hook refused the prompt (turn.ended reason blocked)"
		if !msg.IsEmpty() {
			why += ": " + sdk.Clip(msg.String(), 500)
		}
		out.Status(sdk.StatusError, sdk.S(why), sdk.LevelError)
		return
	case v.Get("reason").Is("cancelled"):
		n.reportStepErr(out)
		out.Warn("kimi: the turn ended cancelled")
		out.Status(sdk.StatusIncomplete, sdk.S("the turn was cancelled before it completed (turn.ended reason cancelled)"), sdk.LevelError)
		return
	}
	n.reportStepErr(out)
	out.Ignored(sdk.S("turn.ended"))
}

// reportStepErr reports the error of the step that ended in error
// (step.end finishReason error) when no failed turn.ended stated it
// first: at the next step (a retry), prompt, turn end or the end.
func (n *normalizer) reportStepErr(out *sdk.Out) {
	if n.stepErr {
		n.stepErr = false
		out.Error(sdk.ProviderError{Message: sdk.S("the model call ended in error (finishReason error)")})
	}
}

// appendMessage handles a message appended to the model's context. The
// user's prompt is its turn.prompt and an answer its loop events, so
// those copies are not reported again; context the agent injected in the
// user's role (a skill, a hook's result, a compaction summary) is
// injected context; an assistant message or a tool result no loop event
// stated is reported from the message.
func (n *normalizer) appendMessage(m abi.Value, ts stamp, out *sdk.Out) {
	role := m.Get("role")
	switch {
	case role.Is("user"):
		origin := originOf(m.Get("origin"))
		if n.copied(m.Get("content")) {
			out.Ignored(sdk.S("context.append_message/user"))
			return
		}
		n.closeAll(out)
		if !n.user(m.Get("content"), origin, "", ts, out) {
			out.Ignored(sdk.S("context.append_message/user"))
		}
	case role.Is("assistant"):
		if n.looped {
			out.Ignored(sdk.S("context.append_message/assistant"))
			return
		}
		n.close("", out)
		it := m.Get("content").Iter()
		for it.Next() {
			p := it.Value()
			switch {
			case p.Get("type").Is("text"):
				n.content("", sdk.BlockText, sdk.Text(p.Get("text")), p.Get("text"), ts, out)
			case p.Get("type").Is("think"):
				n.content("", sdk.BlockThinking, sdk.Text(p.Get("think")), p.Get("think"), ts, out)
			}
		}
		it = m.Get("toolCalls").Iter()
		for it.Next() {
			c := it.Value()
			n.toolCall("", sdk.View(c.Get("id")), sdk.View(c.Get("name")), argsText(c.Get("arguments")), ts, true, out)
		}
		if n.steps[""] == nil {
			out.Ignored(sdk.S("context.append_message/assistant"))
			return
		}
		n.close("", out)
	case role.Is("tool"):
		// The copy of a result a loop event reported (copies may come
		// late, even after a later call that reuses the id), or of one
		// the id's latest call has: else a result no loop event stated.
		id := sdk.View(m.Get("toolCallId"))
		if id != "" {
			t := n.tally("", id)
			if t.copies++; t.copies <= t.results || t.settled() {
				out.Ignored(sdk.S("context.append_message/tool"))
				return
			}
		}
		n.result("", id, m.Get("content"), m.Get("isError").Truthy(), m.Get("note"), "", ts, out)
	default:
		out.Ignored(sdk.S("context.append_message/" + sdk.TypeName(role)))
	}
}

// originOf is the origin of a prompt: the user's own (origin "user",
// {kind: "user"} or none) is the prompt, anything else (a skill, a
// plugin command, a hook's result, a task's notification, a cron job)
// context the agent sent in the user's role.
func originOf(o abi.Value) string {
	if o.Kind() == abi.KindObject {
		o = o.Get("kind")
	}
	if !o.Exists() || o.Kind() == abi.KindNull || o.Is("user") {
		return sdk.OriginPrompt
	}
	return sdk.OriginInjected
}

// maxSaid bounds the prompts kept to recognise their copies.
const maxSaid = 16

// said keeps the text of a prompt or steer: the agent appends it to the
// model's context later (a steer once the turn it came in ends), where it
// is not the user's prompt again.
func (n *normalizer) said(input abi.Value) {
	if t := joinText(input); t != "" {
		if len(n.prompts) == maxSaid {
			n.prompts = n.prompts[1:]
		}
		n.prompts = append(n.prompts, t)
	}
}

// copied says whether content is the copy of a prompt said before (and
// forgets that prompt: a prompt said twice is copied twice).
func (n *normalizer) copied(content abi.Value) bool {
	t := joinText(content)
	for i, p := range n.prompts {
		if p == t && t != "" {
			n.prompts = append(n.prompts[:i], n.prompts[i+1:]...)
			return true
		}
	}
	return false
}

// joinText is the text of a string or of a list of parts, joined by
// newlines.
func joinText(v abi.Value) string {
	if v.Kind() == abi.KindString {
		return v.String()
	}
	var b []byte
	it := v.Iter()
	for it.Next() {
		if t := it.Value().Get("text"); t.Kind() == abi.KindString {
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = sdk.AppendText(b, t)
		}
	}
	return string(b)
}
