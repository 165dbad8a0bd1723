package codex

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// exec reads one event of `codex exec --json`.
func (n *normalizer) exec(out *sdk.Out, root, typ abi.Value) {
	switch sdk.Name(typ) {
	case "thread.started":
		// Item ids restart with every thread.
		clear(n.items)
		clear(n.legacyCalls)
		clear(n.agents)
		n.agentList = n.agentList[:0]
		out.Meta(sdk.Meta{SessionID: sdk.Text(root.Get("thread_id"))})
	case "turn.started":
		// The first turn of a stream changes nothing: a marker.
		if !n.startTurn(out) {
			out.Ignored(sdk.Text(typ))
		}
	case "turn.completed":
		// The usage is the thread's running total, not this turn's:
		// replace, never add, and sum across a restart.
		n.usage.total(out, root.Get("usage"), abi.Value{})
		n.closeAgents(out)
		n.completeTurn(out) // ok, unless the turn's review failed
	case "turn.failed":
		n.closeAgents(out)
		n.finish(out, sdk.StatusError, strOr(errorText(root.Path("error", "message")), "turn failed"))
	case "error":
		// Top-level errors are not fatal by themselves ("Reconnecting...
		// 2/5" retries); turn.failed, if it comes, is the verdict.
		reportError(out, root.Get("message"), "error")
	case "item.started":
		n.item(out, phaseStarted, root.Get("item"))
	case "item.updated":
		n.item(out, phaseUpdated, root.Get("item"))
	case "item.completed":
		n.item(out, phaseCompleted, root.Get("item"))
	case "request_user_input":
		// The model asks the user questions: a tool call whose answer
		// is not part of this stream.
		callID := sdk.Text(root.Get("call_id"))
		if callID.IsEmpty() {
			callID = sdk.Text(root.Get("id"))
		}
		if callID.IsEmpty() {
			callID = n.newKey()
		}
		if n.first(callID) {
			n.toolItem(out, callID, sdk.S("request_user_input"), "other", object(member{"questions", root.Get("questions")}))
		}
	case "item.plan.delta":
		key := sdk.Text(root.Get("item_id"))
		out.Open(key, sdk.Message{ID: key})
		out.Append(key, 0, sdk.BlockText, sdk.Text(root.Get("delta")))
	default:
		out.Unmapped(sdk.Text(typ))
	}
}

type phase int

const (
	phaseStarted phase = iota
	phaseUpdated
	phaseCompleted
)

