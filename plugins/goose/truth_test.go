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

// TestOlderItems: the content items of Goose before systemNotification
// (message.rs's MessageContent, block/goose 1f2f6b1), as its session
// files and early sessions.db hold them: contextLengthExceeded {msg} is
// the turn Goose ended on the provider's refusal of a context too long
// (agent.rs, ProviderError::ContextLengthExceeded): a provider error;
// summarizationRequested {msg} is its notice that it summarized the
// conversation: a warning. Neither is left unmapped.
func TestOlderItems(t *testing.T) {
	session := `{"working_dir":"/home/me/proj","description":"fix it","schedule_id":null,"message_count":2,"total_tokens":null,"input_tokens":null,"output_tokens":null}`
	prompt := `{"id":null,"role":"user","created":1745000000,"content":[{"type":"text","text":"Read every file."}]}`
	for _, tc := range []struct {
		name, item, err, warn string
	}{
		{"context length exceeded", `{"type":"contextLengthExceeded","msg":"The context length of the model has been exceeded. Please start a new session and try again."}`,
			"context_length_exceeded: The context length of the model has been exceeded. Please start a new session and try again.", ""},
		{"summarization requested", `{"type":"summarizationRequested","msg":"Goose summarized messages for you."}`,
			"", "Goose: Goose summarized messages for you."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := strings.Join([]string{session, prompt, `{"id":null,"role":"assistant","created":1745000002,"content":[` + tc.item + `]}`}, "\n") + "\n"
			o := plugintest.Run(t, goose.Plugin, []byte(raw), normalize.Options{Provider: "goose"})
			var errs []string
			for _, e := range o.Result.Errors {
				errs = append(errs, e.Code+": "+e.Message)
			}
			if strings.Join(errs, "|") != tc.err {
				t.Errorf("errors %q, want %q", errs, tc.err)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(o.Result.Warnings, "|"), tc.warn) {
				t.Errorf("warnings %q, want %q", o.Result.Warnings, tc.warn)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}

// TestPlainCountersLastCall: a session record's plain counters are the
// last model call's usage, not the session's: every Goose overwrites
// them with each call's (update_session_metrics: metadata.total_tokens =
// usage.usage.total_tokens, and before it the reply loop of the agent,
// in block/goose's 2025 sources), and a
// session file of a Goose before the accumulated counters holds only
// those. Such a record states no session usage (a warning gives the
// figures); the accumulated counters, where there are any, are the
// session's.
func TestPlainCountersLastCall(t *testing.T) {
	prompt := `{"id":null,"role":"user","created":1745000000,"content":[{"type":"text","text":"Fix it."}]}`
	for _, tc := range []struct {
		name, meta string
		input      int64 // the step's input tokens (-1: no usage)
		warn       string
	}{
		{"plain counters only", `{"working_dir":"/p","description":"fix","schedule_id":null,"message_count":9,"total_tokens":5200,"input_tokens":5000,"output_tokens":200}`,
			-1, "Goose kept only its last model call's usage for this session (input 5000, output 200, total 5200)"},
		{"accumulated counters too", `{"working_dir":"/p","description":"fix","schedule_id":null,"message_count":9,"total_tokens":5200,"input_tokens":5000,"output_tokens":200,"accumulated_total_tokens":9100,"accumulated_input_tokens":8700,"accumulated_output_tokens":400}`,
			8700, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, goose.Plugin, []byte(tc.meta+"\n"+prompt+"\n"), normalize.Options{Provider: "goose"})
			in := int64(-1)
			if u := o.Result.Usage; u != nil && u.InputTokens != nil {
				in = *u.InputTokens
			}
			if in != tc.input {
				t.Errorf("input tokens %d, want %d", in, tc.input)
			}
			if w := strings.Join(o.Result.Warnings, "|"); !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

// TestShellOutcome: Goose's shell tool (platform_extensions/developer/
// shell.rs) marks a failed command isError, states its exit code in the
// structured content (absent when it killed the command) and ends the
// text with "Command exited with code N" or "Command timed out after N
// seconds": the exit code is the result's, a timeout cancelled.
func TestShellOutcome(t *testing.T) {
	facts := `{"$twasm":"source","store":"Goose","path":"sessions.db","name":"sessions.db","size":1,"mtime":"2025-11-02T10:00:00Z","session":"20251102_1"}`
	session := `{"$twasm":"row","table":"sessions","key":"20251102_1","version":1,"row":{"version":1,"id":"20251102_1","working_dir":"/p","model_config_json":{"model_name":"m"},"parent_session_id":null}}`
	call := msgRow(2, "assistant", `[{"type":"toolRequest","id":"c1","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"make test"}}}}]`, "")
	for _, tc := range []struct {
		name, value string
		status      string
		exit        int // -1: none
		err         string
	}{
		{"exited 2 (structured)", `{"content":[{"type":"text","text":"boom\n\nCommand exited with code 2"}],"structuredContent":{"stdout":"","stderr":"boom","exit_code":2},"isError":true}`, "error", 2, "Command exited with code 2"},
		{"exited 3 (text alone)", `{"content":[{"type":"text","text":"boom\n\nCommand exited with code 3"}],"isError":true}`, "error", 3, "Command exited with code 3"},
		{"timed out", `{"content":[{"type":"text","text":"started\n\nCommand timed out after 30 seconds"}],"structuredContent":{"stdout":"started","stderr":""},"isError":true}`, "cancelled", -1, "Command timed out after 30 seconds"},
		{"timed out (no timeout given)", `{"content":[{"type":"text","text":"started\n\nCommand timed out"}],"isError":true}`, "cancelled", -1, "Command timed out"},
		{"exited 0", `{"content":[{"type":"text","text":"ok"}],"structuredContent":{"stdout":"ok","stderr":"","exit_code":0},"isError":false}`, "ok", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := msgRow(3, "user", `[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":`+tc.value+`}}]`, "")
			raw := strings.Join([]string{facts, session, call, resp}, "\n") + "\n"
			o := plugintest.Run(t, goose.Plugin, []byte(raw), normalize.Options{Provider: "goose"})
			_, rs := o.Tools()
			if len(rs) != 1 {
				t.Fatalf("results %+v, want one", rs)
			}
			r := rs[0]
			if r.Status != tc.status || !strings.Contains(r.Error, tc.err) {
				t.Errorf("status %q error %q, want %q and %q", r.Status, r.Error, tc.status, tc.err)
			}
			if got := exitOf(r); got != tc.exit {
				t.Errorf("exit code %d, want %d", got, tc.exit)
			}
		})
	}
}

func exitOf(r *transcript.ToolPayload) int {
	if r.ExitCode == nil {
		return -1
	}
	return *r.ExitCode
}
