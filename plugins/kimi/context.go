package kimi

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtContext is the Kimi CLI's context file before 0.59: the model's
// context, one message a line.
const fmtContext = "context"

// compacted is the first part of the message a compaction leaves in the
// context (compaction.py): the summary of what came before.
const compacted = "<system>Previous context has been compacted."

// contextLine handles one line of a Kimi CLI context file (soul/
// context.py before 0.59): a kosong Message {role, content (a string or
// parts), tool_calls, tool_call_id}, or a marker {"role": "_checkpoint",
// "id"} or {"role": "_usage", "token_count"} (the context's size, not a
// usage).
func (n *normalizer) contextLine(v abi.Value, out *sdk.Out) {
	role := v.Get("role")
	switch {
	case role.Is("_checkpoint"):
		out.Ignored(sdk.S("_checkpoint"))
	case role.Is("_usage"):
		// The context's token count after a step: its size, no usage.
		out.Ignored(sdk.S("_usage"))
	case role.Is("user"):
		n.closeAll(out)
		origin := sdk.OriginPrompt
		if systemOnly(v.Get("content")) {
			// Text the CLI put in the user's role: a checkpoint marker
			// ("<system>CHECKPOINT N</system>"), a notice.
			origin = sdk.OriginInjected
		} else {
			n.contextRepeatStop(true, out) // a prompt: the next turn
		}
		if !n.user(v.Get("content"), origin, "", stamp{}, out) {
			out.Ignored(sdk.S("user"))
		}
	case role.Is("assistant"):
		n.contextRepeatStop(false, out) // the model went on
		n.closeAll(out)
		n.contextAssistant(v, out)
	case role.Is("tool"):
		n.contextTool(v, out)
	default:
		out.Unmapped(sdk.S("role:" + sdk.TypeName(role)))
	}
}

// contextAssistant handles an assistant message of the context: one
// model call, its text and thinking parts, then its tool calls. The
// message a compaction leaves ("<system>Previous context has been
// compacted. ...</system>" and the summary) is the summary the model saw
// in place of what came before, injected context, not an answer.
func (n *normalizer) contextAssistant(v abi.Value, out *sdk.Out) {
	content := v.Get("content")
	if first := firstText(content); strings.HasPrefix(first, compacted) {
		out.Warn("kimi: the context was compacted: the model saw a summary of what came before (the file before it was rotated to <session>_N.jsonl)")
		if !n.user(content, sdk.OriginInjected, "", stamp{}, out) {
			out.Ignored(sdk.S("assistant"))
		}
		return
	}
	said := false
	switch content.Kind() {
	case abi.KindString:
		if !content.Is("") {
			n.content("", sdk.BlockText, sdk.Text(content), content, stamp{}, out)
			said = true
		}
	case abi.KindArray:
		it := content.Iter()
		for it.Next() {
			p := it.Value()
			switch {
			case p.Get("type").Is("text"):
				n.content("", sdk.BlockText, sdk.Text(p.Get("text")), p.Get("text"), stamp{}, out)
				said = true
			case p.Get("type").Is("think"):
				n.content("", sdk.BlockThinking, sdk.Text(p.Get("think")), p.Get("think"), stamp{}, out)
				said = true
			}
		}
	}
	it := v.Get("tool_calls").Iter()
	for it.Next() {
		c := it.Value()
		fn := c.Get("function")
		n.toolCall("", sdk.View(c.Get("id")), sdk.View(fn.Get("name")), argsText(fn.Get("arguments")), stamp{}, false, out)
		said = true
	}
	if !said {
		out.Ignored(sdk.S("assistant"))
		return
	}
	// The message is whole on its line: its calls are reported now.
	n.close("", out)
}

// contextTool handles a tool message of the context (soul/message.py's
// tool_result_to_message): a failed call's first part is
// "<system>ERROR: <message></system>" and its output the parts after
// it; a call that succeeded may start with "<system><message></system>"
// (the tool's brief), kept in the output as the model saw it.
func (n *normalizer) contextTool(v abi.Value, out *sdk.Out) {
	content := v.Get("content")
	n.repeatStop = deadEnd(content)
	first := firstText(content)
	msg, isError := strings.CutPrefix(first, "<system>ERROR: ")
	if !isError {
		n.result("", sdk.View(v.Get("tool_call_id")), content, false, abi.Value{}, "", stamp{}, out)
		return
	}
	msg = strings.TrimSuffix(msg, "</system>")
	var rest []byte
	it := content.Iter()
	skipped := false
	for it.Next() {
		t := it.Value().Get("text")
		if t.Kind() != abi.KindString {
			continue
		}
		if !skipped {
			skipped = true
			continue
		}
		if len(rest) > 0 {
			rest = append(rest, '\n')
		}
		rest = sdk.AppendText(rest, t)
	}
	n.resultOf("", sdk.View(v.Get("tool_call_id")), sdk.S(string(rest)), string(rest), true, sdk.S(msg), msg, "", stamp{}, out)
}

// contextRepeatStop settles a tool result that ended on the CLI's
// dead-end reminder (deadEnd) at the next message: the user's prompt
// (the next turn) or the end of the input (ended) means the CLI stopped
// the turn there (stop reason tool_call_repeat, the print mode's exit
// code 0): an error, as a wire log's TurnEnd after it is; the model's
// means the turn went on. The markers and the CLI's own text in the
// user's role change nothing.
func (n *normalizer) contextRepeatStop(ended bool, out *sdk.Out) {
	if n.repeatStop && ended {
		out.Status(sdk.StatusError, sdk.S(repeatStopErr), sdk.LevelError)
	}
	n.repeatStop = false
}

// firstText is the text of content's first part (or content itself, a
// string).
func firstText(content abi.Value) string {
	if content.Kind() == abi.KindString {
		return content.String()
	}
	if it := content.Iter(); it.Next() {
		if t := it.Value().Get("text"); t.Kind() == abi.KindString {
			return t.String()
		}
	}
	return ""
}

// systemOnly reports whether every text part of content is the CLI's own
// ("<system>...</system>").
func systemOnly(content abi.Value) bool {
	if content.Kind() == abi.KindString {
		s := strings.TrimSpace(content.String())
		return strings.HasPrefix(s, "<system>") && strings.HasSuffix(s, "</system>")
	}
	it := content.Iter()
	found := false
	for it.Next() {
		t := it.Value().Get("text")
		if t.Kind() != abi.KindString {
			continue
		}
		s := strings.TrimSpace(t.String())
		if !strings.HasPrefix(s, "<system>") || !strings.HasSuffix(s, "</system>") {
			return false
		}
		found = true
	}
	return found
}
