package codex

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// legacy reads one msg of the legacy {"id","msg"} stream. The format has
// no message ids: agent text and reasoning arrive as deltas followed by
// a final event repeating the whole text, which replaces the deltas.
func (n *normalizer) legacy(out *sdk.Out, msg abi.Value) {
	t := msg.Get("type")
	switch sdk.Name(t) {
	case "task_started":
		if !n.startTurn(out) {
			out.Ignored(sdk.Text(t))
		}
	case "session_configured":
		out.Meta(sdk.Meta{SessionID: sdk.Text(msg.Get("session_id")), Model: sdk.Text(msg.Get("model"))})
	case "agent_message_delta":
		n.appendStream(out, &n.text, sdk.BlockText, sdk.Text(msg.Get("delta")))
	case "agent_message":
		if n.legacyReviewEchoed() {
			// Codex's rendering of the review's end (exitedReview).
			out.Ignored(sdk.Text(t))
			return
		}
		v := msg.Get("message")
		n.finishStream(out, &n.text, sdk.BlockText, sdk.Text(v))
		n.noteText(out, v)
	case "model_reroute":
		n.reroute(out, msg)
	case "model_verification", "hook_started":
		// State (see the rollout's).
		out.Ignored(sdk.Text(t))
	case "entered_review_mode":
		// The marker that a review began: its findings come with
		// exited_review_mode.
		out.Ignored(sdk.Text(t))
	case "exited_review_mode":
		n.exitedReview(out, msg.Get("review_output"), sdk.Str{}, "exited_review_mode")
	case "agent_reasoning_delta":
		n.appendStream(out, &n.think, sdk.BlockThinking, sdk.Text(msg.Get("delta")))
	case "agent_reasoning":
		n.finishStream(out, &n.think, sdk.BlockThinking, sdk.Text(msg.Get("text")))
	case "agent_reasoning_section_break", "exec_command_output_delta":
		// Display hints: the section's text and the command's output
		// arrive whole in the events that follow.
		out.Ignored(sdk.Text(t))
	case "exec_command_begin", "exec_approval_request":
		// An approval request is the call waiting for the user (spec
		// §6.12): recorded now, dangling if no end follows; its begin
		// event, if the user approves, adds nothing.
		callID := sdk.Text(msg.Get("call_id"))
		if !n.firstLegacy(msg.Get("call_id")) {
			out.Ignored(sdk.Text(t))
			return
		}
		key := n.newKey()
		argv := msg.Get("command")
		display := shellJoin(argv)
		out.Open(key, sdk.Message{})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockCommand, Command: display, ToolID: callID})
		out.Close(key, sdk.MessageEnd{})
		out.ToolCall(sdk.ToolCall{
			CallID: callID, Name: sdk.S("exec_command"), Kind: "execute", Command: display,
			Input: object(member{"command", argv}, member{"cwd", msg.Get("cwd")}),
		})
	case "exec_command_end":
		r := sdk.ToolResult{CallID: sdk.Text(msg.Get("call_id")), Output: n.commandOutput(msg), ExitCode: sdk.IntOf(msg.Get("exit_code"))}
		settleCommand(&r, msg.Get("status"), n.scratch)
		out.ToolResult(r)
	case "patch_apply_begin", "apply_patch_approval_request":
		callID := sdk.Text(msg.Get("call_id"))
		changes := msg.Get("changes")
		if n.firstLegacy(msg.Get("call_id")) {
			n.toolMessage(out, callID, sdk.S("apply_patch"), "edit", object(member{"changes", changes}))
		} else {
			out.Ignored(sdk.Text(t))
		}
		if changes.Exists() {
			if n.patches == nil {
				n.patches = map[string]string{}
			}
			n.patches[callID.String()] = string(changes.Raw())
		}
	case "patch_apply_end":
		callID := sdk.Text(msg.Get("call_id"))
		r := sdk.ToolResult{CallID: callID, Output: sdk.Text(msg.Get("stdout"))}
		applied, _ := msg.Get("success").Bool()
		if r.Output.IsEmpty() {
			// No report: the outcome of a patch that applied is the
			// changes made (with their diffs), from this event or the
			// call's begin event; one that did not apply changed nothing.
			r.Output = sdk.Str{}
			if applied || msg.Get("status").Is("completed") {
				r.Output = n.patchChanges(msg.Get("changes"), callID)
			}
		}
		delete(n.patches, callID.String())
		st := nativeStatus(msg.Get("status"))
		if s, ok := msg.Get("success").Bool(); ok && st == "" {
			st = toolOK
			if !s {
				st = toolError
			}
		}
		if st != toolOK {
			if e := sdk.Text(msg.Get("stderr")); !e.IsEmpty() {
				r.Error = e
			}
		}
		settle(&r, outcome{status: st, err: patchError(msg.Get("status"))}, r.Output, nil)
		out.ToolResult(r)
	case "mcp_tool_call_begin":
		inv := msg.Get("invocation")
		n.toolMessage(out, sdk.Text(msg.Get("call_id")), mcpName(inv.Get("server"), inv.Get("tool")), "other", jsonInput(inv.Get("arguments")))
	case "mcp_tool_call_end":
		out.ToolResult(mcpLegacyResult(sdk.Text(msg.Get("call_id")), msg.Get("result")))
	case "web_search_begin":
		n.toolMessage(out, sdk.Text(msg.Get("call_id")), sdk.S("web_search"), "fetch", object(member{"query", msg.Get("query")}))
	case "web_search_end":
		// The event states no results: no output (the query is the
		// call's input).
		out.ToolResult(sdk.ToolResult{CallID: sdk.Text(msg.Get("call_id")), Status: sdk.S(toolOK)})
	case "token_count":
		if info := msg.Get("info"); info.Exists() {
			// Newer builds: a running total.
			// A null info (rate limits only) or a repeated total
			// says nothing new.
			if info.Kind() == abi.KindNull || !n.usage.total(out, info.Get("total_token_usage"), info.Get("last_token_usage")) {
				out.Ignored(sdk.Text(t))
			}
			return
		}
		// Older builds: the usage of one model response.
		out.Usage(execUsage(msg), sdk.ModeAdd)
	case "collab_agent_spawn_begin", "collab_agent_interaction_begin", "collab_waiting_begin", "collab_close_begin", "collab_resume_begin":
		n.collabBegin(out, msg)
	case "collab_agent_spawn_end", "collab_agent_interaction_end", "collab_waiting_end", "collab_close_end", "collab_resume_end":
		n.collabEnd(out, msg)
	case "task_complete":
		n.closeStream(out, &n.think)
		n.closeStream(out, &n.text)
		n.finalText(out, msg.Get("last_agent_message"), sdk.Message{})
		n.closeAgents(out)
		n.completionError(msg.Get("error"))
		n.completeTurn(out)
	case "turn_aborted":
		n.closeAgents(out)
		n.finish(out, sdk.StatusIncomplete, abortText(msg))
	case "error":
		// The task ends with this error: no task_complete follows
		// (retries are stream_error).
		n.closeAgents(out)
		n.failTurn(out, msg.Get("message"))
	case "stream_error":
		reportError(out, msg.Get("message"), "stream error")
	case "warning":
		warning(out, msg.Get("message"))
	case "background_event":
		backgroundEvent(out, msg.Get("message"))
	case "deprecation_notice":
		deprecationNotice(out, msg)
	case "hook_completed":
		hookCompleted(out, msg.Get("run"), "hook_completed")
	default:
		native := t.String()
		if !t.Exists() {
			native = "msg/(untyped)"
		}
		out.Unmapped(sdk.S(native))
	}
}

