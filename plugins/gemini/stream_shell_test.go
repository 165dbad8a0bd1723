//go:build !wasip1

package gemini_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
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
