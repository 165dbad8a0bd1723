//go:build !wasip1

package goose_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

// TestSessionExport: goose session export --format json (goose-cli's
// commands/session.rs: the session, its messages in conversation, printed
// by serde_json::to_string_pretty) is read: its messages with their calls
// and results, the session's accumulated counters, its model_config's
// model and working directory; a copy's messages from before the session
// was created are the original's. Before, every line of the document was
// unmapped (non_json): no message, no usage, status incomplete.
func TestSessionExport(t *testing.T) {
	msgs := `[
    {"id": "msg_1", "role": "user", "created": 1762161300, "content": [{"type": "text", "text": "Run the tests."}], "metadata": {"userVisible": true, "agentVisible": true}},
    {"id": "msg_2", "role": "assistant", "created": 1762161305, "content": [{"type": "toolRequest", "id": "c1", "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": "cargo test"}}}}], "metadata": {"userVisible": true, "agentVisible": true}},
    {"id": "msg_3", "role": "user", "created": 1762161320, "content": [{"type": "toolResponse", "id": "c1", "toolResult": {"status": "error", "error": "Command failed with exit code 101"}}], "metadata": {"userVisible": true, "agentVisible": true}},
    {"id": "msg_4", "role": "assistant", "created": 1762161330, "content": [{"type": "text", "text": "Two tests fail."}], "metadata": {"userVisible": true, "agentVisible": true}}
  ]`
	export := func(created, conversation string) string {
		return "{\n  \"id\": \"20251103_4\",\n  \"working_dir\": \"/home/me/proj\",\n  \"name\": \"tests\",\n  \"created_at\": \"" + created +
			"\",\n  \"updated_at\": \"2025-11-03T09:16:10Z\",\n  \"accumulated_total_tokens\": 21600,\n  \"accumulated_input_tokens\": 21000,\n  \"accumulated_output_tokens\": 600,\n  \"conversation\": " +
			conversation + ",\n  \"message_count\": 4,\n  \"model_config\": {\n    \"model_name\": \"claude-sonnet-4-5\"\n  }\n}\n"
	}
	for _, tc := range []struct {
		name, raw string
		status    string // c1's result status
		texts     string
		input     int64
	}{
		{"a session", export("2025-11-03T09:15:00Z", msgs), "error", "Two tests fail.", 21000},
		{"a copy made after the first three messages: they are the original's", export("2025-11-03T09:15:25Z", msgs), "", "Two tests fail.", 21000},
		{"no conversation", export("2025-11-03T09:15:00Z", "null"), "", "", 21000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, goose.Plugin, []byte(tc.raw), normalize.Options{Provider: "goose"})
			if o.Result.Format != "export" || o.Result.Model != "claude-sonnet-4-5" || o.Result.Cwd != "/home/me/proj" || o.Result.SessionID != "20251103_4" {
				t.Errorf("format %q model %q cwd %q session %q", o.Result.Format, o.Result.Model, o.Result.Cwd, o.Result.SessionID)
			}
			if st, _ := o.ResultStatus("c1"); st != tc.status {
				t.Errorf("c1's status %q, want %q", st, tc.status)
			}
			if got := strings.Join(o.Texts(plugintest.Assistant), ""); got != tc.texts {
				t.Errorf("assistant texts %q, want %q", got, tc.texts)
			}
			in := int64(-1)
			if u := o.Result.Usage; u != nil && u.InputTokens != nil {
				in = *u.InputTokens
			}
			if in != tc.input {
				t.Errorf("input tokens %d, want %d", in, tc.input)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}
