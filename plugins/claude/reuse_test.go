//go:build !wasip1

package claude_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
)

// TestReusedCallID checks a session whose model server names every call
// call_1 (Claude Code pointed at another model through a proxy): a call in
// another message, after the first call's result, is a call of its own
// with its own result, while a result sent again, a call repeated before
// its result, the same message again and a streamed block's snapshot
// after its result are still the first call's.
func TestReusedCallID(t *testing.T) {
	rec := func(uuid, typ, msg string) string {
		return `{"type":"` + typ + `","uuid":"` + uuid + `","sessionId":"s1","timestamp":"2026-01-05T10:00:00.000Z","message":` + msg + `}`
	}
	call := func(uuid, msgID, name string) string {
		return rec(uuid, "assistant", `{"id":"`+msgID+`","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"call_1","name":"`+name+`","input":{"command":"ls"}}]}`)
	}
	result := func(uuid, output string) string {
		return rec(uuid, "user", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"`+output+`"}]}`)
	}
	user := rec("u1", "user", `{"role":"user","content":"Go."}`)
	// ev is a stream-json-partial line.
	ev := func(e string) string {
		return `{"type":"stream_event","event":` + e + `,"session_id":"s1","parent_tool_use_id":null}`
	}
	streamed := []string{
		ev(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[]}}`),
		ev(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"call_1","name":"Bash","input":{}}}`),
		ev(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}`),
		ev(`{"type":"content_block_stop","index":0}`),
	}
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", []string{
			user, call("a1", "msg_1", "Bash"), result("r1", "main.go"), call("a2", "msg_2", "Read"), result("r2", "package main"),
		}, []string{"Bash", "Read"}, []string{"main.go", "package main"}},
		{"result sent again", []string{
			user, call("a1", "msg_1", "Bash"), result("r1", "main.go"), result("r1b", "main.go again"),
		}, []string{"Bash"}, []string{"main.go"}},
		{"call repeated before its result", []string{
			user, call("a1", "msg_1", "Bash"), call("a2", "msg_2", "Bash"), result("r1", "main.go"),
		}, []string{"Bash"}, []string{"main.go"}},
		{"message sent again after its result", []string{
			user, call("a1", "msg_1", "Bash"), result("r1", "main.go"), call("a1", "msg_1", "Bash"),
		}, []string{"Bash"}, []string{"main.go"}},
		{"streamed block's snapshot after its result", append(append([]string{}, streamed...),
			result("r1", "main.go"),
			`{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"call_1","name":"Bash","input":{"command":"ls"}}]},"session_id":"s1","parent_tool_use_id":null,"uuid":"a1"}`,
		), []string{"Bash"}, []string{"main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, claude.Plugin, "claude", tt.lines, tt.calls, tt.results)
		})
	}
}
