//go:build !wasip1

package amp_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/amp"
)

// TestReusedCallID checks threads whose model server names every call
// call_1: a call in a later message, after the first call's result, is a
// call of its own with its own result, also when the thread is read
// again whole (its earlier messages naming call_1 too), while a result
// sent again, or a call repeated before its result, is still the first
// call's.
func TestReusedCallID(t *testing.T) {
	msg := threadMsg
	call := func(id int, name string) string {
		return msg(id, "assistant", `{"type":"tool_use","id":"call_1","name":"`+name+`","input":{"cmd":"ls"}}`)
	}
	result := func(id int, output string) string {
		run := `{"status":"in-progress"}`
		if output != "" {
			run = `{"status":"done","result":"` + output + `"}`
		}
		return msg(id, "user", `{"type":"tool_result","toolUseID":"call_1","run":`+run+`}`)
	}
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", []string{
			thread(call(1, "Bash"), result(2, "main.go"), call(3, "Read"), result(4, "package main")),
		}, []string{"Bash", "Read"}, []string{"main.go", "package main"}},
		{"reused, its result in the thread read again", []string{
			thread(call(1, "Bash"), result(2, "main.go"), call(3, "Read"), result(4, "")),
			thread(call(1, "Bash"), result(2, "main.go"), call(3, "Read"), result(4, "package main")),
		}, []string{"Bash", "Read"}, []string{"main.go", "package main"}},
		{"reused, the thread read again while it runs", []string{
			thread(call(1, "Bash"), result(2, "main.go")),
			thread(call(1, "Bash"), result(2, "main.go"), call(3, "Read"), result(4, "")),
			thread(call(1, "Bash"), result(2, "main.go"), call(3, "Read"), result(4, "")),
		}, []string{"Bash", "Read"}, []string{"main.go"}},
		{"result sent again", []string{
			thread(call(1, "Bash"), result(2, "main.go"), result(3, "main.go again")),
		}, []string{"Bash"}, []string{"main.go"}},
		{"call repeated before its result", []string{
			thread(call(1, "Bash"), call(2, "Bash"), result(3, "main.go")),
		}, []string{"Bash"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, amp.Plugin, "amp", tt.lines, tt.calls, tt.results)
		})
	}
}

// threadMsg is message id of a thread, of role, holding the content
// blocks content (JSON, comma-separated).
func threadMsg(id int, role, content string) string {
	return `{"role":"` + role + `","messageId":` + strconv.Itoa(id) + `,"meta":{"sentAt":1767607200000},"content":[` + content + `]}`
}

// thread is a thread document whose messages are a prompt, then msgs.
func thread(msgs ...string) string {
	return `{"v":1,"id":"T-1","created":1767607200000,"messages":[` + threadMsg(0, "user", `{"type":"text","text":"Go."}`) + `,` + strings.Join(msgs, ",") + `]}`
}
