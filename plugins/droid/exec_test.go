//go:build !wasip1

package droid_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/droid"
	"github.com/twasm/twasm/transcript"
)

// TestExecOutput: droid exec's --output-format stream-json, debug and
// json (doc.go; the shapes Factory's documentation of droid exec shows
// and the readers of it in BloopAI/vibe-kanban's droid executor parse)
// are read, none of their lines left unmapped: the prompt and answers as
// messages, tool_call and tool_result as a call and its result (matched
// by id, else to the earliest call waiting: some versions left the
// result's id out), an error object or isError an error, the completion
// (or json's result) the terminal event with the run's usage, a stream
// cut before it incomplete, or an error when it reported one.
func TestExecOutput(t *testing.T) {
	const (
		initL  = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":["Read","Execute"],"model":"claude-sonnet-4-5-20250929"}`
		user   = `{"type":"message","role":"user","id":"m1","text":"list the files","timestamp":1762517060816,"session_id":"s1"}`
		say    = `{"type":"message","role":"assistant","id":"m2","text":"I'll list them.","timestamp":1762517062000,"session_id":"s1"}`
		call   = `{"type":"tool_call","id":"call_1","messageId":"m2","toolId":"Execute","toolName":"Execute","parameters":{"command":"ls"},"timestamp":1762517062500,"session_id":"s1"}`
		result = `{"type":"tool_result","id":"call_1","messageId":"m3","toolId":"Execute","isError":false,"value":"a.go\nb.go\n","timestamp":1762517063000,"session_id":"s1"}`
		failed = `{"type":"tool_result","id":"call_1","messageId":"m3","toolId":"Execute","isError":true,"error":{"type":"tool_error","message":"Insufficient permission to proceed"},"timestamp":1762517063000,"session_id":"s1"}`
		noID   = `{"type":"tool_result","messageId":"m3","toolId":"Execute","isError":false,"value":"a.go\nb.go\n","timestamp":1762517063000,"session_id":"s1"}`
		answer = `{"type":"message","role":"assistant","id":"m4","text":"Two files: a.go and b.go.","timestamp":1762517064000,"session_id":"s1"}`
		done   = `{"type":"completion","finalText":"Two files: a.go and b.go.","numTurns":2,"durationMs":3200,"session_id":"s1","timestamp":1762517064100,"usage":{"input_tokens":120,"output_tokens":30,"cache_read_input_tokens":4000,"cache_creation_input_tokens":500}}`
		errL   = `{"type":"error","source":"cli","message":"Exceeded usage limit","timestamp":1762517063500}`
		json1  = `{"type":"result","subtype":"success","is_error":false,"duration_ms":5657,"num_turns":1,"result":"Two files.","session_id":"s2"}`
		json2  = `{"type":"result","subtype":"error","is_error":true,"duration_ms":900,"num_turns":0,"result":"Model not allowed by your organization's policy","session_id":"s3"}`
	)
	type toolWant struct{ id, status, output string }
	tests := []struct {
		name, raw  string
		status     string
		format     string
		session    string
		final      string
		input, out int64 // usage; 0: none
		tools      []toolWant
		prompts    int
	}{
		{name: "stream-json that completed", raw: strings.Join([]string{initL, user, say, call, result, answer, done}, "\n"),
			status: "ok", format: "stream-json", session: "s1", final: "Two files: a.go and b.go.", input: 4620, out: 30,
			tools: []toolWant{{"call_1", "ok", "a.go\nb.go\n"}}, prompts: 1},
		{name: "a failed tool result is an error", raw: strings.Join([]string{initL, user, say, call, failed, answer, done}, "\n"),
			status: "ok", format: "stream-json", session: "s1", final: "Two files: a.go and b.go.", input: 4620, out: 30,
			tools: []toolWant{{"call_1", "error", "Insufficient permission to proceed"}}, prompts: 1},
		{name: "a result without an id answers the call waiting", raw: strings.Join([]string{initL, user, say, call, noID, answer, done}, "\n"),
			status: "ok", format: "stream-json", session: "s1", final: "Two files: a.go and b.go.", input: 4620, out: 30,
			tools: []toolWant{{"call_1", "ok", "a.go\nb.go\n"}}, prompts: 1},
		{name: "an error and no completion", raw: strings.Join([]string{initL, user, say, call, result, errL}, "\n"),
			status: "error", format: "stream-json", session: "s1", final: "I'll list them.",
			tools: []toolWant{{"call_1", "ok", "a.go\nb.go\n"}}, prompts: 1},
		{name: "cut before the completion", raw: strings.Join([]string{initL, user, say, call}, "\n"),
			status: "incomplete", format: "stream-json", session: "s1", final: "I'll list them.",
			tools: []toolWant{{"call_1", "", ""}}, prompts: 1},
		{name: "debug: no ids, no session, no completion", raw: `{"type":"message","role":"user","text":"run ls command"}` + "\n" +
			`{"type":"message","role":"assistant","text":"I'll run the ls command."}` + "\n" +
			`{"type":"tool_call","toolName":"Execute","parameters":{"command":"ls -la"}}` + "\n" +
			`{"type":"tool_result","value":"total 16"}` + "\n" +
			`{"type":"message","role":"assistant","text":"The ls command has been executed successfully."}`,
			status: "incomplete", format: "stream-json", final: "The ls command has been executed successfully.",
			tools: []toolWant{{"droid-call-l3", "ok", "total 16"}}, prompts: 1},
		{name: "json: success", raw: json1, status: "ok", format: "json", session: "s2", final: "Two files."},
		{name: "json: an error", raw: json2, status: "error", format: "json", session: "s3"},
		{name: "json, pretty-printed", raw: "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n  \"is_error\": false,\n  \"duration_ms\": 5657,\n  \"num_turns\": 1,\n  \"result\": \"Two files.\",\n  \"session_id\": \"s2\"\n}",
			status: "ok", format: "json", session: "s2", final: "Two files."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), droid.Plugin, "droid", []byte(tt.raw+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if res.Status != tt.status || res.Format != tt.format || res.SessionID != tt.session || res.FinalText != tt.final {
				t.Errorf("status %q format %q session %q final %q; want %q %q %q %q (error %q)", res.Status, res.Format, res.SessionID, res.FinalText,
					tt.status, tt.format, tt.session, tt.final, res.Error)
			}
			if len(res.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent line(s); want none", res.Unmapped, r.SilentN)
			}
			switch {
			case tt.input == 0 && res.Usage != nil:
				t.Errorf("usage %+v; want none", res.Usage)
			case tt.input != 0 && (res.Usage == nil || res.Usage.InputTokens == nil || *res.Usage.InputTokens != tt.input || res.Usage.OutputTokens == nil || *res.Usage.OutputTokens != tt.out):
				t.Errorf("usage %+v; want input %d output %d", res.Usage, tt.input, tt.out)
			}
			var calls []string
			results := map[string]*transcript.ToolPayload{}
			prompts := 0
			for _, e := range r.Events {
				switch e.Type {
				case transcript.ToolCall:
					calls = append(calls, e.Tool().CallID)
				case transcript.ToolResult:
					results[e.Tool().CallID] = e.Tool()
				case transcript.MessageUser:
					for _, b := range e.Message().Blocks {
						if b.Origin == transcript.OriginPrompt {
							prompts++
						}
					}
				}
			}
			if prompts != tt.prompts {
				t.Errorf("%d prompts; want %d", prompts, tt.prompts)
			}
			if len(calls) != len(tt.tools) {
				t.Fatalf("calls %v; want %d", calls, len(tt.tools))
			}
			for i, w := range tt.tools {
				p := results[calls[i]]
				switch {
				case calls[i] != w.id:
					t.Errorf("call %d id %q; want %q", i, calls[i], w.id)
				case w.status == "" && p != nil:
					t.Errorf("call %s has a result %+v; want none", w.id, p)
				case w.status != "" && (p == nil || p.Status != w.status || p.Output != w.output):
					t.Errorf("call %s result %+v; want %s %q", w.id, p, w.status, w.output)
				}
			}
		})
	}
}
