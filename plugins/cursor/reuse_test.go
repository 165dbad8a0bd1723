//go:build !wasip1

package cursor_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
)

// TestReusedCallID checks conversations whose model server names every
// call call_1: a call after the first call's result is a call of its own
// with its own result, in an agent transcript (whose tool_use blocks
// mostly carry no id) and in the IDE's rows (read whole again when the
// session changes: an earlier bubble naming call_1 is not the later
// call), while a result sent again, a bubble read again or a call
// repeated before its result is still the first call's.
func TestReusedCallID(t *testing.T) {
	const prompt = `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nGo.\n</user_query>"}]}}`
	use := func(id, name string) string {
		if id != "" {
			id = `"id":"` + id + `",`
		}
		return `{"role":"assistant","message":{"content":[{"type":"tool_use",` + id + `"name":"` + name + `","input":{"command":"ls"}}]}}`
	}
	result := func(id, output string) string {
		if id != "" {
			id = `"tool_use_id":"` + id + `",`
		}
		return `{"role":"user","message":{"content":[{"type":"tool_result",` + id + `"content":"` + output + `"}]}}`
	}
	// bubble is an IDE row: bubble b calling call_1, with its result
	// when output is not "" (its text tells versions of a row apart).
	bubble := func(b, name, output, text string) string {
		tool := `{"toolCallId":"call_1","name":"` + name + `","rawArgs":"{}","status":"loading"}`
		if output != "" {
			tool = `{"toolCallId":"call_1","name":"` + name + `","rawArgs":"{}","status":"completed","result":"` + output + `"}`
		}
		return `{"$twasm":"row","table":"bubble","key":"` + b + `","version":1,"row":{"id":"` + b + `","value":{"bubbleId":"` + b + `","type":2,"text":"` + text + `","toolFormerData":` + tool + `}}}`
	}
	ide := func(rows ...string) []string {
		return append([]string{
			`{"$twasm":"source","store":"Cursor IDE","session":"c1"}`,
			`{"$twasm":"row","table":"composer","key":"c1","version":1,"row":{"id":"c1","value":{"composerId":"c1"}}}`,
			`{"$twasm":"row","table":"bubble","key":"b1","version":1,"row":{"id":"b1","value":{"bubbleId":"b1","type":1,"text":"Go."}}}`,
		}, rows...)
	}
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"transcript: reused after its result", []string{prompt,
			use("call_1", "Shell"), result("call_1", "main.go"), use("call_1", "Read"), result("call_1", "package main")},
			[]string{"Shell", "Read"}, []string{"main.go", "package main"}},
		{"transcript: no ids", []string{prompt,
			use("", "Shell"), result("", "main.go"), use("", "Read"), result("", "package main")},
			[]string{"Shell", "Read"}, []string{"main.go", "package main"}},
		{"transcript: result sent again", []string{prompt,
			use("call_1", "Shell"), result("call_1", "main.go"), result("call_1", "main.go again")},
			[]string{"Shell"}, []string{"main.go"}},
		{"transcript: call repeated before its result", []string{prompt,
			use("call_1", "Shell"), use("call_1", "Shell"), result("call_1", "main.go")},
			[]string{"Shell"}, []string{"main.go"}},
		{"ide: reused after its result",
			ide(bubble("b2", "run_terminal_cmd", "main.go", ""), bubble("b3", "read_file", "package main", "")),
			[]string{"run_terminal_cmd", "read_file"}, []string{"main.go", "package main"}},
		{"ide: reused, its result when the session is read again", append(
			ide(bubble("b2", "run_terminal_cmd", "main.go", ""), bubble("b3", "read_file", "", "")),
			ide(bubble("b2", "run_terminal_cmd", "main.go", ""), bubble("b3", "read_file", "package main", ""))...),
			[]string{"run_terminal_cmd", "read_file"}, []string{"main.go", "package main"}},
		{"ide: an earlier bubble changed while the reused call runs", append(
			ide(bubble("b2", "run_terminal_cmd", "main.go", ""), bubble("b3", "read_file", "", "")),
			ide(bubble("b2", "run_terminal_cmd", "main.go", "Listed."), bubble("b3", "read_file", "", ""))...),
			[]string{"run_terminal_cmd", "read_file"}, []string{"main.go"}},
		{"ide: a bubble read again with its result",
			ide(bubble("b2", "run_terminal_cmd", "main.go", ""), bubble("b2", "run_terminal_cmd", "main.go", "Listed.")),
			[]string{"run_terminal_cmd"}, []string{"main.go"}},
		{"ide: call repeated before its result",
			ide(bubble("b2", "run_terminal_cmd", "", ""), bubble("b3", "run_terminal_cmd", "", ""),
				bubble("b2", "run_terminal_cmd", "main.go", ""), bubble("b3", "run_terminal_cmd", "main.go", "")),
			[]string{"run_terminal_cmd"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, cursor.Plugin, "cursor", tt.lines, tt.calls, tt.results)
		})
	}
}
