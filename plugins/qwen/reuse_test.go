//go:build !wasip1

package qwen_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestReusedCallID checks a chat whose model server names every call
// call_1: a call after the first call's result is a call of its own with
// its own result, while a result recorded again (or a call repeated
// before its result) is still the same call's.
func TestReusedCallID(t *testing.T) {
	rec := func(uuid, typ, rest string) string {
		return `{"uuid":"` + uuid + `","sessionId":"s1","timestamp":"2026-10-03T10:00:00.000Z","type":"` + typ + `",` + rest + `}`
	}
	call := func(uuid, name, cmd string) string {
		return rec(uuid, "assistant", `"message":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"`+name+`","args":{"command":"`+cmd+`"}}}]}`)
	}
	result := func(uuid, name, output string) string {
		return rec(uuid, "tool_result", `"message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"`+name+`","response":{"output":"`+output+`"}}}]},"toolCallResult":{"callId":"call_1","status":"success"}`)
	}
	user := rec("u1", "user", `"message":{"role":"user","parts":[{"text":"Go."}]}`)
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", []string{
			user, call("a1", "run_shell_command", "ls"), result("r1", "run_shell_command", "main.go"),
			call("a2", "read_file", "x"), result("r2", "read_file", "package main"),
		}, []string{"run_shell_command", "read_file"}, []string{"main.go", "package main"}},
		{"result recorded again", []string{
			user, call("a1", "run_shell_command", "ls"), result("r1", "run_shell_command", "main.go"),
			result("r1b", "run_shell_command", "main.go again"),
		}, []string{"run_shell_command"}, []string{"main.go"}},
		{"call repeated before its result", []string{
			user, call("a1", "run_shell_command", "ls"), call("a1b", "run_shell_command", "ls"),
			result("r1", "run_shell_command", "main.go"),
		}, []string{"run_shell_command"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, qwen.Plugin, "qwen", tt.lines, tt.calls, tt.results)
		})
	}
}
