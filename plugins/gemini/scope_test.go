//go:build !wasip1

package gemini_test

import (
	"strings"
	"testing"

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
