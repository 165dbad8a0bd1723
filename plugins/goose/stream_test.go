//go:build !wasip1

package goose_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

// streamMsg is one message event of goose run --output-format stream-json
// (goose-cli's session/mod.rs StreamEvent::Message), as Goose 1.25 and
// 1.44 print one: the message object a session stores, under "message".
func streamMsg(id, role string, created int, content string) string {
	idv := `null`
	if id != "" {
		idv = `"` + id + `"`
	}
	return `{"type":"message","message":{"id":` + idv + `,"role":"` + role + `","created":` + itoa(created) + `,"content":` + content + `,"metadata":{"userVisible":true,"agentVisible":true}}}`
}

func itoa(n int) string {
	var b []byte
	for n >= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(append([]byte{byte('0' + n)}, b...))
}

// TestStreamJSON: the output of goose run --output-format stream-json is
// read: an answer streamed as chunks of one id is one message with the
// whole text (not a message a chunk), calls and their results with their
// status, the complete event's usage (the session's counters, cached
// tokens counted in the input), its end ok, an error event an error even
// though complete follows, and a run cut before complete incomplete.
// Every line was unmapped before (the plugin read only sessions.db rows
// and session files): no message, no call, status incomplete.
func TestStreamJSON(t *testing.T) {
	chunk := func(text string) string {
		return streamMsg("chatcmpl-1", "assistant", 1771715535, `[{"type":"text","text":"`+text+`"}]`)
	}
	call := streamMsg("chatcmpl-1", "assistant", 1771715536, `[{"type":"toolRequest","id":"call_1","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"false"}}},"_meta":{"goose_extension":"developer"}}]`)
	failed := streamMsg("msg_2", "user", 1771715537, `[{"type":"toolResponse","id":"call_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"exit 1"}],"structuredContent":{"stdout":"","exit_code":1},"isError":true}}}]`)
	ran := streamMsg("msg_2", "user", 1771715537, `[{"type":"toolResponse","id":"call_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"hi-from-tool"}],"structuredContent":{"stdout":"hi-from-tool","exit_code":0},"isError":false}}}]`)
	complete := `{"type":"complete","total_tokens":12463,"input_tokens":12296,"output_tokens":167,"cache_read_input_tokens":9000,"cache_write_input_tokens":0}`
	type want struct {
		status, err   string
		texts         []string // the assistant texts, in order
		call          string   // call_1's result status ("" for none)
		input, output int64    // -1: no usage
		unmapped      int
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  want
	}{
		{"chunks of one id are one text; ok on complete, with its usage",
			[]string{chunk("The"), chunk(" file"), chunk(" is empty."), complete},
			want{status: "ok", texts: []string{"The file is empty."}, input: 12296, output: 167}},
		{"a call and its failed result, then the answer",
			[]string{chunk("Running it."), call, failed, streamMsg("chatcmpl-2", "assistant", 1771715538, `[{"type":"text","text":"It failed."}]`), complete},
			want{status: "ok", texts: []string{"Running it.", "It failed."}, call: "error", input: 12296, output: 167}},
		{"a call that ran: ok",
			[]string{call, ran, `{"type":"notification","extension_id":"call_1","message":""}`, complete},
			want{status: "ok", call: "ok", input: 12296, output: 167}},
		{"an error event, then complete: error",
			[]string{chunk("Looking."), `{"type":"error","error":"Request failed: Server error (500)"}`, `{"type":"complete","total_tokens":null}`},
			want{status: "error", err: "Request failed: Server error (500)", texts: []string{"Looking."}, input: -1, output: -1}},
		{"no complete: incomplete",
			[]string{chunk("Let me"), chunk(" check."), call},
			want{status: "incomplete", texts: []string{"Let me check."}, input: -1, output: -1}},
		{"an unknown event is counted unmapped",
			[]string{chunk("Hi."), `{"type":"model_change","model":"gpt-5","mode":"auto"}`, complete},
			want{status: "ok", texts: []string{"Hi."}, input: 12296, output: 167, unmapped: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := strings.Join(tc.lines, "\n") + "\n"
			o := plugintest.Run(t, goose.Plugin, []byte(raw), normalize.Options{Provider: "goose"})
			if o.Result.Status != tc.want.status || !strings.Contains(o.Result.Error, tc.want.err) {
				t.Errorf("status %q (%q), want %q (%q)", o.Result.Status, o.Result.Error, tc.want.status, tc.want.err)
			}
			var got []string
			for _, s := range o.Texts(plugintest.Assistant) {
				if s != "" {
					got = append(got, s)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want.texts, "|") {
				t.Errorf("assistant texts %q, want %q", got, tc.want.texts)
			}
			if st, _ := o.ResultStatus("call_1"); st != tc.want.call {
				t.Errorf("call_1's status %q, want %q", st, tc.want.call)
			}
			in, out := int64(-1), int64(-1)
			if u := o.Result.Usage; u != nil && u.InputTokens != nil && u.OutputTokens != nil {
				in, out = *u.InputTokens, *u.OutputTokens
			}
			if in != tc.want.input || out != tc.want.output {
				t.Errorf("tokens %d/%d, want %d/%d", in, out, tc.want.input, tc.want.output)
			}
			n := 0
			for _, c := range o.Result.Unmapped {
				n += c
			}
			if n != tc.want.unmapped || o.Result.Format != "stream-json" {
				t.Errorf("unmapped %v, format %q; want %d unmapped, stream-json", o.Result.Unmapped, o.Result.Format, tc.want.unmapped)
			}
		})
	}
}

// TestRunJSON: goose run --output-format json (session/mod.rs,
// JsonOutput: {messages, metadata: {total_tokens, status}}, pretty-printed
// once at the end) is read: the conversation, the status (completed: ok;
// another, as a fork of Goose writes "failed" with an error code: error),
// and no usage, for total_tokens is the session's plain counter, the last
// model call's (a warning says so). Before, the document's lines were
// unmapped: no message, no call, status incomplete.
func TestRunJSON(t *testing.T) {
	doc := func(status, extra string) string {
		return "{\n  \"messages\": [\n    " + strings.Join([]string{
			`{"id":null,"role":"user","created":1771715820,"content":[{"type":"text","text":"List the files."}],"metadata":{"userVisible":true,"agentVisible":true}}`,
			`{"id":"chatcmpl-1","role":"assistant","created":1771715822,"content":[{"type":"toolRequest","id":"call_1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}}],"metadata":{"userVisible":true,"agentVisible":true}}`,
			`{"id":null,"role":"user","created":1771715823,"content":[{"type":"toolResponse","id":"call_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"a.go"}],"isError":false}}}],"metadata":{"userVisible":true,"agentVisible":true}}`,
			`{"id":"chatcmpl-2","role":"assistant","created":1771715825,"content":[{"type":"text","text":"One file: a.go."}],"metadata":{"userVisible":true,"agentVisible":true}}`,
		}, ",\n    ") + "\n  ],\n  \"metadata\": {\n    \"total_tokens\": 2928,\n    \"status\": \"" + status + "\"" + extra + "\n  }\n}\n"
	}
	for _, tc := range []struct {
		name, raw, status, err string
	}{
		{"completed", doc("completed", ""), "ok", ""},
		{"failed", doc("failed", ",\n    \"error\": \"provider_auth\""), "error", "failed: provider_auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, goose.Plugin, []byte(tc.raw), normalize.Options{Provider: "goose"})
			if o.Result.Status != tc.status || !strings.Contains(o.Result.Error, tc.err) || o.Result.Format != "json" {
				t.Errorf("status %q (%q) format %q, want %q (%q) json", o.Result.Status, o.Result.Error, o.Result.Format, tc.status, tc.err)
			}
			if st, _ := o.ResultStatus("call_1"); st != "ok" {
				t.Errorf("call_1's status %q, want ok", st)
			}
			if got := strings.Join(o.Texts(plugintest.Assistant), ""); got != "One file: a.go." {
				t.Errorf("assistant texts %q", got)
			}
			if o.Result.Usage != nil && o.Result.Usage.InputTokens != nil {
				t.Errorf("usage %+v, want none (total_tokens is the last call's)", o.Result.Usage)
			}
			if w := strings.Join(o.Result.Warnings, "|"); !strings.Contains(w, "last model call's total (2928 tokens)") {
				t.Errorf("warnings %q", w)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}
