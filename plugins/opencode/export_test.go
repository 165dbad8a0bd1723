//go:build !wasip1

package opencode_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// TestExport: the output of opencode export (cli/cmd/export.ts: the
// session as one document {info, messages: [{info, parts}], todos},
// printed with JSON.stringify(..., null, 2)) is read as the store's rows
// are: the prompt, the answer, each call with its status, the steps'
// usage summed, the session's directory, a sub-agent's session said so,
// a newest answer not finished incomplete. Before, the document's lines
// were each unmapped (non_json), the step incomplete and empty.
func TestExport(t *testing.T) {
	const (
		user     = `{"info":{"id":"msg_1","sessionID":"ses_1","role":"user","time":{"created":1787218690969},"agent":"build","model":{"providerID":"opencode","modelID":"m1"}},"parts":[{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"List the files."}]}`
		answer   = `{"info":{"id":"msg_2","sessionID":"ses_1","role":"assistant","time":{"created":1787218690976,"completed":1787218693671},"parentID":"msg_1","modelID":"m1","providerID":"opencode","mode":"build","path":{"cwd":"/p","root":"/p"},"cost":0.5,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":100,"write":0}},"finish":"stop"},"parts":[{"id":"prt_2","sessionID":"ses_1","messageID":"msg_2","type":"step-start"},{"id":"prt_3","sessionID":"ses_1","messageID":"msg_2","type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"ls /nope"},"output":"ls: cannot access '/nope'","metadata":{"exit":2}}},{"id":"prt_4","sessionID":"ses_1","messageID":"msg_2","type":"text","text":"There is no /nope."},{"id":"prt_5","sessionID":"ses_1","messageID":"msg_2","type":"step-finish","reason":"stop","cost":0.5,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":100,"write":0}}}]}`
		running  = `{"info":{"id":"msg_2","sessionID":"ses_1","role":"assistant","time":{"created":1787218690976},"parentID":"msg_1","modelID":"m1","providerID":"opencode","mode":"build","path":{"cwd":"/p","root":"/p"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}},"parts":[{"id":"prt_2","sessionID":"ses_1","messageID":"msg_2","type":"step-start"},{"id":"prt_4","sessionID":"ses_1","messageID":"msg_2","type":"text","text":"Let me"}]}`
		info     = `{"id":"ses_1","slug":"quiet-harbor","projectID":"global","directory":"/p","title":"t","version":"1.18.18","time":{"created":1787218690928,"updated":1787218693700}}`
		subagent = `{"id":"ses_2","slug":"calm-river","projectID":"global","directory":"/p","parentID":"ses_0","title":"t (@general subagent)","version":"1.18.18","time":{"created":1787218690928,"updated":1787218693700}}`
	)
	doc := func(info string, msgs ...string) string {
		// Pretty-printed, as opencode export prints it: a line a member.
		return "{\n  \"info\": " + info + ",\n  \"messages\": [\n    " + strings.Join(msgs, ",\n    ") + "\n  ],\n  \"todos\": []\n}\n"
	}
	type want struct {
		status, warn string
		texts        []string
		call         string // c1's result status
		input        int64  // -1: no usage
	}
	for _, tc := range []struct {
		name, raw string
		want      want
	}{
		{"a session: prompt, failed call, answer, usage", doc(info, user, answer),
			want{status: transcript.StatusOK, texts: []string{"There is no /nope."}, call: "error", input: 110}},
		{"a sub-agent's session", doc(subagent, user, answer),
			want{status: transcript.StatusOK, warn: "a sub-agent session of ses_0", texts: []string{"There is no /nope."}, call: "error", input: 110}},
		{"exported while the answer ran: incomplete", doc(info, user, running),
			want{status: transcript.StatusIncomplete, texts: []string{"Let me"}, input: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(tc.raw), normalize.Options{Provider: "opencode"})
			if o.Result.Status != tc.want.status || o.Result.Format != "export" || o.Result.Cwd != "/p" {
				t.Errorf("status %q format %q cwd %q, want %q export /p", o.Result.Status, o.Result.Format, o.Result.Cwd, tc.want.status)
			}
			if got := o.Texts(plugintest.Assistant); !strings.Contains(strings.Join(got, "|"), strings.Join(tc.want.texts, "|")) {
				t.Errorf("assistant texts %q, want %q", got, tc.want.texts)
			}
			if st, _ := o.ResultStatus("c1"); st != tc.want.call {
				t.Errorf("c1's status %q, want %q", st, tc.want.call)
			}
			in := int64(-1)
			if u := o.Result.Usage; u != nil && u.InputTokens != nil {
				in = *u.InputTokens
			}
			if in != tc.want.input {
				t.Errorf("input tokens %d, want %d", in, tc.want.input)
			}
			if w := strings.Join(o.Result.Warnings, "|"); !strings.Contains(w, tc.want.warn) {
				t.Errorf("warnings %q, want %q", w, tc.want.warn)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}
