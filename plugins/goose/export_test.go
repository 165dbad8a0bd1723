//go:build !wasip1

package goose_test

import (
	"strconv"
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

// TestSessionExportNestedUsage: since block/goose PR #9752 (2026-06,
// "track cache tokens") a Session carries its counters as Usage objects,
// usage (the last call's) and accumulated_usage (the session's), each
// {input_tokens, output_tokens, total_tokens, cache_read_input_tokens,
// cache_write_input_tokens}; sessions.db keeps its flat columns, but
// goose session export serializes the struct, so an export of Goose 1.4x
// has no flat accumulated_* field. Its accumulated_usage is the session's
// usage; before, such an export reported none, silently.
func TestSessionExportNestedUsage(t *testing.T) {
	doc := func(counters string) string {
		return "{\n  \"id\": \"20260819_1\",\n  \"working_dir\": \"/home/me/proj\",\n  \"name\": \"x\",\n  \"created_at\": \"2026-08-19T09:00:00Z\",\n" +
			counters + "  \"accumulated_cost\": null,\n  \"conversation\": [],\n  \"message_count\": 0\n}\n"
	}
	i := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name, raw                   string
		in, out, read, write, total *int64
		warn                        string
	}{
		{"1.4x: nested usage and accumulated_usage", doc(
			"  \"usage\": {\"input_tokens\": 9000, \"output_tokens\": 50, \"total_tokens\": 9050, \"cache_read_input_tokens\": 8000, \"cache_write_input_tokens\": 900},\n" +
				"  \"accumulated_usage\": {\"input_tokens\": 60000, \"output_tokens\": 700, \"total_tokens\": 60700, \"cache_read_input_tokens\": 50000, \"cache_write_input_tokens\": 9000},\n"),
			i(60000), i(700), i(50000), i(9000), i(60700), ""},
		{"1.4x: the last call's usage alone", doc(
			"  \"usage\": {\"input_tokens\": 9000, \"output_tokens\": 50, \"total_tokens\": 9050},\n"),
			nil, nil, nil, nil, nil, "input 9000, output 50, total 9050"},
		{"flat counters, as before", doc(
			"  \"accumulated_total_tokens\": 21600,\n  \"accumulated_input_tokens\": 21000,\n  \"accumulated_output_tokens\": 600,\n"),
			i(21000), i(600), nil, nil, i(21600), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, goose.Plugin, []byte(tc.raw), normalize.Options{Provider: "goose"})
			if o.Result.Format != "export" {
				t.Fatalf("format %q", o.Result.Format)
			}
			u := o.Result.Usage
			get := func(f func() *int64) *int64 {
				if u == nil {
					return nil
				}
				return f()
			}
			for _, c := range []struct {
				name      string
				got, want *int64
			}{
				{"input", get(func() *int64 { return u.InputTokens }), tc.in},
				{"output", get(func() *int64 { return u.OutputTokens }), tc.out},
				{"cache read", get(func() *int64 { return u.CacheReadTokens }), tc.read},
				{"cache write", get(func() *int64 { return u.CacheWriteTokens }), tc.write},
				{"total", get(func() *int64 { return u.TotalTokens }), tc.total},
			} {
				if (c.got == nil) != (c.want == nil) || c.got != nil && *c.got != *c.want {
					t.Errorf("%s %s, want %s", c.name, show(c.got), show(c.want))
				}
			}
			if tc.warn != "" && !strings.Contains(strings.Join(o.Result.Warnings, "\n"), tc.warn) {
				t.Errorf("warnings %q, want one naming %q", o.Result.Warnings, tc.warn)
			}
		})
	}
}

func show(p *int64) string {
	if p == nil {
		return "absent"
	}
	return strconv.FormatInt(*p, 10)
}

// TestCountersThoughtsUnstated: Goose's Google format counts a call's
// output as the candidates alone and its total as the API's, thoughts
// included (providers/formats/google.rs get_usage: candidatesTokenCount
// and totalTokenCount), so a session that used a thinking Gemini model
// states a total above its input and output, the thoughts in none of
// them. Every output token is then not stated: the output is left out,
// with a warning giving Goose's figures, never the answer's part passed
// off as the whole. Where the total adds up the output stands. The same
// holds wherever Goose states its counters: a session record (file or
// row), an export, goose run's complete event.
func TestCountersThoughtsUnstated(t *testing.T) {
	const record = `{"working_dir":"/p","description":"x","message_count":2,` +
		`"accumulated_total_tokens":%d,"accumulated_input_tokens":9000,"accumulated_output_tokens":300}` + "\n" +
		`{"role":"user","created":1762161300,"content":[{"type":"text","text":"hi"}]}` + "\n"
	const stream = `{"type":"message","message":{"id":"m1","role":"assistant","created":1762161305,"content":[{"type":"text","text":"hi"}]}}` + "\n" +
		`{"type":"complete","total_tokens":%d,"input_tokens":9000,"output_tokens":300}` + "\n"
	for _, tc := range []struct {
		name, format string
		total        int64
		output       *int64
		warn         bool
	}{
		{"session file: thoughts in the total only", record, 9800, nil, true},
		{"session file: the total adds up", record, 9300, new(int64(300)), false},
		{"stream complete: thoughts in the total only", stream, 9800, nil, true},
		{"stream complete: the total adds up", stream, 9300, new(int64(300)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := strings.Replace(tc.format, "%d", strconv.FormatInt(tc.total, 10), 1)
			o := plugintest.Run(t, goose.Plugin, []byte(raw), normalize.Options{Provider: "goose"})
			u := o.Result.Usage
			if u == nil || u.InputTokens == nil || *u.InputTokens != 9000 || u.TotalTokens == nil || *u.TotalTokens != tc.total {
				t.Fatalf("usage %+v; want input 9000, total %d", u, tc.total)
			}
			if (u.OutputTokens == nil) != (tc.output == nil) || u.OutputTokens != nil && *u.OutputTokens != *tc.output {
				t.Errorf("output %s, want %s", show(u.OutputTokens), show(tc.output))
			}
			warned := strings.Contains(strings.Join(o.Result.Warnings, "\n"), "output_tokens left out")
			if warned != tc.warn {
				t.Errorf("warnings %q; want the output's left out: %v", o.Result.Warnings, tc.warn)
			}
		})
	}
}