// patchChanges is the changes of a patch: changes (from its end event)
// when present, else those its begin event stated; unset when neither.
func (n *normalizer) patchChanges(changes abi.Value, callID sdk.Str) sdk.Str {
	if changes.Kind() == abi.KindObject {
		return sdk.JSON(changes)
	}
	if c, ok := n.patches[callID.String()]; ok {
		if doc, parsed := sdk.Parse([]byte(c)); parsed {
			return sdk.JSON(doc.Root())
		}
	}
	return sdk.Str{}
}

func abortText(msg abi.Value) sdk.Str {
	if r := msg.Get("reason"); r.Kind() == abi.KindString {
		return sdk.S("turn aborted: " + r.String())
	}
	return sdk.S("turn aborted")
}

// toolMessage reports a legacy tool request (the format has no message
// ids, so its message gets a fresh key).
func (n *normalizer) toolMessage(out *sdk.Out, callID, name sdk.Str, kind string, input sdk.Str) {
	toolUse(out, n.newKey(), sdk.Message{}, sdk.ToolCall{CallID: callID, Name: name, Input: input, Kind: kind})
}

// commandOutput is what a command printed: the interleaved output when
// the event has it, else stdout followed by stderr. Its text is left in
// n.scratch, for settleCommand.
func (n *normalizer) commandOutput(msg abi.Value) sdk.Str {
	if v := msg.Get("aggregated_output"); v.Kind() == abi.KindString {
		n.scratch = appendTextOf(n.scratch[:0], v)
		return sdk.Text(v)
	}
	stdout, stderr := msg.Get("stdout"), msg.Get("stderr")
	if len(stderr.Raw()) <= 2 {
		n.scratch = appendTextOf(n.scratch[:0], stdout)
		return sdk.Text(stdout)
	}
	if len(stdout.Raw()) <= 2 {
		n.scratch = appendTextOf(n.scratch[:0], stderr)
		return sdk.Text(stderr)
	}
	b := appendTextOf(n.scratch[:0], stdout)
	if b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	n.scratch = appendTextOf(b, stderr)
	return sdk.S(string(n.scratch))
}

