//go:build !wasip1

package copilot_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestReusedCallID checks session logs whose model server names every
// call call_1 (the CLI pointed at a custom provider): a call in a new
// message after the first call's result is a call of its own with its own
// result (or its own refusal), while a result sent again, a call repeated
// before its result, and a message or an event read again are still the
// first call's.
func TestReusedCallID(t *testing.T) {
	ev := func(id, typ, data string) string {
		return `{"type":"` + typ + `","data":` + data + `,"id":"` + id + `","timestamp":"2026-09-04T10:00:00.000Z","parentId":null}`
	}
	msg := func(id, msgID, name string) string {
		return ev(id, "assistant.message", `{"messageId":"`+msgID+`","content":"","toolRequests":[{"toolCallId":"call_1","name":"`+name+`","arguments":{"command":"ls"},"type":"function"}]}`)
	}
	start := func(id, name string) string {
		return ev(id, "tool.execution_start", `{"toolCallId":"call_1","toolName":"`+name+`","arguments":{"command":"ls"}}`)
	}
	done := func(id, output string) string {
		return ev(id, "tool.execution_complete", `{"toolCallId":"call_1","success":true,"result":{"content":"`+output+`"}}`)
	}
	user := ev("e0", "user.message", `{"content":"Go."}`)
	first := []string{user, msg("e1", "m1", "bash"), start("e2", "bash"), done("e3", "main.go")}
	then := func(lines ...string) []string { return append(append([]string{}, first...), lines...) }
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", then(msg("e4", "m2", "view"), start("e5", "view"), done("e6", "package main")),
			[]string{"bash", "view"}, []string{"main.go", "package main"}},
		{"reused, the second refused", then(msg("e4", "m2", "bash"), start("e5", "bash"),
			ev("e6", "permission.completed", `{"requestId":"r2","toolCallId":"call_1","result":{"kind":"denied-interactively-by-user"}}`)),
			[]string{"bash", "bash"}, []string{"main.go", ""}},
		{"result sent again", then(done("e4", "main.go again")),
			[]string{"bash"}, []string{"main.go"}},
		{"call repeated before its result", []string{user, msg("e1", "m1", "bash"), start("e2", "bash"), msg("e3", "m2", "bash"), done("e4", "main.go")},
			[]string{"bash"}, []string{"main.go"}},
		{"message read again after its result", then(msg("e4", "m1", "bash")),
			[]string{"bash"}, []string{"main.go"}},
		{"event replayed after its result", then(msg("e1", "m1", "bash"), start("e2", "bash")),
			[]string{"bash"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, copilot.Plugin, "copilot", tt.lines, tt.calls, tt.results)
		})
	}
}
