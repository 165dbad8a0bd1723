package codex

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// hookCompleted handles the end of one run of a user's hook
// (HookCompletedEvent {turn_id, run: HookRunSummary}; rollouts persist it
// since mid-2026): run {event_name (session_start, user_prompt_submit,
// pre_tool_use, permission_request, post_tool_use, stop, ...), status
// (completed, failed, blocked, stopped), status_message, entries [{kind,
// text}]}. A hook that completed changes nothing the transcript shows
// (the context it added is a developer message of its own); one that
// blocked (a call or a prompt), stopped the turn or failed is a warning
// naming the hook and what it said. What it blocked says so itself: a
// call's output (classify), a prompt's empty turn. native is the line's
// name for an unknown status.
func hookCompleted(out *sdk.Out, run abi.Value, native string) {
	status := run.Get("status")
	switch sdk.Name(status) {
	case "completed":
		out.Ignored(sdk.S(native))
		return
	case "blocked", "stopped", "failed":
	default:
		out.Unmapped(sdk.S(native))
		return
	}
	w := "codex hook " + strOr(sdk.Text(run.Get("event_name")), "(unnamed)").String() + " " + status.String()
	said := ""
	if m := run.Get("status_message"); m.Kind() == abi.KindString && len(m.Raw()) > 2 {
		said = m.String()
	}
	it := run.Get("entries").Iter()
	for it.Next() {
		if t := it.Value().Get("text"); t.Kind() == abi.KindString && len(t.Raw()) > 2 {
			if said != "" {
				said += "; "
			}
			said += t.String()
		}
	}
	if said != "" {
		w += ": " + clip([]byte(said))
	}
	out.Warn(w)
}