// mcpLegacyResult reads Rust's Result serialization: {"Ok":{content,
// isError}} or {"Err":message}.
func mcpLegacyResult(callID sdk.Str, res abi.Value) sdk.ToolResult {
	r := sdk.ToolResult{CallID: callID}
	st := toolOK
	if ok := res.Get("Ok"); ok.Exists() {
		r.Output = sdk.JSON(ok.Get("content"))
		if ok.Get("isError").Truthy() || ok.Get("is_error").Truthy() {
			st = toolError
			r.Error = firstText(ok.Get("content"))
		}
	} else {
		st = toolError
		if e := res.Get("Err"); e.Exists() {
			r.Error = sdk.Text(e)
		} else {
			r.Error = sdk.S("MCP tool call failed")
			r.Output = sdk.JSON(res)
		}
	}
	settle(&r, outcome{status: st, err: "MCP tool call failed"}, r.Output, nil)
	return r
}

// appendStream appends a delta to the streamed message s, opening it on
// the first delta.
func (n *normalizer) appendStream(out *sdk.Out, s *stream, blockType string, v sdk.Str) {
	if !s.open {
		s.key, s.open = n.newKey(), true
		out.Open(s.key, sdk.Message{})
	}
	out.Append(s.key, 0, blockType, v)
}

// finishStream sets the whole text of the streamed message s (replacing
// the joined deltas, so the text is there once) and closes it.
func (n *normalizer) finishStream(out *sdk.Out, s *stream, typ string, v sdk.Str) {
	key := s.key
	if !s.open {
		if !v.IsSet() {
			return
		}
		key = n.newKey()
	}
	s.open = false
	if !v.IsSet() {
		out.Close(key, sdk.MessageEnd{})
		return
	}
	n.textMessage(out, key, sdk.Message{}, typ, v)
}

// closeStream closes a streamed message whose final event never came:
// the deltas are all there is.
func (n *normalizer) closeStream(out *sdk.Out, s *stream) {
	if s.open {
		out.Close(s.key, sdk.MessageEnd{})
		s.open = false
	}
}
