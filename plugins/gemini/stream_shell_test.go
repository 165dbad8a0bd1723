//go:build !wasip1

package gemini_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
)

// TestStreamShellOutcome: in stream-json the CLI marks a shell command
// that ran "success" whatever it returned, and its output is the shell
// tool's display: the command's output, or, when there was none, how the
// command ended (google-gemini/gemini-cli packages/core/src/tools/shell.ts,
// returnDisplayMessage: "Command exited with code: N", "Command terminated
// by signal: S", "Command cancelled by user."). Those are not ok; a
// command's own output, and another tool's, stay as the CLI said.
func TestStreamShellOutcome(t *testing.T) {
	in := func(tool, output string) string {
		return `{"type":"init","timestamp":"2026-05-17T22:11:45.322Z","session_id":"s1","model":"gemini-3-flash-preview"}` + "\n" +
			`{"type":"message","timestamp":"2026-05-17T22:11:45.323Z","role":"user","content":"Run the tests."}` + "\n" +
			`{"type":"tool_use","timestamp":"2026-05-17T22:11:46.000Z","tool_name":"` + tool + `","tool_id":"t1","parameters":{"command":"make test"}}` + "\n" +
			`{"type":"tool_result","timestamp":"2026-05-17T22:11:50.000Z","tool_id":"t1","status":"success","output":"` + output + `"}` + "\n"
	}
	tests := []struct {
		name, in, status string
		exit             int
		hasExit          bool
	}{
		{"a non-zero exit with no output", in("run_shell_command", "Command exited with code: 2"), "error", 2, true},
		{"killed by a signal", in("run_shell_command", "Command terminated by signal: SIGKILL"), "error", 0, false},
		{"cancelled by the user", in("run_shell_command", "Command cancelled by user."), "cancelled", 0, false},
		{"the command's own output", in("run_shell_command", "ok  \tgithub.com/x/y\t0.01s"), "ok", 0, false},
		{"another tool saying the same", in("read_file", "Command exited with code: 2"), "ok", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), gemini.Plugin, "gemini", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range r.Events {
				p := e.Event.Tool()
				if p == nil || p.Status == "" {
					continue
				}
				found = true
				if p.Status != tt.status {
					t.Errorf("status %q, want %q", p.Status, tt.status)
				}
				if got := p.ExitCode != nil; got != tt.hasExit || got && *p.ExitCode != tt.exit {
					t.Errorf("exit code %v, want %d (%v)", p.ExitCode, tt.exit, tt.hasExit)
				}
			}
			if !found {
				t.Fatal("no tool.result")
			}
		})
	}
}

// TestPolicyDenied: a call the CLI refused to run (ToolErrorType
// POLICY_VIOLATION, status error: google-gemini/gemini-cli
// scheduler/policy.ts getPolicyDenialError "Tool execution denied by
// policy.", the older scheduler's 'Policy denied execution of tool "X".',
// a BeforeTool hook's "Tool execution blocked: <reason>") is denied, in
// stream-json (error.type policy_violation) and in session files (the
// functionResponse's error); any other failure stays an error.
func TestPolicyDenied(t *testing.T) {
	stream := func(errType, msg string) string {
		return `{"type":"init","timestamp":"2026-05-17T22:11:45.322Z","session_id":"s1","model":"gemini-3-flash-preview"}` + "\n" +
			`{"type":"tool_use","timestamp":"2026-05-17T22:11:46.000Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"rm -rf /"}}` + "\n" +
			`{"type":"tool_result","timestamp":"2026-05-17T22:11:46.100Z","tool_id":"t1","status":"error","error":{"type":"` + errType + `","message":"` + msg + `"}}` + "\n"
	}
	session := func(status, errText string) string {
		return `{"sessionId":"s1","projectHash":"h","startTime":"2026-06-12T10:55:16.719Z","lastUpdated":"2026-06-12T10:55:16.719Z","kind":"main"}` + "\n" +
			`{"id":"u1","timestamp":"2026-06-12T10:55:45.068Z","type":"user","content":[{"text":"Clean up."}]}` + "\n" +
			`{"id":"g1","timestamp":"2026-06-12T10:57:03.803Z","type":"gemini","content":"","toolCalls":[{"id":"t1","name":"run_shell_command","args":{"command":"rm -rf /"},"result":[{"functionResponse":{"id":"t1","name":"run_shell_command","response":{"error":"` + errText + `"}}}],"status":"` + status + `","timestamp":"2026-06-12T10:57:03.830Z"}],"model":"gemini-3-flash-preview"}` + "\n"
	}
	tests := []struct{ name, in, status string }{
		{"stream: policy_violation", stream("policy_violation", "Tool execution denied by policy. No deletes outside the workspace."), "denied"},
		{"stream: policy_violation, another message", stream("policy_violation", "Command rejected by rule"), "denied"},
		{"stream: a hook blocked it", stream("policy_violation", "Tool execution blocked: not on main"), "denied"},
		{"stream: the tool failed", stream("shell_execute_error", "spawn /bin/sh ENOENT"), "error"},
		{"session: denied by policy", session("error", "Tool execution denied by policy."), "denied"},
		{"session: the older scheduler's words", session("error", `Policy denied execution of tool \"run_shell_command\".`), "denied"},
		{"session: the tool failed", session("error", "Permission denied"), "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), gemini.Plugin, "gemini", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := plugintest.FromResult(r).ResultStatus("t1"); !ok || got != tt.status {
				t.Errorf("result status %q (%v), want %q", got, ok, tt.status)
			}
		})
	}
}
