//go:build !wasip1

package amp_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/amp"
)

// TestSubAgentReusedCallID checks threads whose model server names every
// call call_1 and that run a Task twice: the second Task call, after the
// first's result, opens a scope of its own (call_1#2), which its result
// closes, also when the thread is read again whole; a Task call still
// without its result at the end leaves its own scope incomplete.
func TestSubAgentReusedCallID(t *testing.T) {
	msg := threadMsg
	task := func(id int, desc string) string {
		return msg(id, "assistant", `{"type":"tool_use","id":"call_1","name":"Task","input":{"description":"`+desc+`","prompt":"`+desc+`."}}`)
	}
	result := func(id int, output string) string {
		run := `{"status":"in-progress"}`
		if output != "" {
			run = `{"status":"done","result":"` + output + `"}`
		}
		return msg(id, "user", `{"type":"tool_result","toolUseID":"call_1","run":`+run+`}`)
	}
	two := []string{
		"main: call Task call_1",
		"open call_1 by call_1",
		"main: result Task call_1: parser found",
		"close call_1 ok",
		"main: call Task call_1",
		"open call_1#2 by call_1",
		"main: result Task call_1: lexer found",
		"close call_1#2 ok",
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"reused after its result", []string{
			thread(task(1, "Find the parser"), result(2, "parser found"), task(3, "Find the lexer"), result(4, "lexer found")),
		}, two},
		{"reused, the thread read again", []string{
			thread(task(1, "Find the parser"), result(2, "parser found")),
			thread(task(1, "Find the parser"), result(2, "parser found"), task(3, "Find the lexer"), result(4, "")),
			thread(task(1, "Find the parser"), result(2, "parser found"), task(3, "Find the lexer"), result(4, "lexer found")),
		}, two},
		{"reused, the second still running at the end", []string{
			thread(task(1, "Find the parser"), result(2, "parser found"), task(3, "Find the lexer"), result(4, "")),
		}, append(two[:6:6], "close call_1#2 incomplete")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, amp.Plugin, "amp", tt.lines, tt.want)
		})
	}
}
