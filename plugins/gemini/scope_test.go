//go:build !wasip1

package gemini_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
)

// TestSubAgentReusedCallID checks sessions whose model server names every
// call call_1 and that run a sub-agent twice: the second sub-agent call,
// after the first's result, opens a scope of its own (call_1#2), which
// its result closes, while a record appended again or a document read
// again opens none.
func TestSubAgentReusedCallID(t *testing.T) {
	const user = `{"id":"u1","timestamp":"2026-06-01T08:00:00.000Z","type":"user","content":[{"text":"Go."}]}`
	report := func(r string) string {
		return `Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\n` + r
	}
	// rec is a gemini record running the investigator as call_1, with
	// its result when output is not "".
	rec := func(id, objective, output string) string {
		args := `{"objective":"` + objective + `"}`
		c := `{"id":"call_1","name":"codebase_investigator","args":` + args + `,"status":"executing"}`
		if output != "" {
			c = `{"id":"call_1","name":"codebase_investigator","args":` + args + `,"status":"success","result":[{"functionResponse":{"id":"call_1","name":"codebase_investigator","response":{"output":"` + report(output) + `"}}}]}`
		}
		return `{"id":"` + id + `","timestamp":"2026-06-01T08:00:01.000Z","type":"gemini","content":"","model":"m","toolCalls":[` + c + `]}`
	}
	const header = `{"sessionId":"s1","projectHash":"h","startTime":"2026-06-01T08:00:00.000Z","kind":"main"}`
	doc := func(msgs ...string) string { return `{"sessionId":"s1","messages":[` + strings.Join(msgs, ",") + `]}` }
	ev := func(typ, rest string) string {
		return `{"type":"` + typ + `","timestamp":"2026-06-01T08:00:01.000Z",` + rest + `}`
	}
	use := func(objective string) string {
		return ev("tool_use", `"tool_name":"codebase_investigator","tool_id":"call_1","parameters":{"objective":"`+objective+`"}`)
	}
	res := func(output string) string {
		return ev("tool_result", `"tool_id":"call_1","status":"success","output":"`+report(output)+`"`)
	}
	start := []string{ev("init", `"session_id":"s1","model":"m"`), ev("message", `"role":"user","content":"Go."`)}
	two := []string{
		"main: call codebase_investigator call_1",
		"open call_1 by call_1",
		"main: result codebase_investigator call_1: " + strings.ReplaceAll(report("first"), `\n`, "\n"),
		"close call_1 ok",
		"main: call codebase_investigator call_1",
		"open call_1#2 by call_1",
		"main: result codebase_investigator call_1: " + strings.ReplaceAll(report("second"), `\n`, "\n"),
		"close call_1#2 ok",
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"records", []string{
			header, user, rec("g1", "Map the parser.", "first"), rec("g2", "Map the lexer.", "second"),
		}, two},
		{"records appended again", []string{
			header, user, rec("g1", "Map the parser.", ""), rec("g1", "Map the parser.", "first"),
			rec("g2", "Map the lexer.", ""), rec("g1", "Map the parser.", "first"), rec("g2", "Map the lexer.", "second"),
		}, two},
		{"document read again", []string{
			doc(user, rec("g1", "Map the parser.", "first")),
			doc(user, rec("g1", "Map the parser.", "first"), rec("g2", "Map the lexer.", "")),
			doc(user, rec("g1", "Map the parser.", "first"), rec("g2", "Map the lexer.", "second")),
		}, two},
		{"stream", append(start,
			use("Map the parser."), res("first"), use("Map the lexer."), use("Map the lexer."), res("second"), ev("result", `"status":"success"`)),
			two},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, gemini.Plugin, "gemini", tt.lines, tt.want)
		})
	}
}

