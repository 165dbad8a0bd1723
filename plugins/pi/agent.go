package pi

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// subagents writes the sub-agents a tool result's details hold as child
// runs (spec §6.10), linked to the call: Pi's subagent extension runs
// each agent as a `pi --mode json` process and keeps, in details.results,
// one record per agent ({agent, task, exitCode, messages, stopReason,
// errorMessage, stderr}) with the messages that process printed. Only
// the step's own results are read (a sub-agent's sub-agents stay in its
// tool result's raw text).
func (n *normalizer) subagents(details abi.Value, callID, scope sdk.Str, out *sdk.Out) {
	rs := details.Get("results")
	if rs.Kind() != abi.KindArray || callID.IsEmpty() || scope.IsSet() {
		return
	}
	i := 0
	it := rs.Iter()
	for it.Next() {
		r := it.Value()
		msgs := r.Get("messages")
		task := r.Get("task")
		if r.Kind() != abi.KindObject || msgs.Kind() != abi.KindArray && task.Kind() != abi.KindString {
			continue
		}
		i++
		base := callID.String() + "#" + strconv.Itoa(i)
		sc := sdk.S(base)
		name := sdk.StringOf(r.Get("agent"))
		if name.IsEmpty() {
			name = sdk.S("subagent")
		}
		out.ScopeOpen(sc, callID, name, sdk.StringOf(task))
		// The process printed its prompt as its first message; a
		// result without it has the task as its prompt.
		if !msgs.Index(0).Get("role").Is("user") && task.Kind() == abi.KindString {
			k := sdk.S(base + "/task")
			out.Open(k, sdk.Message{User: true, Scope: sc})
			out.Block(k, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(task), Origin: sdk.OriginPrompt})
			out.Close(k, sdk.MessageEnd{})
		}
		// The extension keeps a tool result twice (message_end and
		// tool_result_end): once is the result. A call naming the id
		// again after its result (model servers make ids unique per
		// response, not per session: a local one names every call
		// call_1) is a new call: its result is its own.
		var results map[string]bool
		j := 0
		mt := msgs.Iter()
		for mt.Next() {
			m := mt.Value()
			j++
			switch {
			case m.Get("role").Is("toolResult"):
				id := sdk.View(m.Get("toolCallId"))
				if results[id] {
					continue
				}
				if results == nil {
					results = map[string]bool{}
				}
				results[m.Get("toolCallId").String()] = true
			case m.Get("role").Is("assistant"):
				ct := m.Get("content").Iter()
				for ct.Next() {
					if p := ct.Value(); p.Get("type").Is("toolCall") {
						delete(results, sdk.View(p.Get("id")))
					}
				}
			}
			n.messageIn(m, sdk.S(base+"/"+strconv.Itoa(j)), sdk.Str{}, sdk.Str{}, sc, out)
		}
		status, err := sdk.StatusOK, sdk.Str{}
		code, hasCode := r.Get("exitCode").Int()
		stop := r.Get("stopReason")
		if hasCode && code != 0 || stop.Is("error") || stop.Is("aborted") {
			status = sdk.StatusError
			err = sdk.StringOf(r.Get("errorMessage"))
			if err.IsEmpty() && hasCode && code != 0 {
				err = sdk.S("the sub-agent exited with code " + strconv.FormatInt(code, 10))
			}
			if err.IsEmpty() {
				err = sdk.S("the sub-agent's response ended with " + sdk.TypeName(stop))
			}
		}
		out.ScopeClose(sc, status, err)
	}
}
