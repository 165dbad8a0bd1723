//go:build !wasip1

package cline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestCommandOutcomes: an execute_command result states the command's
// outcome on its first line; "Command timed out after 30 seconds. Running
// in background." (Cline stopped waiting, the command goes on) states
// none yet: cancelled, never ok. "Command was cancelled by the user."
// (the user stopped the command with the cancel button: cline/cline
// 59e5eac3e0 src/integrations/terminal/CommandExecutor.ts, since
// 60d3048aa0, the output so far after "Output captured before
// cancellation:") is cancelled too; before, it had no status. Modelled on a real Cline task of 2026
// (api_conversation_history.json, native tool calls; five such results
// in one task), written for the test.
func TestCommandOutcomes(t *testing.T) {
	tests := []struct {
		name, output, status, err string
		exit                      int64
	}{
		{"ok", "Command executed successfully (exit code 0).\nOutput:\nok", "ok", "", 0},
		{"failed", "Command failed with exit code 2.\nOutput:\nno such file", "error", "exit code 2", 2},
		{"timed out", "Command timed out after 30 seconds. Running in background.\nLog file: /tmp/cline/background-1.log\nOutput so far:\nstarting", "cancelled", "Command timed out after 30 seconds. Running in background.", -1},
		{"cancelled by the user", "Command was cancelled by the user.\nOutput captured before cancellation:\nstarting", "cancelled", "Command was cancelled by the user.", -1},
		{"cancelled by the user, no output", "Command was cancelled by the user.", "cancelled", "Command was cancelled by the user.", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := oneCallResult(t, "start the proxy", "execute_command", `{"command":"cloud-sql-proxy","requires_approval":false}`, tt.output)
			if res.Status != tt.status || res.Error != tt.err {
				t.Errorf("status %q error %q, want %q %q", res.Status, res.Error, tt.status, tt.err)
			}
			var exit int64 = -1
			if res.ExitCode != nil {
				exit = int64(*res.ExitCode)
			}
			if exit != tt.exit {
				t.Errorf("exit code %d, want %d", exit, tt.exit)
			}
		})
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestResultStatusStated: a tool result of the conversation file states
// its outcome: Cline (and Roo Code) write a failure as "The tool
// execution failed with the following error:" and a refusal as "The user
// denied this operation" (formatResponse.toolError, toolDenied), so any
// other result of a tool Cline runs itself is ok, and a command's is ok
// when it states exit code 0. Before, every such result had no status
// (the only plugin to leave a known success without one: a real task of
// 2026, 221 model requests, had 171 of its 231 results without status).
// A command whose result states no exit code (older Cline's "Command
// executed.", a completion's command) and an MCP server's result (its
// failure flag is not in the text) state no outcome: no status, never ok.
// Shapes from real api_conversation_history.json files, written for the
// test.
func TestResultStatusStated(t *testing.T) {
	tests := []struct {
		name, tool, input, output, status string
	}{
		{"file read", "read_file", `{"path":"a.go"}`, "package a\n", "ok"},
		{"file written", "write_to_file", `{"path":"a.go","content":"x"}`, "The content was successfully saved to a.go.", "ok"},
		{"question answered", "ask_followup_question", `{"question":"which?"}`, "<answer>\nthe first\n</answer>", "ok"},
		{"completion", "attempt_completion", `{"result":"done"}`, "Done", "ok"},
		{"command exit 0", "execute_command", `{"command":"go test"}`, "Command executed successfully (exit code 0).\nOutput:\nok", "ok"},
		{"tool failed", "read_file", `{"path":"b.go"}`, "The tool execution failed with the following error:\n<error>\nFile not found: b.go\n</error>", "error"},
		{"denied", "write_to_file", `{"path":"a.go","content":"x"}`, "The user denied this operation.", "denied"},
		{"Roo's apply_diff failure unwrapped", "apply_diff", `{"path":"a.go","diff":"x"}`, "Unable to apply diff to file: /p/a.go\n\n<error_details>\nNo sufficiently similar match found (94% similar, needs 100%)\n</error_details>", "error"},
		{"Roo's read_file of a missing file", "read_file", `{"args":{"file":{"path":"b.go"}}}`, "<files>\n<file><path>b.go</path><error>Error reading file: File not found: /p/b.go</error></file>\n</files>", "error"},
		{"Roo's read_file", "read_file", `{"args":{"file":{"path":"a.go"}}}`, "<files>\n<file><path>a.go</path>\n<content lines=\"1-1\">\n1 | package a\n</content>\n</file>\n</files>", "ok"},
		{"a missing parameter unwrapped", "write_to_file", `{"path":"a.go"}`, "Missing value for required parameter 'content'. Please retry with complete response.", "error"},
		{"command without exit code", "execute_command", `{"command":"go test"}`, "Command executed.\nOutput:\nFAIL", ""},
		{"completion's command without exit code", "attempt_completion", `{"result":"done","command":"open x"}`, "Done\nCommand executed.\nOutput:\n", ""},
		{"sub-agents all succeeded", "use_subagents", `{"prompts":["a","b"]}`, "Subagent results:\nTotal: 2\nSucceeded: 2\nFailed: 0\n\n[1] COMPLETED", "ok"},
		{"a sub-agent failed", "use_subagents", `{"prompts":["a","b"]}`, "Subagent results:\nTotal: 2\nSucceeded: 1\nFailed: 1\n\n[1] FAILED", ""},
		{"MCP tool", "use_mcp_tool", `{"server_name":"s","tool_name":"t","arguments":"{}"}`, "{\"entities\": []}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := oneCallResult(t, "do it", tt.tool, tt.input, tt.output)
			if res.Status != tt.status {
				t.Errorf("status %q (error %q), want %q", res.Status, res.Error, tt.status)
			}
		})
	}
}

// oneCallResult runs a conversation file of a task, one call of tool
// (its input JSON) and its result text output, and returns that
// result.
func oneCallResult(t *testing.T, task, tool, input, output string) *transcript.ToolPayload {
	t.Helper()
	raw := `[{"role":"user","content":[{"type":"text","text":"<task>\n` + task + `\n</task>"}],"ts":1777419500000},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"tooluse_1","name":"` + tool + `","input":` + input + `}],"ts":1777419510000},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tooluse_1","content":[{"type":"text","text":` + jsonString(output) + `}]}],"ts":1777419540000}]` + "\n"
	r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var res *transcript.ToolPayload
	for _, e := range r.Events {
		if p := e.Event.Tool(); p != nil && e.Event.Type == transcript.ToolResult {
			res = p
		}
	}
	if res == nil {
		t.Fatal("no tool.result")
	}
	return res
}