// TestSubAgentOwnChat checks sub-agent calls whose record names the
// sub-agent by its agentId (Gemini CLI 0.39 and later, whose sub-agent's
// own chat holds its conversation, archived as the child run, linked at
// the call by the host): such a call opens no scope, whether its record
// names the agent at once, is appended again, or is a document's; a
// call whose record names none (earlier builds) still opens one, as
// does a record that names it only once its result came (the scope
// opened at the call is closed by the result), as does a stream's
// invoke_agent call (0.39 and later; the stream names no agent).
// Before, every such call of a session opened a scope, a second child
// beside the chat's run, and a stream's invoke_agent call whose result
// had not come opened none.
func TestSubAgentOwnChat(t *testing.T) {
	const header = `{"sessionId":"s1","projectHash":"h","startTime":"2026-06-01T08:00:00.000Z","kind":"main"}`
	const user = `{"id":"u1","timestamp":"2026-06-01T08:00:00.000Z","type":"user","content":[{"text":"Go."}]}`
	const output = `Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\nparse/parse.go`
	// rec is a gemini record whose invoke_agent call ran the
	// investigator, with its result when done, naming it agent when
	// agent is not "".
	rec := func(done bool, agent string) string {
		c := `{"id":"c1","name":"invoke_agent","args":{"agent_name":"codebase_investigator","prompt":"Find the parser."},"status":"executing"`
		if done {
			c = `{"id":"c1","name":"invoke_agent","args":{"agent_name":"codebase_investigator","prompt":"Find the parser."},"status":"success","result":[{"functionResponse":{"id":"c1","name":"invoke_agent","response":{"output":"` + output + `"}}}]`
		}
		if agent != "" {
			c += `,"agentId":"` + agent + `"`
		}
		return `{"id":"g1","timestamp":"2026-06-01T08:00:01.000Z","type":"gemini","content":"","model":"m","toolCalls":[` + c + `}]}`
	}
	result := "main: result invoke_agent c1: " + strings.ReplaceAll(output, `\n`, "\n")
	own := []string{"main: call invoke_agent c1", result}
	scoped := []string{"main: call invoke_agent c1", "open c1 by c1", result, "close c1 ok"}
	for _, tt := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"named", []string{header, user, rec(true, "a-1")}, own},
		{"named, appended again", []string{header, user, rec(true, "a-1"), rec(true, "a-1")}, own},
		{"named, a document", []string{`{"sessionId":"s1","messages":[` + user + `,` + rec(true, "a-1") + `]}`}, own},
		{"not named", []string{header, user, rec(true, "")}, scoped},
		{"named once done", []string{header, user, rec(false, ""), rec(true, "a-1")}, scoped},
		{"stream", []string{
			`{"type":"init","timestamp":"2026-06-01T08:00:00.000Z","session_id":"s1","model":"m"}`,
			`{"type":"tool_use","timestamp":"2026-06-01T08:00:01.000Z","tool_name":"invoke_agent","tool_id":"c1","parameters":{"agent_name":"codebase_investigator","prompt":"Find the parser."}}`,
			`{"type":"tool_result","timestamp":"2026-06-01T08:00:02.000Z","tool_id":"c1","status":"success","output":"` + output + `"}`,
			`{"type":"result","timestamp":"2026-06-01T08:00:03.000Z","status":"success"}`,
		}, scoped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, gemini.Plugin, "gemini", tt.lines, tt.want)
		})
	}
}

// TestSubAgentChatMarked: a chat whose header says kind "subagent" (a
// JSON Lines header or a whole document) is a sub-agent's, and the step
// says so in a warning naming the id it states (Gemini CLI 0.31 to 0.36
// wrote such a chat beside its session's, stating the session's id and
// no call, so it is archived as a run of its own and would otherwise read
// as a user's session); a main chat, or one of a build that states no
// kind, is not. A whole document (Gemini CLI before 0.39) names no call
// that started it, nor does its session's record of the call name it:
// its warning says the call cannot be named; a JSON Lines chat's says
// its session's record of the call names it (agentId, 0.39 and later).
// Before, both said the same, and neither that the call of a chat
// written before 0.39 cannot be named.
func TestSubAgentChatMarked(t *testing.T) {
	const user = `{"id":"u1","timestamp":"2026-03-10T09:15:02.200Z","type":"user","content":[{"text":"Your task is to find the retry policy."}]}`
	const (
		records  = `gemini: a sub-agent's chat (kind "subagent"), not a user's session: its prompt is the calling agent's; it states its own id s1, which its session's record of the call that started it names (agentId, Gemini CLI 0.39 and later)`
		document = `gemini: a sub-agent's chat (kind "subagent"), not a user's session: its prompt is the calling agent's; it states the id s1 (before Gemini CLI 0.37 its session's, since 0.37 its own). The call that started it cannot be named: a chat written as one JSON document (Gemini CLI before 0.39) names no call, and its session's record of the call does not name the chat`
	)
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"records of a sub-agent", `{"sessionId":"s1","projectHash":"h","startTime":"2026-03-10T09:15:02.100Z","kind":"subagent"}` + "\n" + user + "\n", []string{records}},
		{"document of a sub-agent", `{"sessionId":"s1","projectHash":"h","messages":[` + user + `],"kind":"subagent"}` + "\n", []string{document}},
		{"records of the main agent", `{"sessionId":"s1","projectHash":"h","startTime":"2026-03-10T09:15:02.100Z","kind":"main"}` + "\n" + user + "\n", nil},
		{"document stating no kind", `{"sessionId":"s1","projectHash":"h","messages":[` + user + `]}` + "\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := plugintest.Run(t, gemini.Plugin, []byte(c.in), normalize.Options{Provider: "gemini"}).Result
			if !slices.Equal(res.Warnings, c.want) {
				t.Errorf("warnings %q, want %q", res.Warnings, c.want)
			}
		})
	}
}
