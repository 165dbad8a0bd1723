//go:build !wasip1

package droid_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/droid"
)

// TestReusedCallID checks a session whose model server names every call
// call_1: a call after the first call's result is a call of its own with
// its own result, while a result sent again (or a call repeated before
// its result) is still the same call's.
func TestReusedCallID(t *testing.T) {
	msg := func(id, role, content string) string {
		return `{"type":"message","id":"` + id + `","timestamp":"2026-01-02T10:00:00.000Z","message":{"role":"` + role + `","content":[` + content + `]}}`
	}
	call := func(id, name string) string {
		return msg(id, "assistant", `{"type":"tool_use","id":"call_1","name":"`+name+`","input":{"command":"ls"}}`)
	}
	result := func(id, output string) string {
		return msg(id, "user", `{"type":"tool_result","tool_use_id":"call_1","content":"`+output+`"}`)
	}
	user := msg("u1", "user", `{"type":"text","text":"Go."}`)
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", []string{
			user, call("a1", "Execute"), result("r1", "main.go"), call("a2", "Read"), result("r2", "package main"),
		}, []string{"Execute", "Read"}, []string{"main.go", "package main"}},
		{"result sent again", []string{
			user, call("a1", "Execute"), result("r1", "main.go"), result("r1b", "main.go again"),
		}, []string{"Execute"}, []string{"main.go"}},
		{"call repeated before its result", []string{
			user, call("a1", "Execute"), call("a1b", "Execute"), result("r1", "main.go"),
		}, []string{"Execute"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, droid.Plugin, "droid", tt.lines, tt.calls, tt.results)
		})
	}
}
