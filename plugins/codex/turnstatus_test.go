//go:build !wasip1

package codex_test

import (
	"strings"
	"testing"
)

// TestRolloutTurnStatus: Codex writes no error event to a rollout (its
// persistence policy leaves Error and StreamError out), so a turn that
// failed ends with the task_complete of a turn that succeeded, its
// last_agent_message null. Such a turn, in which the model's input (a
// prompt, a call, a result) got no answer, or that recorded nothing at
// all (a compaction that failed before the input was recorded), is an
// error, never ok; an interrupted one (turn_aborted) is incomplete; a
// turn that asked the model nothing (a /compact, a user's shell command)
// or that the model answered is ok.
func TestRolloutTurnStatus(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	var (
		meta     = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.158.0"}}`
		start    = ev(`{"type":"task_started","turn_id":"u1","model_context_window":258400}`)
		prompt   = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"run the tests"}]}`)
		promptEv = ev(`{"type":"user_message","message":"run the tests","images":[]}`)
		image    = item(`{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}`)
		call     = item(`{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go test\"}","call_id":"c1"}`)
		output   = item(`{"type":"function_call_output","call_id":"c1","output":"Process exited with code 0\nOutput:\nok\n"}`)
		answer   = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All pass."}]}`)
		answerEv = ev(`{"type":"agent_message","message":"All pass."}`)
		shell    = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_shell_command>\n<command>\nls\n</command>\n</user_shell_command>"}]}`)
		errEv    = ev(`{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}`)
		aborted  = ev(`{"type":"turn_aborted","reason":"interrupted"}`)
		noAnswer = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":null}`)
		absent   = ev(`{"type":"task_complete","turn_id":"u1"}`)
		done     = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"All pass."}`)
	)
	tests := []struct {
		name   string
		lines  []string
		status string
		err    string // a substring of the step's error
	}{
		{"failed before any output", []string{meta, start, prompt, promptEv, noAnswer}, "error", "without an answer from the model"},
		{"failed, prompt only as an event", []string{meta, start, promptEv, absent}, "error", "without an answer from the model"},
		{"failed on an image prompt", []string{meta, start, image, noAnswer}, "error", "without an answer from the model"},
		{"failed after a tool result", []string{meta, start, prompt, answerEv, call, output, noAnswer}, "error", "without an answer from the model"},
		{"failed with a call pending", []string{meta, start, prompt, call, noAnswer}, "error", "without an answer from the model"},
		{"failed after an answered turn", []string{meta, start, prompt, answer, done, start, prompt, call, output, noAnswer}, "error", "without an answer from the model"},
		{"an error event keeps its message", []string{meta, start, prompt, errEv, noAnswer}, "error", "429 Too Many Requests"},
		{"failed before its input was recorded", []string{meta, start, noAnswer}, "error", "before its input was recorded"},
		{"failed before its input, usage and goal state only", []string{meta, start, ev(`{"type":"token_count","info":null}`), ev(`{"type":"thread_goal_updated","goal":{"status":"usage_limited"}}`), absent}, "error", "before its input was recorded"},
		{"interrupted", []string{meta, start, prompt, call, output, aborted}, "incomplete", "interrupted"},
		{"answered", []string{meta, start, prompt, call, output, answer, answerEv, done}, "ok", ""},
		{"answered, no last_agent_message", []string{meta, start, prompt, answer, noAnswer}, "ok", ""},
		{"answered only as an event", []string{meta, start, promptEv, answerEv, noAnswer}, "ok", ""},
		{"a user's shell command", []string{meta, start, shell, noAnswer}, "ok", ""},
		{"a compaction", []string{meta, start, `{"timestamp":"t","type":"compacted","payload":{"message":"summary"}}`, ev(`{"type":"context_compacted"}`), noAnswer}, "ok", ""},
		{"failed, then answered", []string{meta, start, prompt, noAnswer, start, prompt, answer, done}, "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			if o.Result.Status != tt.status || !strings.Contains(o.Result.Error, tt.err) {
				t.Errorf("status %q, error %q; want %q with %q", o.Result.Status, o.Result.Error, tt.status, tt.err)
			}
		})
	}
}
