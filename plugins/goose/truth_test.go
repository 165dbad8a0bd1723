//go:build !wasip1

package goose_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/transcript"
)

// msgRow is one messages row of sessions.db as the host hands it (the
// shape session_manager.rs's add_message writes).
func msgRow(id int, role, content, metadata string) string {
	if metadata == "" {
		metadata = `{"userVisible":true,"agentVisible":true}`
	}
	return fmt.Sprintf(`{"$twasm":"row","table":"messages","key":"msg_%d","version":%d,"row":{"key":"msg_%d","time_ms":1762077600000,"id":%d,"message_id":"msg_%d","session_id":"20251102_1","role":%q,"content_json":%s,"created_timestamp":1762077600,"metadata_json":%s}}`,
		id, id, id, id, id, role, content, metadata)
}

// TestTruth: what Goose writes for a failed turn, a refused call and the
// model that answered, as agents/agent.rs, agents/tool_execution.rs and
// conversation/message (block/goose 865e4a0) write them, reaches the
// step's errors, the result's status and the message's model.
func TestTruth(t *testing.T) {
	facts := `{"$twasm":"source","store":"Goose","path":"sessions.db","name":"sessions.db","size":1,"mtime":"2025-11-02T10:00:00Z","session":"20251102_1"}`
	session := `{"$twasm":"row","table":"sessions","key":"20251102_1","version":1,"row":{"version":1,"id":"20251102_1","working_dir":"/p","model_config_json":{"model_name":"claude-sonnet-4-5"},"parent_session_id":null}}`
	prompt := msgRow(1, "user", `[{"type":"text","text":"go"}]`, "")
	call := msgRow(2, "assistant", `[{"type":"toolRequest","id":"c1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"rm -rf build"}}}}]`, "")
	type want struct {
		errors []string // code: message of each provider error
		status string   // c1's result status ("" for none)
		model  string   // the last assistant message's model (none: a message of no block makes none)
		// thinking is the last assistant message's thinking, when the
		// case names one (then nothing may be unmapped).
		thinking string
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  want
	}{
		{"credits exhausted ends the turn: a provider error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"systemNotification","notificationType":"creditsExhausted","msg":"Please add credits to your account, then resend your message to continue.","data":{"top_up_url":"https://example.invalid/billing"}}]`, `{"userVisible":true,"agentVisible":false}`)},
			want{errors: []string{"credits_exhausted: Please add credits to your account, then resend your message to continue."}}},
		{"the context still too long after compacting: a provider error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"systemNotification","notificationType":"inlineMessage","msg":"Unable to continue: Context limit still exceeded after compaction. Try using a shorter message, a model with a larger context window, or start a new session."}]`, `{"userVisible":true,"agentVisible":false}`)},
			want{errors: []string{"context_length_exceeded: Unable to continue: Context limit still exceeded after compaction. Try using a shorter message, a model with a larger context window, or start a new session."}}},
		{"an inline notice is no error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"systemNotification","notificationType":"inlineMessage","msg":"Context limit reached. Compacting to continue conversation..."}]`, "")},
			want{}},
		{"the general provider error text: a provider error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"text","text":"Ran into this error: Request failed: Server error (500 Internal Server Error).\n\nPlease retry if you think this is a transient or recoverable error."}]`, "")},
			want{errors: []string{": Request failed: Server error (500 Internal Server Error)"}, model: "claude-sonnet-4-5"}},
		{"a network error text: a provider error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"text","text":"Network error: connection reset\n\nPlease resend your message to try again."}]`, "")},
			want{errors: []string{"network_error: Network error: connection reset"}, model: "claude-sonnet-4-5"}},
		{"a refusal text: a provider error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"text","text":"The provider refused this request.\n\nflagged\n\nPlease start a new session to continue — resending this conversation is likely to be refused again."}]`, "")},
			want{errors: []string{"refusal: The provider refused this request.\n\nflagged\n\nPlease start a new session to continue — resending this conversation is likely to be refused again."}, model: "claude-sonnet-4-5"}},
		{"the model quoting the template is no error",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"text","text":"Goose says \"Ran into this error: X\" when a request fails."}]`, "")},
			want{model: "claude-sonnet-4-5"}},
		{"a call the user declined, as older Goose wrote it (the list alone): denied",
			[]string{prompt, call, msgRow(3, "user", `[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":[{"type":"text","text":"The user has declined to run this tool. DO NOT attempt to call this tool again. If there are no alternative methods to proceed, clearly explain the situation and STOP."}]}}]`, "")},
			want{status: "denied", model: "claude-sonnet-4-5"}},
		{"a call the user declined, marked isError: denied",
			[]string{prompt, call, msgRow(3, "user", `[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"The user has declined to run this tool. DO NOT attempt to call this tool again. If there are no alternative methods to proceed, clearly explain the situation and STOP."}],"isError":true}}}]`, "")},
			want{status: "denied", model: "claude-sonnet-4-5"}},
		{"a call skipped in chat mode: denied",
			[]string{prompt, call, msgRow(3, "user", `[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"Let the user know the tool call was skipped in goose chat mode. DO NOT apologize for skipping the tool call. DO NOT say sorry. Provide an explanation of what the tool call would do, structured as a plan for the user. Again, DO NOT apologize. **Example Plan:**\n1. **Identify Task Scope**"}],"isError":false}}}]`, "")},
			want{status: "denied", model: "claude-sonnet-4-5"}},
		{"a call that ran is ok",
			[]string{prompt, call, msgRow(3, "user", `[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"done"}],"isError":false}}}]`, "")},
			want{status: "ok", model: "claude-sonnet-4-5"}},
		{"the model the provider resolved the request to names the message",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"text","text":"hi"}]`, `{"userVisible":true,"agentVisible":true,"inference":{"provider":"openrouter","requestedModel":"anthropic/claude-sonnet-4.5","resolvedModel":"anthropic/claude-4.5-sonnet-20250929"}}`)},
			want{model: "anthropic/claude-4.5-sonnet-20250929"}},
		{"an older Goose's reasoning item is thinking, no unmapped item",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"reasoning","text":"The user wants a listing."},{"type":"text","text":"Here."}]`, "")},
			want{model: "claude-sonnet-4-5", thinking: "The user wants a listing."}},
		{"else the model requested",
			[]string{prompt, msgRow(2, "assistant", `[{"type":"text","text":"hi"}]`, `{"userVisible":true,"agentVisible":true,"inference":{"provider":"openai","requestedModel":"gpt-5"}}`)},
			want{model: "gpt-5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := strings.Join(append([]string{facts, session}, tc.lines...), "\n") + "\n"
			o := plugintest.Run(t, goose.Plugin, []byte(raw), normalize.Options{Provider: "goose"})
			var errs []string
			for _, e := range o.Result.Errors {
				errs = append(errs, e.Code+": "+e.Message)
			}
			if strings.Join(errs, "|") != strings.Join(tc.want.errors, "|") {
				t.Errorf("errors %q, want %q", errs, tc.want.errors)
			}
			st, _ := o.ResultStatus("c1")
			if st != tc.want.status {
				t.Errorf("c1's status %q, want %q", st, tc.want.status)
			}
			model := ""
			for _, it := range o.Sink.Items {
				if it.Event != nil && it.Event.Type == transcript.MessageAssistant {
					model = it.Event.Message().Model
				}
			}
			if tc.want.thinking != "" {
				if th := strings.Join(o.Texts(plugintest.Assistant), "|"); !strings.Contains(th, tc.want.thinking) || len(o.Result.Unmapped) != 0 {
					t.Errorf("texts %q unmapped %v, want the thinking %q and nothing unmapped", th, o.Result.Unmapped, tc.want.thinking)
				}
			}
			if model != tc.want.model {
				t.Errorf("model %q, want %q", model, tc.want.model)
			}
		})
	}
}
