package codex

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// rootAgentPath is the agent path of a thread that is no sub-agent
// (Codex's multi-agent v2 names agents by path: "/root", "/root/worker").
const rootAgentPath = "/root"

// agentPath returns the agent path of the thread whose rollout this is:
// the one its session_meta states for a spawned sub-agent (agent_path,
// or source.subagent.thread_spawn.agent_path), else the root's.
func (n *normalizer) agentPath() string {
	if n.selfPath != "" {
		return n.selfPath
	}
	return rootAgentPath
}

// noteAgentPath keeps the agent path a session_meta states for a
// spawned sub-agent's thread.
func (n *normalizer) noteAgentPath(meta abi.Value) {
	p := meta.Get("agent_path")
	if p.Kind() != abi.KindString || p.Is("") {
		p = meta.Path("source", "subagent", "thread_spawn", "agent_path")
	}
	if p.Kind() == abi.KindString && !p.Is("") {
		n.selfPath = sdk.Text(p).String()
	}
}

// agentMessage reports a message between agents (multi-agent v2): the
// agent_message response item ({author, recipient, content}), the
// inter_agent_communication record that older builds wrote
// ({author, recipient, other_recipients, content, trigger_turn}) and the
// assistant-role message whose text is that record's JSON (the form
// InterAgentCommunication::to_response_input_item gave the model).
//
// A message another agent sent to this thread (the task its parent gave
// a sub-agent, a child's completion notice to its parent, a peer's
// message) is input of this thread's turn: a message.user, the prompt
// when it comes from the sub-agent's parent, injected context otherwise,
// and the model is expected to answer it (see rolloutComplete), so a
// sub-agent's turn that failed before the model answered its task is an
// error. A message this thread wrote itself (its author is this thread's
// path) is what it said, not input: an assistant message that answers
// nothing. item tells the response item from the record that repeats it
// (reported once, as rollout texts are).
func (n *normalizer) agentMessage(out *sdk.Out, author, recipient, content abi.Value, ts sdk.Str, item bool, native string) {
	own := n.agentPath()
	mine := author.Kind() == abi.KindString && sdk.View(author) == own
	l := lazyMsg{m: sdk.Message{Time: ts}}
	origin := sdk.OriginInjected
	if mine {
		l.m.Model = n.model
	} else {
		l.m.User = true
		if n.selfPath != "" && author.Kind() == abi.KindString && strings.HasPrefix(own, sdk.View(author)+"/") &&
			(!recipient.Exists() || sdk.View(recipient) == own) {
			origin = sdk.OriginPrompt
		}
	}
	text := func(v abi.Value) {
		if v.Kind() != abi.KindString || n.seen(nsAgent, v, item) {
			return
		}
		b := sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v)}
		if !mine {
			b.Origin = origin
		}
		l.block(n, out, b)
	}
	encrypted := false
	if content.Kind() == abi.KindArray {
		it := content.Iter()
		for it.Next() {
			c := it.Value()
			if t := c.Get("text"); t.Kind() == abi.KindString {
				text(t)
			} else if c.Get("encrypted_content").Exists() {
				encrypted = true
			}
		}
	} else {
		text(content)
	}
	if !mine {
		n.awaitAnswer = true
	}
	if encrypted && !l.open {
		from := "another agent"
		if author.Kind() == abi.KindString {
			from = sdk.Text(author).String()
		}
		out.Warn("codex: a message from " + from + " to this agent is encrypted: its text is not in the rollout")
		return
	}
	l.close(out, native)
}

// communicationJSON returns the InterAgentCommunication that an
// assistant-role message item carries as its only text, the JSON
// {"author","recipient",...,"content",...}, indexed into n.innerDoc; ok is
// false for any other message.
func (n *normalizer) communicationJSON(p abi.Value) (abi.Value, bool) {
	c := p.Get("content")
	if c.Kind() != abi.KindArray || c.Len() != 1 {
		return abi.Value{}, false
	}
	text := c.Index(0).Get("text")
	if raw := text.Raw(); text.Kind() != abi.KindString || !sdk.HasPrefix(raw, `"{\"author\":`) {
		return abi.Value{}, false
	}
	n.inner = sdk.AppendText(n.inner[:0], text)
	toks, isJSON := wire.BuildTape(n.innerDoc.Toks[:0], n.inner)
	if !isJSON {
		return abi.Value{}, false
	}
	n.innerDoc.Toks, n.innerDoc.Line = toks, n.inner
	root := n.innerDoc.Root()
	if root.Get("author").Kind() != abi.KindString || root.Get("recipient").Kind() != abi.KindString || !root.Get("content").Exists() {
		return abi.Value{}, false
	}
	return root, true
}