// item reads one thread item. Every item is its own provider message
// (its id is the message id), and every action item is one tool call
// keyed by the item id, reported the first time the item is seen
// (older builds send only item.completed) and answered when it
// completes.
func (n *normalizer) item(out *sdk.Out, ph phase, item abi.Value) {
	id := item.Get("id")
	key := sdk.Text(id)
	if id.Kind() != abi.KindString {
		key = n.newKey()
	}
	t := item.Get("type")
	if !t.Exists() {
		// Builds before 0.44 named the field item_type.
		t = item.Get("item_type")
	}
	// fresh: an action item seen for the first time, whose message and
	// call are reported now (once per item id).
	fresh := false
	switch sdk.Name(t) {
	case "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "collab_tool_call":
		// Looked up by a view of the id (key.String() of a span would
		// copy it on every line); copied only when new.
		var k string
		if id.Kind() == abi.KindString {
			k = sdk.View(id)
		} else {
			k = key.String() // a literal (newKey): no copy
		}
		if n.items[k] {
			// An action item's started/updated line after its call was
			// reported is progress the completed item repeats in full.
			if ph == phaseStarted {
				out.Ignored(sdk.S("item.started"))
				return
			} else if ph == phaseUpdated {
				out.Ignored(sdk.S("item.updated"))
				return
			}
		} else {
			n.items[strings.Clone(k)] = true
			fresh = true
		}
	}
	switch sdk.Name(t) {
	case "agent_message", "assistant_message":
		text := item.Get("text")
		out.Open(key, sdk.Message{ID: key})
		if text.Exists() {
			out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
		}
		if ph == phaseCompleted {
			out.Close(key, sdk.MessageEnd{})
			n.noteText(out, text)
			n.execReviewFailed(text)
		}
	case "reasoning":
		out.Open(key, sdk.Message{ID: key})
		if text := item.Get("text"); text.Exists() {
			out.Block(key, 0, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(text)})
		}
		if ph == phaseCompleted {
			out.Close(key, sdk.MessageEnd{})
		}
	case "plan":
		// The plan text is shown to the user as it streams
		// (item.plan.delta); the completed item replaces the deltas.
		out.Open(key, sdk.Message{ID: key})
		if text := item.Get("text"); text.Exists() {
			out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
		}
		if ph == phaseCompleted {
			out.Close(key, sdk.MessageEnd{})
		}
	case "command_execution":
		n.command(out, fresh, ph, key, item)
	case "file_change":
		if fresh {
			n.toolItem(out, key, sdk.S("file_change"), "edit", object(member{"changes", item.Get("changes")}))
		}
		if ph == phaseCompleted {
			// The outcome is the changes made (paths and kinds, and
			// each diff where the build states it), never the status
			// word.
			r := sdk.ToolResult{CallID: key}
			if c := item.Get("changes"); c.Kind() == abi.KindArray && len(c.Raw()) > 2 {
				r.Output = sdk.JSON(c)
			}
			settle(&r, outcome{status: nativeStatus(item.Get("status")), err: patchError(item.Get("status"))}, sdk.Str{}, nil)
			out.ToolResult(r)
		}
	case "mcp_tool_call":
		n.mcpItem(out, fresh, ph, key, item)
	case "web_search":
		if fresh {
			input := object(member{"query", item.Get("query")}, member{"action", item.Get("action")})
			n.toolItem(out, key, sdk.S("web_search"), "fetch", input)
		}
		if ph == phaseCompleted {
			// The item states no results: no output (the query is the
			// input, not what the search returned).
			r := sdk.ToolResult{CallID: key}
			settle(&r, outcome{status: nativeStatus(item.Get("status"))}, sdk.Str{}, nil)
			out.ToolResult(r)
		}
	case "todo_list":
		// The plan tool: the agent's own to-do list. Updates rewrite it;
		// the completed item holds the final state.
		if fresh {
			n.toolItem(out, key, sdk.S("todo_list"), "think", object(member{"items", item.Get("items")}))
		}
		if ph == phaseCompleted {
			out.ToolResult(sdk.ToolResult{CallID: key, Output: sdk.JSON(item.Get("items")), Status: sdk.S(toolOK)})
		}
	case "collab_tool_call":
		if fresh {
			name := sdk.Text(item.Get("tool"))
			if name.IsEmpty() {
				name = sdk.S("collab_tool_call")
			}
			input := object(member{"tool", item.Get("tool")}, member{"prompt", item.Get("prompt")},
				member{"sender_thread_id", item.Get("sender_thread_id")}, member{"receiver_thread_ids", item.Get("receiver_thread_ids")})
			n.toolItem(out, key, name, "other", input)
		}
		if ph == phaseCompleted {
			r := sdk.ToolResult{CallID: key, Output: sdk.JSON(item.Get("agents_states"))}
			settle(&r, outcome{status: nativeStatus(item.Get("status"))}, sdk.Str{}, nil)
			out.ToolResult(r)
			n.collab(out, key, item)
		}
	case "error":
		// Not an error: "a non-fatal error surfaced as an item"
		// (exec_events.rs), the CLI's warnings (EventMsg::Warning, a
		// config warning, a deprecation notice, a model reroute). Its
		// errors are the top-level error event and turn.failed.
		warning(out, item.Get("message"))
	default:
		native := "item/" + t.String()
		if !t.Exists() {
			native = "item/(untyped)"
		}
		out.Unmapped(sdk.S(native))
	}
}

// firstLegacy reports whether a legacy event's call id is seen for the
// first time (legacyCalls is apart from items, as exec item ids are
// another namespace), looking it up by a view and copying it only when
// new. The id is what sdk.Text(id).String() is.
func (n *normalizer) firstLegacy(id abi.Value) bool {
	k := sdk.View(id)
	if n.legacyCalls[k] {
		return false
	}
	if n.legacyCalls == nil {
		n.legacyCalls = map[string]bool{}
	}
	n.legacyCalls[strings.Clone(k)] = true
	return true
}

