//go:build !wasip1

package gemini_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
)

// TestReusedCallID checks sessions whose model server names every call
// call_1: a call in a later record (or response), after the first
// call's result, is a call of its own with its own result, while a
// record appended again, a whole document read again and a result sent
// again add nothing to the first call, and a call repeated before its
// result is that call.
func TestReusedCallID(t *testing.T) {
	const user = `{"id":"u1","timestamp":"2026-06-01T08:00:00.000Z","type":"user","content":[{"text":"Go."}]}`
	// rec is a gemini record calling call_1, with its result when
	// output is not "".
	rec := func(id, name, output string) string {
		c := `{"id":"call_1","name":"` + name + `","args":{"command":"ls"},"status":"executing"}`
		if output != "" {
			c = `{"id":"call_1","name":"` + name + `","args":{"command":"ls"},"status":"success","result":[{"functionResponse":{"id":"call_1","name":"` + name + `","response":{"output":"` + output + `"}}}]}`
		}
		return `{"id":"` + id + `","timestamp":"2026-06-01T08:00:01.000Z","type":"gemini","content":"","model":"m","toolCalls":[` + c + `]}`
	}
	const header = `{"sessionId":"s1","projectHash":"h","startTime":"2026-06-01T08:00:00.000Z","kind":"main"}`
	doc := func(msgs ...string) string { return `{"sessionId":"s1","messages":[` + strings.Join(msgs, ",") + `]}` }
	ev := func(typ, rest string) string {
		return `{"type":"` + typ + `","timestamp":"2026-06-01T08:00:01.000Z",` + rest + `}`
	}
	use := func(name string) string {
		return ev("tool_use", `"tool_name":"`+name+`","tool_id":"call_1","parameters":{"command":"ls"}`)
	}
	res := func(output string) string {
		return ev("tool_result", `"tool_id":"call_1","status":"success","output":"`+output+`"`)
	}
	start := []string{ev("init", `"session_id":"s1","model":"m"`), ev("message", `"role":"user","content":"Go."`)}
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"records: reused after its result", []string{
			header, user, rec("g1", "run_shell_command", "main.go"), rec("g2", "read_file", "package main"),
		}, []string{"run_shell_command", "read_file"}, []string{"main.go", "package main"}},
		{"records: reused, its result in the record appended again", []string{
			header, user, rec("g1", "run_shell_command", "main.go"), rec("g2", "read_file", ""), rec("g2", "read_file", "package main"),
		}, []string{"run_shell_command", "read_file"}, []string{"main.go", "package main"}},
		{"records: result appended again", []string{
			header, user, rec("g1", "run_shell_command", "main.go"), rec("g1", "run_shell_command", "main.go"),
		}, []string{"run_shell_command"}, []string{"main.go"}},
		{"records: call appended again before its result", []string{
			header, user, rec("g1", "run_shell_command", ""), rec("g1", "run_shell_command", ""), rec("g1", "run_shell_command", "main.go"),
		}, []string{"run_shell_command"}, []string{"main.go"}},
		{"document read again: reused, the later call's result in the next version", []string{
			doc(user, rec("g1", "run_shell_command", "main.go"), rec("g2", "read_file", "")),
			doc(user, rec("g1", "run_shell_command", "main.go"), rec("g2", "read_file", "package main")),
		}, []string{"run_shell_command", "read_file"}, []string{"main.go", "package main"}},
		{"document read again: the later call still running", []string{
			doc(user, rec("g1", "run_shell_command", "main.go")),
			doc(user, rec("g1", "run_shell_command", "main.go"), rec("g2", "read_file", "")),
			doc(user, rec("g1", "run_shell_command", "main.go"), rec("g2", "read_file", "")),
		}, []string{"run_shell_command", "read_file"}, []string{"main.go"}},
		{"stream: reused after its result", append(start,
			use("run_shell_command"), res("main.go"), use("read_file"), res("package main"), ev("result", `"status":"success"`)),
			[]string{"run_shell_command", "read_file"}, []string{"main.go", "package main"}},
		{"stream: result sent again", append(start,
			use("run_shell_command"), res("main.go"), res("main.go again"), ev("result", `"status":"success"`)),
			[]string{"run_shell_command"}, []string{"main.go"}},
		{"stream: call repeated before its result", append(start,
			use("run_shell_command"), use("run_shell_command"), res("main.go"), ev("result", `"status":"success"`)),
			[]string{"run_shell_command"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, gemini.Plugin, "gemini", tt.lines, tt.calls, tt.results)
		})
	}
}
