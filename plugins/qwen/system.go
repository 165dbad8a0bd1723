package qwen

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/gemini"
)

// system handles a system record by its subtype: the CLI's own events
// beside the conversation.
func (n *normalizer) system(r record, out *sdk.Out) {
	st := r.v.Get("subtype")
	p := r.v.Get("systemPayload")
	switch sdk.Name(st) {
	case "ui_telemetry":
		n.telemetry(p.Get("uiEvent"), r, out)
	case "chat_compression":
		n.compression(p, r, out)
	case "rewind":
		msg := "qwen conversation rewound"
		if c, ok := p.Get("truncatedCount").Int(); ok {
			msg += " (" + strconv.FormatInt(c, 10) + " history items)"
		}
		out.Warn(msg + ": the CLI dropped the last turns from the history it sends the model; they stay in this transcript")
	case "parent_session":
		if id := p.Get("parentSessionId"); id.Kind() == abi.KindString && !id.Is("") {
			out.Warn("a sub-session of session " + sdk.Clip(id.String(), 200))
		} else {
			out.Ignored(sdk.S("system/parent_session"))
		}
	case "notification", "cron", "background_task_completed", "agent_launch_prompt", "mid_turn_user_message":
		// Written as user records; should one come as a system
		// record, what it sent the model is read the same way.
		if r.v.Path("message", "parts").Kind() == abi.KindArray {
			n.user(r, out)
			return
		}
		out.Ignored(sdk.S("system/" + sdk.TypeName(st)))
	case "realtime_message":
		// A Realtime voice dialogue's turn. Qwen Code writes them as
		// user and assistant records (recordRealtimeConversation);
		// should one come as a system record, the role of the message
		// it holds says which it is. Without a message it holds none
		// of the dialogue, which is not the model's history either.
		switch m := r.v.Get("message"); {
		case m.Get("parts").Kind() != abi.KindArray:
			out.Ignored(sdk.S("system/realtime_message"))
		case m.Get("role").Is("model"):
			n.assistant(r, out, false)
		default:
			n.user(r, out)
		}
	case "turn_result":
		n.turnResult(p, r, out)
	case "at_command":
		if p.Get("status").Is("error") {
			msg := "qwen @ command failed"
			if m := p.Get("message"); m.Kind() == abi.KindString && !m.Is("") {
				msg += ": " + sdk.Clip(m.String(), 300)
			}
			out.Warn(msg)
			return
		}
		out.Ignored(sdk.S("system/at_command"))
	case "slash_command", "custom_title", "session_source", "session_model", "session_approval_mode",
		"session_execution_engine", "attribution_snapshot", "file_history_snapshot", "user_text_elements",
		"session_artifact_event", "session_artifact_snapshot", "session_sources_snapshot", "branch_checkpoint",
		"goal_state", "goal_runtime", "goal_turn_end", "session_notes", "omni_recall", "agent_session_ready",
		"agent_retry", "agent_bootstrap", "managed_session_header_v1", "managed_session_event_v1",
		"managed_session_commit_v1":
		// The CLI's bookkeeping for the UI and for /resume: a title, a
		// slash command's output, snapshots, the model and approval
		// mode it restores. Not the conversation.
		out.Ignored(sdk.S("system/" + sdk.TypeName(st)))
	default:
		out.Unmapped(sdk.S("system/" + sdk.TypeName(st)))
	}
}

// telemetry handles a ui_telemetry record, an event the CLI logged for its
// /stats: a failed API call (qwen-code.api_error, kept for every failed
// attempt, retried or not) is an error the provider reported, its
// message error_message (error in older builds, else the error_type) and
// its code the status_code, else the error_type; the others
// (an API response, whose tokens the assistant record states; a tool
// call, whose result the tool_result record states) are ignored.
func (n *normalizer) telemetry(ev abi.Value, r record, out *sdk.Out) {
	name := ev.Get("event.name")
	if !name.Is("qwen-code.api_error") {
		out.Ignored(sdk.S("system/ui_telemetry"))
		return
	}
	// Today's Qwen Code states the message as error_message (its
	// ApiErrorEvent); older builds, as Gemini CLI, as error.
	e := sdk.ProviderError{Message: sdk.StringOf(ev.Get("error_message")), Scope: r.scope}
	if e.Message.IsEmpty() {
		e.Message = gemini.ErrText(ev.Get("error"))
	}
	if e.Message.IsEmpty() {
		e.Message = sdk.StringOf(ev.Get("error_type"))
	}
	if c, ok := ev.Get("status_code").Int(); ok {
		e.Code = sdk.S(strconv.FormatInt(c, 10))
	} else {
		e.Code = sdk.StringOf(ev.Get("error_type"))
	}
	out.Error(e)
}

// compression handles a chat_compression record: the history the model
// sees from now on (compressedHistory) begins with the summary the CLI
// wrote of the turns it replaced. The summary is a message.user of
// injected context; the turns stay in the transcript, and a warning says
// the model's view was rewritten.
func (n *normalizer) compression(p abi.Value, r record, out *sdk.Out) {
	key := r.key()
	opened := false
	if s := p.Get("summary"); s.Kind() == abi.KindString && !s.Is("") {
		out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(r.v.Get("uuid")), Scope: r.scope, Time: r.ts})
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(s), Origin: sdk.OriginInjected})
		opened = true
	} else if first := p.Get("compressedHistory").Index(0); first.Get("role").Is("user") {
		it := first.Get("parts").Iter()
		for it.Next() {
			if t := it.Value().Get("text"); t.Kind() == abi.KindString && !t.Is("") {
				if !opened {
					out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(r.v.Get("uuid")), Scope: r.scope, Time: r.ts})
					opened = true
				}
				out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(t), Origin: sdk.OriginInjected})
			}
		}
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	}
	msg := "qwen chat history compressed"
	info := p.Get("info")
	before, okB := info.Get("originalTokenCount").Int()
	after, okA := info.Get("newTokenCount").Int()
	if okB && okA {
		msg += " from " + strconv.FormatInt(before, 10) + " to " + strconv.FormatInt(after, 10) + " tokens"
	}
	if h := p.Get("compressedHistory"); h.Kind() == abi.KindArray {
		msg += ": the model now sees " + strconv.Itoa(h.Len()) + " messages"
	}
	out.Warn(msg + "; a summary (recorded as injected context) replaced the earlier turns in the model's context, and they stay in this transcript")
}

// turnResult handles a turn_result record, the settled outcome of one
// prompt (daemon sessions): a turn that failed is an error the provider
// reported; one the user cancelled, a warning.
func (n *normalizer) turnResult(p abi.Value, r record, out *sdk.Out) {
	switch {
	case p.Get("state").Is("error"):
		e := p.Get("error")
		pe := sdk.ProviderError{Message: gemini.ErrText(e), Code: sdk.StringOf(e.Get("code")), Scope: r.scope}
		if pe.Message.IsEmpty() {
			pe.Message = sdk.S("the turn failed")
		}
		out.Error(pe)
	case p.Get("state").Is("cancelled"):
		out.Warn("qwen turn cancelled by the user")
	default:
		out.Ignored(sdk.S("system/turn_result"))
	}
}
