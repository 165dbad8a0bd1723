//go:build !wasip1

package cline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestToolFailureNotProviderError: when a tool fails, Cline and Roo Code
// show the failure as a say "error" right after the tool's message, and
// give the model the failure as the call's result (cline/cline
// beb3ad78dc src/core/task/ToolExecutor.ts handleError; the SDK-based
// Cline's apps/vscode/src/sdk/message-translator.ts pushes say "tool"
// then say "error" for a tool_call_end with an error; Roo Code
// cb83656718 presentAssistantMessage.ts handleError and its tools, e.g.
// EditTool.ts). That error is the call's failure, not an error of the
// provider: in a task folder with its conversation the call's result
// states it; read from the UI's messages alone, from the Cline CLI's
// --json output or Roo Code's CLI stream-json (JsonEventEmitter: say
// error is an error event, after the tool's use shown whole), it is the
// call's result, an error. An error after anything else stays a provider
// error (golden roo_stream_json_failed: one after a tool use still
// streaming).
func TestToolFailureNotProviderError(t *testing.T) {
	const fail = "Error reading file:\nFile not found: /p/b.go"
	ui := func(errAfter string) string {
		return `[{"ts":1767225600000,"type":"say","say":"task","text":"Read b.go"},` +
			`{"ts":1767225600100,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":5,\"cost\":0.01}"},` +
			`{"ts":1767225601000,"type":"say","say":"text","text":"Reading it."},` +
			errAfter +
			`{"ts":1767225602000,"type":"ask","ask":"tool","text":"{\"tool\":\"readFile\",\"path\":\"b.go\"}"},` +
			`{"ts":1767225603000,"type":"say","say":"error","text":` + jsonString(fail) + `},` +
			`{"ts":1767225604000,"type":"say","say":"api_req_started","text":"{\"tokensIn\":20,\"tokensOut\":5,\"cost\":0.02}"},` +
			`{"ts":1767225605000,"type":"say","say":"text","text":"It does not exist."}]` + "\n"
	}
	const api = `{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n" +
		`[{"role":"user","content":[{"type":"text","text":"<task>\nRead b.go\n</task>"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"b.go"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"The tool execution failed with the following error:\n<error>\nError reading file: File not found: /p/b.go\n</error>"}]}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"It does not exist."}]}]` + "\n"
	stream := func(errAfter string) string {
		return `{"type":"task_started","taskId":"1767225600000"}` + "\n" +
			`{"type":"say","say":"text","ts":1767225600000,"text":"Read b.go"}` + "\n" +
			`{"type":"say","say":"text","ts":1767225601000,"text":"Reading it."}` + "\n" +
			errAfter +
			`{"type":"say","say":"tool","ts":1767225602000,"text":"{\"tool\":\"readFile\",\"path\":\"b.go\"}"}` + "\n" +
			`{"type":"say","say":"error","ts":1767225603000,"text":` + jsonString(fail) + `}` + "\n" +
			`{"type":"say","say":"text","ts":1767225605000,"text":"It does not exist."}` + "\n"
	}
	roo := func(toolUse string) string {
		return `{"type":"system","subtype":"init","protocol":"roo-cli-stream","schemaVersion":1}` + "\n" +
			`{"type":"user","id":1767225600000,"content":"Read b.go","done":true}` + "\n" +
			toolUse +
			`{"type":"error","id":1767225603000,"content":` + jsonString(fail) + `}` + "\n" +
			`{"type":"assistant","id":1767225605000,"content":"It does not exist.","done":true}` + "\n" +
			`{"type":"result","id":1767225606000,"success":true,"content":"It does not exist."}` + "\n"
	}
	const (
		rooPartial = `{"type":"tool_use","id":1767225602000,"subtype":"tool","content":"{\"tool\":\"readFile\"","tool_use":{"name":"readFile"}}` + "\n"
		rooDone    = `{"type":"tool_use","id":1767225602000,"subtype":"tool","tool_use":{"name":"readFile","input":{"path":"b.go"}},"done":true}` + "\n"
	)
	tests := []struct {
		name, raw string
		// result is the tool result's status and error ("" none);
		// errors the provider errors listed.
		status, errText string
		errors          []string
	}{
		{"task folder with its conversation", uiHead + ui("") + api, "error", "Error reading file: File not found: /p/b.go", nil},
		{"task folder, the UI's messages alone", uiHead + ui(""), "error", fail, nil},
		{"the UI's messages alone, an error after text too", uiHead + ui(`{"ts":1767225601500,"type":"say","say":"error","text":"overloaded"},`), "error", fail, []string{"overloaded"}},
		{"the Cline CLI's --json output", stream(""), "error", fail, nil},
		{"the Cline CLI's --json output, an error after text too", stream(`{"type":"say","say":"error","ts":1767225601500,"text":"overloaded"}` + "\n"), "error", fail, []string{"overloaded"}},
		{"Roo Code's CLI, the call shown whole", roo(rooPartial + rooDone), "error", fail, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			var errs []string
			for _, e := range r.Step.Errors {
				errs = append(errs, e.Message)
			}
			if strings.Join(errs, "|") != strings.Join(tt.errors, "|") {
				t.Errorf("provider errors %q, want %q", errs, tt.errors)
			}
			calls, results := 0, 0
			for _, e := range r.Events {
				switch e.Type {
				case transcript.ToolCall:
					calls++
				case transcript.ToolResult:
					results++
					p := e.Tool()
					if p.Status != tt.status || p.Error != tt.errText {
						t.Errorf("result status %q error %q, want %q %q", p.Status, p.Error, tt.status, tt.errText)
					}
				}
			}
			if calls != 1 || results != 1 {
				t.Errorf("%d calls, %d results; want 1 and 1", calls, results)
			}
			if r.Step.Status == transcript.StatusError {
				t.Errorf("step status error (%q): the model answered after the tool's failure", r.Step.Error)
			}
		})
	}
}