// first reports whether item key is seen for the first time.
func (n *normalizer) first(id sdk.Str) bool {
	k := id.String()
	if n.items[k] {
		return false
	}
	n.items[k] = true
	return true
}

// toolItem reports an action item seen for the first time: its message
// (a tool_use block, the request inside the assistant's output) and its
// tool call.
func (n *normalizer) toolItem(out *sdk.Out, key, name sdk.Str, kind string, input sdk.Str) {
	toolUse(out, key, sdk.Message{ID: key}, sdk.ToolCall{CallID: key, Name: name, Input: input, Kind: kind})
}

// command reports a command_execution: the CLI ran a shell command for
// the model, so it is a command block (not a model-authored tool_use)
// paired with its tool call and result.
func (n *normalizer) command(out *sdk.Out, fresh bool, ph phase, key sdk.Str, item abi.Value) {
	cmd := item.Get("command")
	if fresh {
		out.Open(key, sdk.Message{ID: key})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockCommand, Command: sdk.Text(cmd), ToolID: key})
		out.Close(key, sdk.MessageEnd{})
		out.ToolCall(sdk.ToolCall{
			CallID: key, Name: sdk.S("command_execution"), Kind: "execute",
			Input: object(member{"command", cmd}), Command: sdk.Text(cmd),
		})
	}
	if ph != phaseCompleted {
		return
	}
	output := item.Get("aggregated_output")
	r := sdk.ToolResult{CallID: key, Output: sdk.Text(output), ExitCode: sdk.IntOf(item.Get("exit_code"))}
	n.scratch = appendTextOf(n.scratch[:0], output)
	settleCommand(&r, item.Get("status"), n.scratch)
	out.ToolResult(r)
}

// mcpItem reports an mcp_tool_call. A failed call may carry error:null
// and the failure text in result.content; that text is then the error.
func (n *normalizer) mcpItem(out *sdk.Out, fresh bool, ph phase, key sdk.Str, item abi.Value) {
	if fresh {
		n.toolItem(out, key, mcpName(item.Get("server"), item.Get("tool")), "other", jsonInput(item.Get("arguments")))
	}
	if ph != phaseCompleted {
		return
	}
	res := item.Get("result")
	r := sdk.ToolResult{CallID: key}
	if c := res.Get("content"); c.Exists() {
		r.Output = sdk.JSON(c)
	} else if res.Exists() && res.Kind() != abi.KindNull {
		r.Output = sdk.JSON(res)
	}
	r.Error = sdk.Text(item.Path("error", "message"))
	if !r.Error.IsSet() && item.Get("error").Kind() == abi.KindString {
		r.Error = sdk.Text(item.Get("error"))
	}
	st := nativeStatus(item.Get("status"))
	if res.Get("is_error").Truthy() || res.Get("isError").Truthy() || st == "" && !r.Error.IsEmpty() {
		st = toolError
	}
	if st == toolError && contains([]byte(r.Error.String()), "timed out") {
		// Stopped before it finished: a cancellation (spec §4).
		st = toolCancelled
	}
	if st == toolError && r.Error.IsEmpty() {
		r.Error = firstText(res.Get("content"))
		if r.Error.IsEmpty() {
			r.Error = sdk.S("MCP tool call failed")
		}
	}
	settle(&r, outcome{status: st}, r.Output, nil)
	out.ToolResult(r)
}

// mcpName names an MCP tool as Codex shows it: server.tool.
func mcpName(server, tool abi.Value) sdk.Str {
	return sdk.S(server.String() + "." + tool.String())
}

// firstText returns the text of the first text content block of an MCP
// result.
func firstText(content abi.Value) sdk.Str {
	it := content.Iter()
	for it.Next() {
		if t := it.Value().Get("text"); t.Kind() == abi.KindString {
			return sdk.Text(t)
		}
	}
	return sdk.Str{}
}

// patchError is the error text of a file change that did not apply.
func patchError(st abi.Value) string {
	switch nativeStatus(st) {
	case toolDenied:
		return "the file change was declined"
	case toolCancelled:
		return "the file change was cancelled"
	}
	return "the file change failed"
}
