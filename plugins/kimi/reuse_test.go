//go:build !wasip1

package kimi_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// TestReusedCallID checks journals whose model server names every call
// call_1 (Kimi Code or the Kimi CLI pointed at a custom provider): a call
// after the first call's result is a call of its own with its own result,
// while a result sent again, a call repeated before its result and the
// copies of results in the model's context (even one written after the
// call that reuses the id) are still the first call's.
func TestReusedCallID(t *testing.T) {
	rec := func(typ, rest string) string { return `{"type":"` + typ + `",` + rest + `,"time":1767261600000}` }
	loop := func(ev string) string { return rec("context.append_loop_event", `"event":`+ev) }
	step := func(uuid string) string { return loop(`{"type":"step.begin","uuid":"` + uuid + `"}`) }
	call := func(name string) string {
		return loop(`{"type":"tool.call","toolCallId":"call_1","name":"` + name + `","args":{"command":"ls"}}`)
	}
	result := func(output string) string {
		return loop(`{"type":"tool.result","toolCallId":"call_1","result":{"output":"` + output + `"}}`)
	}
	copied := func(output string) string {
		return rec("context.append_message", `"message":{"role":"tool","content":[{"type":"text","text":"`+output+`"}],"toolCallId":"call_1"}`)
	}
	prompt := rec("turn.prompt", `"input":[{"type":"text","text":"Go."}]`)
	// The Kimi CLI's wire log.
	legacy := func(typ, payload string) string {
		return `{"timestamp":1767261600.0,"message":{"type":"` + typ + `","payload":` + payload + `}}`
	}
	lcall := func(name string) string {
		return legacy("ToolCall", `{"type":"function","id":"call_1","function":{"name":"`+name+`","arguments":"{\"command\":\"ls\"}"}}`)
	}
	lresult := func(output string) string {
		return legacy("ToolResult", `{"tool_call_id":"call_1","return_value":{"is_error":false,"output":"`+output+`"}}`)
	}
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", []string{
			prompt, step("s1"), call("Bash"), result("main.go"), copied("main.go"),
			step("s2"), call("Read"), result("package main"), copied("package main"),
		}, []string{"Bash", "Read"}, []string{"main.go", "package main"}},
		{"the first result's copy after the reused call", []string{
			prompt, step("s1"), call("Bash"), result("main.go"),
			step("s2"), call("Read"), copied("main.go"), result("package main"),
		}, []string{"Bash", "Read"}, []string{"main.go", "package main"}},
		{"result sent again", []string{
			prompt, step("s1"), call("Bash"), result("main.go"), result("main.go again"), copied("main.go"),
		}, []string{"Bash"}, []string{"main.go"}},
		{"call repeated before its result", []string{
			prompt, step("s1"), call("Bash"), call("Bash"), result("main.go"),
		}, []string{"Bash"}, []string{"main.go"}},
		{"legacy: reused after its result", []string{
			legacy("TurnBegin", `{"user_input":"Go."}`), lcall("Shell"), lresult("main.go"),
			legacy("StepBegin", `{"n":2}`), lcall("ReadFile"), lresult("package main"),
		}, []string{"Shell", "ReadFile"}, []string{"main.go", "package main"}},
		{"legacy: result sent again", []string{
			legacy("TurnBegin", `{"user_input":"Go."}`), lcall("Shell"), lresult("main.go"), lresult("main.go again"),
		}, []string{"Shell"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, kimi.Plugin, "kimi", tt.lines, tt.calls, tt.results)
		})
	}
}
