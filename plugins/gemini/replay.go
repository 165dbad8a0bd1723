package gemini

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// replay is a history the CLI writes again into a JSONL session file, a
// record for each of its messages. GeminiChat.setHistory, given messages
// without ids (a checkpoint's history on /chat resume, a tool call's
// checkpoint on /restore, a history the CLI masked, trimmed or
// compressed), records each as a message of its own under a new id
// (ChatRecordingService.recordSyntheticMessage: a user or gemini record
// stamped now, a model message without model or tokens, its content the
// message's parts), then sets the session's messages to that history
// ({"$set":{"messages":[...]}}); google-gemini/gemini-cli
// packages/core/src/core/geminiChat.ts and
// packages/core/src/services/chatRecordingService.ts at 5411f11 (since
// 055e0f6, 2026-05-18). Those records are no turns of the session: the
// ones that repeat a message already reported (the same type and text,
// every call and call result in it reported) are that message, and the
// others (a checkpoint of another session, a compression's summary) are
// history the CLI wrote, recorded as injected context, as a history the
// $set patch writes (setMessages).
type replay struct {
	on                      bool
	written, copies, others int
}

// replayed handles record m (of type t) of a JSONL session file when it
// is part of a history written again, and reports whether it was. A
// history opens with the session context the CLI starts a chat with
// (<session_context>), or with a compression's summary: a user record
// that says either is no prompt but the first record of one. A model
// message without model whose content is a list of parts is one too (the
// CLI records a model's answer with its model, its content the answer's
// text). The history goes on until the $set patch that sets it, or a
// record of another kind (a model's answer, a notice).
func (n *normalizer) replayed(m, t abi.Value, out *sdk.Out) bool {
	switch {
	case t.Is("user"):
		if !n.replay.on && !historyStart(m.Get("content")) {
			return false
		}
	case t.Is("gemini") && restoredAnswer(m):
	default:
		n.endReplay(out)
		return false
	}
	if id := m.Get("id"); id.Kind() == abi.KindString && n.records[sdk.View(id)] {
		if !n.replay.on {
			return false // a record appended again: sessionRecord's
		}
		out.Ignored(sdk.S("message/" + t.String()))
		return true
	}
	n.replay.on = true
	n.replay.written++
	id := m.Get("id")
	if n.copied(m, t) || t.Is("user") && n.answeredResults(m.Get("content")) {
		n.seen(id)
		n.replay.copies++
		out.Ignored(sdk.S(historyAgain))
		return true
	}
	n.seen(id)
	n.replay.others++
	key := sdk.S(n.newKey("u"))
	out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(id), Time: sdk.StringOf(m.Get("timestamp"))})
	n.contentBlocks(key, m.Get("content"), sdk.OriginInjected, out)
	out.Close(key, sdk.MessageEnd{})
	n.said(m, t)
	return true
}

// historyAgain is the native name under which a record of a history
// written again that repeats a message already reported is declared
// ignored.
const historyAgain = "(history written again)"

// endReplay ends a history written again, and says what it held.
func (n *normalizer) endReplay(out *sdk.Out) {
	r := n.replay
	if !r.on {
		return
	}
	n.replay = replay{}
	out.Warn("gemini session history written again by the CLI (/chat resume, /restore, or a history it masked, trimmed or compressed): " +
		strconv.Itoa(r.written) + " messages recorded again, " + strconv.Itoa(r.copies) + " of them turns already in this transcript (not reported again), " +
		strconv.Itoa(r.others) + " not seen in this session (recorded as injected context, not as turns)")
}

// historyStart reports whether a user record's content opens a history
// the CLI writes: its session context, or a compression's summary.
func historyStart(c abi.Value) bool {
	if compressed(c) {
		return true
	}
	if c.Kind() == abi.KindString {
		return opens(c.Raw()[1:], sessionContext)
	}
	it := c.Iter()
	if !it.Next() {
		return false
	}
	t := it.Value().Get("text")
	return t.Kind() == abi.KindString && opens(t.Raw()[1:], sessionContext)
}

// restoredAnswer reports whether a gemini record is a model message the
// CLI recorded from a history (recordSyntheticMessage): no model, no
// tokens, its content a list of parts, not empty. (A response with no
// text, thought or call is recorded so too, its usage with it: an empty
// list, or tokens.)
func restoredAnswer(m abi.Value) bool {
	c := m.Get("content")
	if m.Get("model").Exists() || c.Kind() != abi.KindArray || c.Len() == 0 {
		return false
	}
	tk := m.Get("tokens")
	return !tk.Exists() || tk.Kind() == abi.KindNull
}

// answeredResults reports whether a user record's content is only the
// results of calls already reported (functionResponse parts of known
// call ids): a copy of the results a model message's calls got.
func (n *normalizer) answeredResults(c abi.Value) bool {
	it := c.Iter()
	parts := 0
	for c.Kind() == abi.KindArray && it.Next() {
		id := it.Value().Path("functionResponse", "id")
		if id.Kind() != abi.KindString || !n.called[sdk.View(id)] {
			return false
		}
		parts++
	}
	return parts > 0
}
