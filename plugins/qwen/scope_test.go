//go:build !wasip1

package qwen_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestCallIDScopes checks chats whose model server names every call
// call_1: a sidechain sub-agent's own call_1, made while the session's
// agent call_1 waits for its result, is a call of the sidechain's scope
// answered there, and the agent call keeps its own result (and closes
// its own scope); a second agent call reusing the id, after the first's
// result, opens a scope of its own (call_1#2).
func TestCallIDScopes(t *testing.T) {
	rec := func(uuid, typ, side, rest string) string {
		s := ""
		if side != "" {
			s = `"isSidechain":true,"agentId":"` + side + `",`
		}
		return `{"uuid":"` + uuid + `","sessionId":"s1","timestamp":"2026-10-03T10:00:00.000Z",` + s + `"type":"` + typ + `",` + rest + `}`
	}
	call := func(uuid, side, name, args string) string {
		return rec(uuid, "assistant", side, `"message":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"`+name+`","args":`+args+`}}]}`)
	}
	result := func(uuid, side, name, output, display string) string {
		d := ""
		if display != "" {
			d = `,"resultDisplay":{"type":"task_execution","subagentName":"Explore","status":"completed","terminateReason":"GOAL","result":"` + display + `"}`
		}
		return rec(uuid, "tool_result", side, `"message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"`+name+`","response":{"output":"`+output+`"}}}]},"toolCallResult":{"callId":"call_1","status":"success"`+d+`}`)
	}
	user := rec("u1", "user", "", `"message":{"role":"user","parts":[{"text":"Go."}]}`)
	agent := func(uuid, desc string) string {
		return call(uuid, "", "agent", `{"description":"`+desc+`","prompt":"`+desc+`.","subagent_type":"Explore"}`)
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"a sidechain's call reuses the agent call's id", []string{
			user, agent("a1", "Find the parser"),
			call("s1", "sub-1", "run_shell_command", `{"command":"ls"}`), result("s2", "sub-1", "run_shell_command", "main.go", ""),
			result("r1", "", "agent", "parser found", "parser found"),
		}, []string{
			"main: call agent call_1",
			"open call_1 by call_1",
			"open sub-1 by ",
			"sub-1: call run_shell_command call_1",
			"sub-1: result run_shell_command call_1: main.go",
			"main: result agent call_1: parser found",
			"close call_1 ok",
			"close sub-1 incomplete", // a sidechain's scope ends with the input
		}},
		{"an agent call reuses the id of one whose sub-agent ran", []string{
			user, agent("a1", "Find the parser"), result("r1", "", "agent", "parser found", "parser found"),
			agent("a2", "Find the lexer"), result("r2", "", "agent", "lexer found", "lexer found"),
		}, []string{
			"main: call agent call_1",
			"open call_1 by call_1",
			"main: result agent call_1: parser found",
			"close call_1 ok",
			"main: call agent call_1",
			"open call_1#2 by call_1",
			"main: result agent call_1: lexer found",
			"close call_1#2 ok",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, qwen.Plugin, "qwen", tt.lines, tt.want)
		})
	}
}
