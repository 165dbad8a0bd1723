//go:build !wasip1

package pi_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// TestReusedCallID checks sessions whose model server names every call
// call_1: a call after the first call's result is a call of its own with
// its own result, in the session and in a sub-agent's messages (which
// the subagent extension keeps each result of twice), while a result
// sent again, a call repeated before its result or an entry replayed is
// still the first call's.
func TestReusedCallID(t *testing.T) {
	const header = `{"type":"session","version":3,"id":"s1","timestamp":"2026-09-11T09:00:00.000Z","cwd":"/home/me/proj"}`
	// The messages, as a session entry's message or a sub-agent's.
	user := `{"role":"user","content":[{"type":"text","text":"Go."}]}`
	call := func(name string) string {
		return `{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"` + name + `","arguments":{"command":"ls"}}],"model":"m","stopReason":"toolUse"}`
	}
	result := func(name, output string) string {
		return `{"role":"toolResult","toolCallId":"call_1","toolName":"` + name + `","content":[{"type":"text","text":"` + output + `"}],"isError":false}`
	}
	entry := func(id, msg string) string {
		return `{"type":"message","id":"` + id + `","parentId":null,"timestamp":"2026-09-11T09:00:01.000Z","message":` + msg + `}`
	}
	// session is the entries of msgs, each with an id of its own and the
	// one before as its parent.
	session := func(msgs ...string) []string {
		lines := []string{header}
		for i, m := range msgs {
			e := entry("e000000"+string(rune('0'+i)), m)
			if i > 0 {
				e = strings.Replace(e, `"parentId":null`, `"parentId":"e000000`+string(rune('0'+i-1))+`"`, 1)
			}
			lines = append(lines, e)
		}
		return lines
	}
	// sub is a session whose one call ran a sub-agent with msgs.
	sub := func(msgs ...string) []string {
		details := `{"results":[{"agent":"scout","task":"Look.","exitCode":0,"messages":[` + strings.Join(msgs, ",") + `]}]}`
		return session(user,
			`{"role":"assistant","content":[{"type":"toolCall","id":"toolu_sub","name":"subagent","arguments":{"agent":"scout","task":"Look."}}],"model":"m","stopReason":"toolUse"}`,
			`{"role":"toolResult","toolCallId":"toolu_sub","toolName":"subagent","content":[{"type":"text","text":"done"}],"details":`+details+`,"isError":false}`)
	}
	replayed := session(user, call("bash"), result("bash", "main.go"))
	replayed = append(replayed, replayed[2:]...)
	tests := []struct {
		name           string
		lines          []string
		calls, results []string // the calls' names, the results' outputs
	}{
		{"reused after its result", session(user, call("bash"), result("bash", "main.go"), call("read"), result("read", "package main")),
			[]string{"bash", "read"}, []string{"main.go", "package main"}},
		{"result sent again", session(user, call("bash"), result("bash", "main.go"), result("bash", "main.go again")),
			[]string{"bash"}, []string{"main.go"}},
		{"call repeated before its result", session(user, call("bash"), call("bash"), result("bash", "main.go")),
			[]string{"bash"}, []string{"main.go"}},
		{"entries replayed", replayed, []string{"bash"}, []string{"main.go"}},
		{"sub-agent: reused after its result, each result kept twice",
			sub(user, call("bash"), result("bash", "main.go"), result("bash", "main.go"), call("read"), result("read", "package main"), result("read", "package main")),
			[]string{"subagent", "bash", "read"}, []string{"main.go", "package main", "done"}},
		{"sub-agent: result sent again", sub(user, call("bash"), result("bash", "main.go"), result("bash", "main.go again")),
			[]string{"subagent", "bash"}, []string{"main.go", "done"}},
		{"sub-agent: call repeated before its result", sub(user, call("bash"), call("bash"), result("bash", "main.go")),
			[]string{"subagent", "bash"}, []string{"main.go", "done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantNamesOutputs(t, pi.Plugin, "pi", tt.lines, tt.calls, tt.results)
		})
	}
}
