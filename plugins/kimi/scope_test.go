//go:build !wasip1

package kimi_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// TestCallIDScopes checks Kimi CLI wire logs whose model server names
// every call call_1 and whose Agent call runs a sub-agent (its records
// nested in SubagentEvent): the sub-agent's own call_1 is a call of its
// scope, answered there, while the Agent call waits in the session's
// scope for its own result; a main call pending beside the Agent keeps
// its result too; and an Agent call that reuses the id of one whose
// sub-agent ended runs its sub-agent in a scope of its own (call_1#2).
// A legacy call is reported when its arguments end (its result, or its
// message's end), so the Agent call comes after its sub-agent's records.
// (Kimi Code writes a sub-agent's journal to a file of its own: its
// calls never meet the session's in one input.)
func TestCallIDScopes(t *testing.T) {
	legacy := func(typ, payload string) string {
		return `{"timestamp":1767261600.0,"message":{"type":"` + typ + `","payload":` + payload + `}}`
	}
	call := func(id, name string) string {
		return legacy("ToolCall", `{"type":"function","id":"`+id+`","function":{"name":"`+name+`","arguments":"{\"description\":\"look\",\"prompt\":\"Look.\"}"}}`)
	}
	result := func(id, output string) string {
		return legacy("ToolResult", `{"tool_call_id":"`+id+`","return_value":{"is_error":false,"output":"`+output+`"}}`)
	}
	// sub wraps a record of the sub-agent the Agent call parent runs.
	sub := func(parent, rec string) string {
		// rec is {"timestamp":...,"message":{...}}: its message is the
		// event.
		const pre = `{"timestamp":1767261600.0,"message":`
		ev := rec[len(pre) : len(rec)-1]
		return legacy("SubagentEvent", `{"parent_tool_call_id":"`+parent+`","agent_id":"a1","subagent_type":"explore","event":`+ev+`}`)
	}
	begin := legacy("TurnBegin", `{"user_input":"Go."}`)
	step := legacy("StepBegin", `{"n":1}`)
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"the sub-agent's call reuses the Agent's id", []string{
			begin, step, call("call_1", "Agent"),
			sub("call_1", step), sub("call_1", call("call_1", "Grep")), sub("call_1", result("call_1", "config.py:12")),
			result("call_1", "found it"),
		}, []string{
			"open call_1 by call_1",
			"call_1: call Grep call_1",
			"call_1: result Grep call_1: config.py:12",
			"main: call Agent call_1",
			"main: result Agent call_1: found it",
			"close call_1 ok",
		}},
		{"a main call pending beside the Agent", []string{
			begin, step, call("call_1", "Shell"), call("call_2", "Agent"),
			sub("call_2", step), sub("call_2", call("call_1", "Grep")), sub("call_2", result("call_1", "config.py:12")),
			result("call_1", "main.go"), result("call_2", "found it"),
		}, []string{
			"open call_2 by call_2",
			"call_2: call Grep call_1",
			"call_2: result Grep call_1: config.py:12",
			"main: call Shell call_1",
			"main: result Shell call_1: main.go",
			"main: call Agent call_2",
			"main: result Agent call_2: found it",
			"close call_2 ok",
		}},
		{"an Agent reuses the id of one whose sub-agent ended", []string{
			begin, step, call("call_1", "Agent"),
			sub("call_1", step), sub("call_1", call("call_9", "Grep")), sub("call_1", result("call_9", "config.py:12")),
			result("call_1", "found it"),
			legacy("StepBegin", `{"n":2}`), call("call_1", "Agent"),
			sub("call_1", step), sub("call_1", call("call_9", "Read")), sub("call_1", result("call_9", "load()")),
			result("call_1", "read it"),
		}, []string{
			"open call_1 by call_1",
			"call_1: call Grep call_9",
			"call_1: result Grep call_9: config.py:12",
			"main: call Agent call_1",
			"main: result Agent call_1: found it",
			"close call_1 ok",
			"open call_1#2 by call_1",
			"call_1#2: call Read call_9",
			"call_1#2: result Read call_9: load()",
			"main: call Agent call_1",
			"main: result Agent call_1: read it",
			"close call_1#2 ok",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, kimi.Plugin, "kimi", tt.lines, tt.want)
		})
	}
}
