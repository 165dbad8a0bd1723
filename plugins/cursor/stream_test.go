//go:build !wasip1

package cursor_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
	"github.com/twasm/twasm/transcript"
)

// TestStreamJSON: cursor-agent --print --output-format stream-json (the
// shapes of Cursor's CLI documentation and of the lines peers keep from
// it: system init, user, thinking deltas, assistant, tool_call
// started/completed with a {<kind>ToolCall: {args, result}}, result with
// its usage). The plugin read none of them (each line unmapped by its
// type: no prompt, answer, call or token), and detection gave them to
// the claude plugin, which dropped every tool_call line: a failed
// command was not in the transcript.
func TestStreamJSON(t *testing.T) {
	const sid = `"session_id":"193b2dbb-03ce-444f-a307-4a80f5d4cab0"`
	initLine := `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/dev/app",` + sid + `,"model":"Claude 4 Sonnet","permissionMode":"default"}`
	user := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"run the tests"}]},` + sid + `}`
	say := func(text, extra string) string {
		return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]},` + sid + extra + `}`
	}
	tool := func(sub, id, body string) string {
		return `{"type":"tool_call","subtype":"` + sub + `","call_id":"` + id + `","tool_call":{` + body + `},` + sid + `}`
	}
	shell := func(result string) string {
		r := ""
		if result != "" {
			r = `,"result":` + result
		}
		return `"shellToolCall":{"args":{"command":"make test","workingDirectory":"/home/dev/app"}` + r + `}`
	}
	ok := `{"type":"result","subtype":"success","duration_ms":1000,"duration_api_ms":900,"is_error":false,"result":"done",` + sid + `,"request_id":"r1","usage":{"inputTokens":3705,"outputTokens":45,"cacheReadTokens":7040}}`
	type call struct{ name, status, output, err string }
	tests := []struct {
		name          string
		lines         []string
		status        string
		texts         []string
		calls         []call
		input, output int64
	}{
		{"segments, a command that failed, a refused one, a read", []string{
			initLine, user, say("Running them.", ""),
			tool("started", "c1", shell("")),
			tool("completed", "c1", shell(`{"success":{"command":"make test","exitCode":2,"stdout":"FAIL","stderr":"make: *** [test] Error 2","interleavedOutput":"FAIL\nmake: *** [test] Error 2"}}`)),
			tool("started", "c2", `"shellToolCall":{"args":{"command":"rm -rf build"}}`),
			tool("completed", "c2", `"shellToolCall":{"args":{"command":"rm -rf build"},"result":{"rejected":{"command":"rm -rf build","reason":"not allowed"}}}`),
			tool("completed", "c3", `"readToolCall":{"args":{"path":"Makefile"},"result":{"success":{"content":"test:\n\tgo test","totalLines":2}}}`),
			say("The tests fail.", ""), ok,
		}, "ok", []string{"Running them.", "The tests fail."}, []call{
			{"shell", "error", "FAIL\nmake: *** [test] Error 2", "exit code 2"},
			{"shell", "denied", "", "not allowed"},
			{"read", "ok", "test:\n\tgo test", ""},
		}, 10745, 45},
		{"partial output: each segment once", []string{
			initLine, user,
			`{"type":"thinking","subtype":"delta","text":"Plan",` + sid + `}`,
			`{"type":"thinking","subtype":"completed",` + sid + `}`,
			say("Hel", `,"timestamp_ms":1`), say("lo", `,"timestamp_ms":2`), say("Hello", `,"model_call_id":"m-0","timestamp_ms":3`),
			tool("started", "c1", shell("")), tool("completed", "c1", shell(`{"success":{"exitCode":0,"stdout":"ok"}}`)),
			say(" world", `,"timestamp_ms":4`),
			say("Hello world", ""), ok,
		}, "ok", []string{"thinking: Plan", "Hello", " world"}, []call{{"shell", "ok", "ok", ""}}, 10745, 45},
		{"a failure result, no usage", []string{
			initLine, user, tool("completed", "c9", shell(`{"failure":{"command":"make test","exitCode":1,"stdout":"","stderr":"boom"}}`)),
			`{"type":"result","subtype":"success","duration_ms":10,"is_error":false,"result":"",` + sid + `,"request_id":"r3"}`,
		}, "ok", nil, []call{{"shell", "error", "boom", "boom"}}, 0, 0},
		{"an error result", []string{
			initLine, user, `{"type":"result","subtype":"error","duration_ms":10,"is_error":true,"result":"rate limited",` + sid + `,"request_id":"r2"}`,
		}, "error", nil, nil, 0, 0},
		{"cut before its result", []string{initLine, user, say("Running them.", ""), tool("started", "c1", shell(""))},
			"incomplete", []string{"Running them."}, []call{{"shell", "", "", ""}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, cursor.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "cursor"})
			r := o.Result
			if r.Status != tt.status {
				t.Errorf("status %s (%q); want %s", r.Status, r.Error, tt.status)
			}
			if r.SessionID != "193b2dbb-03ce-444f-a307-4a80f5d4cab0" || r.Format != "stream-json" || r.Model != "Claude 4 Sonnet" || r.Cwd != "/home/dev/app" {
				t.Errorf("session %q, format %q, model %q, cwd %q", r.SessionID, r.Format, r.Model, r.Cwd)
			}
			var texts []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					switch b.Type {
					case transcript.BlockText:
						texts = append(texts, b.Text)
					case transcript.BlockThinking:
						texts = append(texts, "thinking: "+b.Thinking)
					}
				}
			}
			if !slices.Equal(texts, tt.texts) {
				t.Errorf("assistant blocks %q; want %q", texts, tt.texts)
			}
			calls, results := o.Tools()
			var got []call
			for _, c := range calls {
				g := call{name: c.Name}
				for _, res := range results {
					if res.CallID == c.CallID {
						g.status, g.output, g.err = res.Status, res.Output, res.Error
					}
				}
				got = append(got, g)
			}
			if !slices.Equal(got, tt.calls) {
				t.Errorf("calls (name, status, output, error)\n\t%q\nwant\n\t%q", got, tt.calls)
			}
			var in, out int64
			if u := r.Usage; u != nil && u.InputTokens != nil {
				in, out = *u.InputTokens, *u.OutputTokens
			}
			if in != tt.input || out != tt.output {
				t.Errorf("usage input %d, output %d; want %d, %d", in, out, tt.input, tt.output)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v", r.Unmapped)
			}
		})
	}
}
