//go:build !wasip1

package codex_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestRolloutAgentMessages: a message between agents (multi-agent v2:
// the agent_message response item, the older inter_agent_communication
// record, or the assistant-role message holding its JSON) that another
// agent sent this thread is its turn's input: a sub-agent's turn whose
// task the model never answered is an error, not ok. A message the
// thread wrote itself (author = its own path) is not input, so a parent
// whose own message is recorded after its answer stays ok, and so does a
// parent given a child's notice once it has answered.
func TestRolloutAgentMessages(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	var (
		childMeta = `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","cli_version":"0.158.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":1,"agent_path":"/root/worker","agent_nickname":"Ada","agent_role":"worker"}}}}}`
		rootMeta  = `{"timestamp":"t","type":"session_meta","payload":{"id":"p1","cli_version":"0.158.0","source":"cli"}}`
		start     = ev(`{"type":"task_started","turn_id":"u1"}`)
		task      = item(`{"type":"agent_message","author":"/root","recipient":"/root/worker","content":[{"type":"input_text","text":"count the tests"}]}`)
		taskRec   = `{"timestamp":"t","type":"inter_agent_communication","payload":{"author":"/root","recipient":"/root/worker","other_recipients":[],"content":"count the tests","trigger_turn":true}}`
		taskJSON  = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"{\"author\":\"/root\",\"recipient\":\"/root/worker\",\"other_recipients\":[],\"content\":\"count the tests\",\"trigger_turn\":true}"}],"phase":"commentary"}`)
		secret    = item(`{"type":"agent_message","author":"/root","recipient":"/root/worker","content":[{"type":"encrypted_content","encrypted_content":"gAAA"}]}`)
		answer    = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"42 tests."}]}`)
		prompt    = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"spawn a worker"}]}`)
		own       = item(`{"type":"agent_message","author":"/root","recipient":"/root/worker","content":[{"type":"input_text","text":"count the tests"}]}`)
		notice    = item(`{"type":"agent_message","author":"/root/worker","recipient":"/root","content":[{"type":"input_text","text":"worker finished: 42 tests"}]}`)
		noAnswer  = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":null}`)
		done      = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"42 tests."}`)
	)
	tests := []struct {
		name   string
		lines  []string
		status string
		err    string // a substring of the step's error
		input  string // the text of the first message.user, "" for none
		origin transcript.Origin
	}{
		{"sub-agent failed on its task", []string{childMeta, start, task, noAnswer}, "error", "without an answer from the model", "count the tests", transcript.OriginPrompt},
		{"sub-agent failed, older record", []string{childMeta, start, taskRec, noAnswer}, "error", "without an answer from the model", "count the tests", transcript.OriginPrompt},
		{"sub-agent failed, task as assistant JSON", []string{childMeta, start, taskJSON, noAnswer}, "error", "without an answer from the model", "count the tests", transcript.OriginPrompt},
		{"sub-agent failed, record and its item once", []string{childMeta, start, taskRec, taskJSON, noAnswer}, "error", "without an answer from the model", "count the tests", transcript.OriginPrompt},
		{"sub-agent failed on an encrypted task", []string{childMeta, start, secret, noAnswer}, "error", "without an answer from the model", "", ""},
		{"sub-agent answered", []string{childMeta, start, task, answer, done}, "ok", "", "count the tests", transcript.OriginPrompt},
		{"sub-agent answered, task as assistant JSON", []string{childMeta, start, taskJSON, answer, noAnswer}, "ok", "", "count the tests", transcript.OriginPrompt},
		{"parent's own message after its answer", []string{rootMeta, start, prompt, answer, own, noAnswer}, "ok", "", "spawn a worker", transcript.OriginPrompt},
		{"parent given a child's notice after answering", []string{rootMeta, start, prompt, answer, notice, done}, "ok", "", "spawn a worker", transcript.OriginPrompt},
		{"parent woken by a child's notice, no answer", []string{rootMeta, start, notice, noAnswer}, "error", "without an answer from the model", "worker finished: 42 tests", transcript.OriginInjected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			if o.Result.Status != tt.status || !strings.Contains(o.Result.Error, tt.err) {
				t.Errorf("status %q, error %q; want %q with %q", o.Result.Status, o.Result.Error, tt.status, tt.err)
			}
			var users []transcript.Block
			same := 0 // inputs with the expected text: one, never twice
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageUser {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					if b.Origin != transcript.OriginSystemPrompt {
						users = append(users, b)
						if b.Text == tt.input {
							same++
						}
					}
				}
			}
			if tt.input == "" {
				if len(users) != 0 {
					t.Errorf("input %q; want none", users[0].Text)
				}
				return
			}
			if len(users) == 0 || same != 1 || users[0].Text != tt.input || users[0].Origin != tt.origin {
				for _, b := range users {
					t.Logf("input %q origin %q", b.Text, b.Origin)
				}
				t.Errorf("want one input %q with origin %q", tt.input, tt.origin)
			}
		})
	}
}
