//go:build !wasip1

package codex_test

import (
	"strings"
	"testing"
)

// TestNewestRecords: what the newest Codex writes (issue 28; the shapes
// are in testdata/golden/codex/README.md, "Turn errors, hooks"):
//   - a task_complete that states the turn's error (TurnCompleteEvent.error,
//     {message, codex_error_info}) ends a failed turn, whatever answer
//     came before it: an error with that message, never ok;
//   - a hook run's end (hook_completed, which rollouts now persist) is no
//     unmapped line: a hook that completed says nothing, one that
//     blocked, stopped or failed is a warning naming the hook;
//   - a call a PreToolUse hook refused ("Command blocked by PreToolUse
//     hook: <reason>. Command: <command>") did not run: denied.
func TestNewestRecords(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	legacy := func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
	hook := func(event, status, entries string) string {
		return ev(`{"type":"hook_completed","turn_id":"u1","run":{"id":"h1","event_name":"` + event + `","handler_type":"command","execution_mode":"sync","scope":"turn","source_path":"/w/.codex/hooks.json","source":"project","display_order":0,"status":"` + status + `","status_message":null,"started_at":1,"completed_at":2,"duration_ms":5,"entries":` + entries + `}}`)
	}
	var (
		meta      = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.170.0"}}`
		start     = ev(`{"type":"task_started","turn_id":"u1"}`)
		prompt    = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"clean the build"}]}`)
		partial   = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Cleaning up."}]}`)
		answer    = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`)
		failedEnd = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"Cleaning up.","error":{"message":"stream disconnected before completion: error sending request","codex_error_info":"response_stream_disconnected"}}`)
		failedNil = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":null,"error":{"message":"You've hit your usage limit.","codex_error_info":"usage_limit_exceeded"}}`)
		errEv     = ev(`{"type":"error","message":"You've hit your usage limit.","codex_error_info":"usage_limit_exceeded"}`)
		okEnd     = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"Done.","error":null}`)
		call      = item(`{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rm -rf build\"}","call_id":"c1"}`)
		blocked   = item(`{"type":"function_call_output","call_id":"c1","output":"Command blocked by PreToolUse hook: BLOCKED: rm -rf is not allowed. Command: rm -rf build"}`)
		ran       = item(`{"type":"function_call_output","call_id":"c1","output":"Process exited with code 0\nOutput:\n"}`)
	)
	const blockedOut = "Command blocked by PreToolUse hook: BLOCKED: rm -rf is not allowed. Command: rm -rf build"
	type toolWant struct{ status, output string }
	tests := []struct {
		name     string
		lines    []string
		status   string
		err      string   // a substring of the step's error
		warnings []string // substrings, one warning each
		tools    []toolWant
	}{
		{name: "a completion stating an error after a partial answer", lines: []string{meta, start, prompt, partial, failedEnd},
			status: "error", err: "stream disconnected before completion"},
		{name: "a completion stating an error, no answer", lines: []string{meta, start, prompt, failedNil},
			status: "error", err: "usage limit"},
		{name: "the error event, then the completion stating it", lines: []string{meta, start, prompt, errEv, failedNil},
			status: "error", err: "usage limit"},
		{name: "a failed turn, then one that completed", lines: []string{meta, start, prompt, partial, failedEnd, start, prompt, answer, okEnd},
			status: "ok"},
		{name: "a completion with a null error", lines: []string{meta, start, prompt, answer, okEnd},
			status: "ok"},
		{name: "the legacy stream's completion stating an error", lines: []string{
			legacy(`{"type":"task_started"}`),
			legacy(`{"type":"agent_message","message":"Cleaning up."}`),
			legacy(`{"type":"task_complete","last_agent_message":"Cleaning up.","error":{"message":"stream disconnected before completion","codex_error_info":null}}`)},
			status: "error", err: "stream disconnected before completion"},
		{name: "hooks that completed say nothing", lines: []string{meta, start, hook("session_start", "completed", `[]`), hook("user_prompt_submit", "completed", `[{"kind":"context","text":"repo rules"}]`), prompt, answer, okEnd},
			status: "ok"},
		{name: "a call a PreToolUse hook blocked is denied", lines: []string{meta, start, prompt, call, hook("pre_tool_use", "blocked", `[{"kind":"feedback","text":"BLOCKED: rm -rf is not allowed"}]`), blocked, answer, okEnd},
			status: "ok", warnings: []string{"codex hook pre_tool_use blocked: BLOCKED: rm -rf is not allowed"}, tools: []toolWant{{"denied", blockedOut}}},
		{name: "a blocked call without its hook's record", lines: []string{meta, start, prompt, call, blocked, answer, okEnd},
			status: "ok", tools: []toolWant{{"denied", blockedOut}}},
		{name: "a hook that failed and one that stopped the turn", lines: []string{meta, start, prompt, call, ran, hook("post_tool_use", "failed", `[{"kind":"error","text":"hook exited with code 1"}]`), answer, hook("stop", "stopped", `[{"kind":"stop","text":"tests must pass first"}]`), okEnd},
			status: "ok", warnings: []string{"codex hook post_tool_use failed: hook exited with code 1", "codex hook stop stopped: tests must pass first"}, tools: []toolWant{{"ok", "Process exited with code 0\nOutput:\n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			r := o.Result
			if r.Status != tt.status || !strings.Contains(r.Error, tt.err) {
				t.Errorf("status %q, error %q; want %q with %q", r.Status, r.Error, tt.status, tt.err)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
			if len(r.Warnings) != len(tt.warnings) {
				t.Errorf("warnings %q; want %d", r.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if i < len(r.Warnings) && !strings.Contains(r.Warnings[i], w) {
					t.Errorf("warning %d %q; want it to say %q", i, r.Warnings[i], w)
				}
			}
			_, results := o.Tools()
			if len(results) != len(tt.tools) {
				t.Fatalf("%d results; want %d", len(results), len(tt.tools))
			}
			for i, w := range tt.tools {
				if results[i].Status != w.status || results[i].Output != w.output {
					t.Errorf("result %d: %q %q; want %q %q", i, results[i].Status, results[i].Output, w.status, w.output)
				}
			}
		})
	}
}
