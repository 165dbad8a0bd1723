package normalize

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/transcript"
)

func do(ops ...string) string { return `{"do":[` + strings.Join(ops, ",") + `]}` }

func events(c *checkSink, scope string) []*transcript.Event { return c.Events(scope) }

func TestMessageAcrossLines(t *testing.T) {
	sink, res := runScript(t,
		do(`{"op":"open","key":"m1"}`, `{"op":"block","key":"m1","slot":0,"type":"thinking","thinking":"hmm"}`),
		do(`{"op":"open","key":"m1","id":"msg_1","model":"opus","time":"2024-05-06T07:08:09.5Z"}`, `{"op":"block","key":"m1","slot":1,"type":"text","text":"Hello"}`),
		do(`{"op":"open","key":"m1","id":"other","model":"other"}`, `{"op":"block","key":"m1","slot":1,"type":"text","text":"Hello"}`),
		do(`{"op":"close","key":"m1","stop":"end_turn","usage":{"in":10,"out":5}}`),
	)
	evs := events(sink, "")
	require.Len(t, evs, 1)
	ev := evs[0]
	assert.Equal(t, transcript.MessageAssistant, ev.Type)
	m := ev.Message()
	assert.Equal(t, "msg_1", m.ID, "re-open fills empty fields only")
	assert.Equal(t, "opus", m.Model)
	assert.Equal(t, "end_turn", m.StopReason)
	assert.Equal(t, 1, m.RawLine)
	require.Len(t, m.Blocks, 2, "the repeated snapshot of slot 1 is written once")
	assert.Equal(t, "hmm", m.Blocks[0].Thinking)
	assert.Equal(t, "Hello", m.Blocks[1].Text)
	assert.Equal(t, int64(10), *m.Usage.InputTokens)
	assert.Equal(t, time.Date(2024, 5, 6, 7, 8, 9, 5e8, time.UTC), ev.Timestamp.UTC(), "the provider time given on re-open is used")
	assert.Equal(t, 4, res.Lines)
}

func TestBlockSlotReplacementAndAppend(t *testing.T) {
	sink, res := runScript(t,
		do(`{"op":"block","key":"m","slot":0,"type":"text","text":"v1"}`,
			`{"op":"block","key":"m","slot":0,"type":"text","text":"v2"}`,
			`{"op":"block","key":"m","type":"text","text":"appended"}`,
			`{"op":"append","key":"m","slot":3,"field":"thinking","v":"th"}`,
			`{"op":"append","key":"m","slot":3,"field":"thinking","v":"ink"}`,
			`{"op":"append","key":"m","field":"thinking","v":"ing"}`,
			`{"op":"append","key":"m","slot":4,"field":"text","v":"a\"b"}`,
			`{"op":"append","key":"m","slot":4,"field":"text","v":"c"}`,
			`{"op":"append","key":"m","slot":5,"field":"tool_input","v":"{\"a\":"}`,
			`{"op":"append","key":"m","slot":5,"field":"tool_input","v":" [1, 2]}"}`,
			`{"op":"append","key":"m","slot":6,"field":"tool_input","v":""}`,
			`{"op":"append","key":"m","slot":7,"field":"tool_input","v":"{\"cut"}`,
			`{"op":"block","key":"m","slot":8,"type":"tool_use","tool_name":"T","tool_id":"t8","tool_input":{"x": [ 1 ]}}`,
			`{"op":"block","key":"m","slot":9,"type":"tool_use","tool_name":"T","tool_id":"t9"}`,
			`{"op":"append","key":"m","slot":10,"field":"tool_content","v":"out"}`,
			`{"op":"append","key":"m","slot":11,"field":"command","v":"ls"}`,
			`{"op":"append","key":"m","slot":12,"field":"chunk","v":"ch"}`,
			`{"op":"block","key":"m","slot":13,"type":"weird","text":"w"}`,
			`{"op":"block","key":"m","slot":14,"type":"text","text":"o","origin":"bogus"}`,
			`{"op":"close","key":"m"}`),
	)
	evs := events(sink, "")
	require.Len(t, evs, 1)
	b := evs[0].Message().Blocks
	var got []string
	for _, x := range b {
		got = append(got, fmt.Sprintf("%s:%s%s%s%s%s%s", x.Type, x.Text, x.Thinking, x.ToolInput, x.ToolContent, x.Command, x.Chunk))
	}
	assert.Equal(t, []string{
		"text:v2", "text:appended", "thinking:thinking", `text:a"bc`,
		`tool_use:{"a":[1,2]}`, "tool_use:{}", `tool_use:"{\"cut"`, `tool_use:{"x":[1]}`, "tool_use:{}",
		"tool_result:out", "command:ls", "stream:ch", "text:w", "text:o",
	}, got)
	assert.Empty(t, b[13].Origin, "an unknown origin is dropped")
	joined := strings.Join(res.Warnings, "\n")
	assert.Contains(t, joined, "streamed input is not JSON")
	assert.Contains(t, joined, `unknown block type "weird"`)
}

func TestAppendToUnappendableField(t *testing.T) {
	sink, res := runScript(t, do(`{"op":"append","key":"m","slot":0,"field":"bogus","v":"x"}`, `{"op":"close","key":"m"}`))
	assert.Empty(t, events(sink, ""), "no empty block is made up")
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "cannot be appended to")
}

func TestEmptyMessageDroppedAndUnclosedClosedAtFinish(t *testing.T) {
	sink, res := runScript(t,
		do(`{"op":"open","key":"empty"}`, `{"op":"close","key":"empty"}`),
		do(`{"op":"open","key":"usage-only"}`, `{"op":"close","key":"usage-only","usage":{"out":3}}`),
		do(`{"op":"open","key":"never","role":"user"}`, `{"op":"block","key":"never","type":"text","text":"hi","origin":"system_prompt"}`),
		do(`{"op":"close","key":"unknown"}`),
	)
	evs := events(sink, "")
	require.Len(t, evs, 2)
	assert.Empty(t, evs[0].Message().Blocks)
	assert.Equal(t, int64(3), *evs[0].Message().Usage.OutputTokens)
	assert.Equal(t, transcript.MessageUser, evs[1].Type)
	assert.Equal(t, transcript.OriginSystemPrompt, evs[1].Message().Blocks[0].Origin)
	assert.Equal(t, transcript.StatusIncomplete, res.Status)
}

func TestOrderingMessageBeforeToolCall(t *testing.T) {
	sink, _ := runScript(t,
		do(`{"op":"open","key":"m"}`, `{"op":"block","key":"m","slot":0,"type":"tool_use","tool_name":"Bash","tool_id":"c1","tool_input":{"command":"ls"}}`,
			`{"op":"call","id":"c1","name":"Bash","input":{"command":"ls"},"kind":"execute","cmd":"ls"}`),
		do(`{"op":"result","id":"c1","output":"file","exit":0}`),
		do(`{"op":"close","key":"m"}`),
		do(`{"op":"open","key":"m"}`, `{"op":"block","key":"m","type":"text","text":"second message, same key"}`, `{"op":"close","key":"m"}`),
	)
	evs := events(sink, "")
	var types []transcript.EventType
	for _, e := range evs {
		types = append(types, e.Type)
	}
	assert.Equal(t, []transcript.EventType{transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult, transcript.MessageAssistant}, types)
	call := evs[1].Tool()
	assert.Equal(t, `{"command":"ls"}`, string(call.Input))
	assert.Equal(t, transcript.ToolExecute, call.Kind)
	assert.Equal(t, "ls", call.Command)
	assert.Equal(t, 1, call.RawLine)
	r := evs[2].Tool()
	assert.Equal(t, "Bash", r.Name, "the result takes the call's name")
	assert.Equal(t, 0, *r.ExitCode)
	assert.Equal(t, 2, r.RawLine)
}

func TestToolLedger(t *testing.T) {
	sink, res := runScript(t,
		do(`{"op":"call","id":"c1","name":"A","input":"{\"q\": 1}"}`, `{"op":"call","id":"c1","name":"dup"}`),
		do(`{"op":"call","id":"c2","name":"B","kind":"nonsense","input":"not json"}`),
		do(`{"op":"result","id":"c3","name":"C","output":"orphan","is_error":true}`),
		do(`{"op":"result","id":"c1","output":"one"}`, `{"op":"result","id":"c1","output":"two"}`),
		do(`{"op":"call","id":"c4","name":"D","scope":"agent1"}`),
		do(`{"op":"call","name":"noid"}`, `{"op":"result","output":"noid"}`),
	)
	evs := events(sink, "")
	var got []string
	for _, e := range evs {
		p := e.Tool()
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s", e.Type, p.CallID, p.Name, p.Input, p.Output, p.Status))
	}
	assert.Equal(t, []string{
		`tool.call c1 A {"q":1}  `,
		`tool.call c2 B "not json"  `,
		`tool.call c3 C   `,
		`tool.result c3 C  orphan error`,
		`tool.result c1 A  one `,
	}, got)
	assert.Equal(t, transcript.ToolOther, evs[1].Tool().Kind)
	assert.Equal(t, []string{"c2", "agent1/c4"}, res.Dangling)
	w := strings.Join(res.Warnings, "\n")
	assert.Contains(t, w, "c3 had no tool call")
	assert.Contains(t, w, "second result for tool call c1")
	assert.Contains(t, w, "without a call id")
	assert.Len(t, events(sink, "agent1"), 1)
}

func TestUsageCostMetaFinal(t *testing.T) {
	_, res := runScript(t,
		do(`{"op":"usage","in":10,"out":2,"mode":"add"}`, `{"op":"usage","in":5,"re":1}`),
		do(`{"op":"usage","in":100,"cr":50,"mode":"set"}`, `{"op":"usage","mode":"set"}`),
		do(`{"op":"cost","usd":0.5,"mode":"add"}`, `{"op":"cost","usd":0.25,"mode":"add"}`),
		do(`{"op":"meta","sid":"s1","model":"m1"}`, `{"op":"meta","sid":"s2","model":"m2","pv":"1.2"}`, `{"op":"meta","model":"m3","override":true,"format":"jsonl"}`),
		do(`{"op":"final","text":"first"}`, `{"op":"final","text":"second"}`),
		do(`{"op":"unmapped","native":"x"}`, `{"op":"unmapped","native":"x"}`, `{"op":"unmapped"}`),
		"banner",
	)
	u := res.Usage
	require.NotNil(t, u)
	assert.Equal(t, int64(100), *u.InputTokens, "set replaces")
	assert.Equal(t, int64(2), *u.OutputTokens, "set leaves figures it does not state")
	assert.Equal(t, int64(50), *u.CacheReadTokens)
	assert.Equal(t, int64(1), *u.ReasoningTokens)
	assert.Equal(t, 0.75, *res.CostUSD)
	assert.Equal(t, "s1", res.SessionID)
	assert.Equal(t, "m3", res.Model)
	assert.Equal(t, "1.2", res.ProviderVersion)
	assert.Equal(t, "jsonl", res.Format)
	assert.Equal(t, "first", res.FinalText)
	assert.Equal(t, map[string]int{"x": 2, "(unknown)": 1, "non-json": 1}, res.Unmapped)
	assert.Equal(t, "test", res.Provider)

	_, res = runScript(t, do(`{"op":"cost","usd":2,"mode":"add"}`, `{"op":"cost","usd":1,"mode":"set"}`, `{"op":"final","text":"a"}`, `{"op":"final","text":"b","override":true}`))
	assert.Equal(t, 1.0, *res.CostUSD)
	assert.Equal(t, "b", res.FinalText)

	// A final report without text does not hide a later one.
	_, res = runScript(t, do(`{"op":"final"}`), do(`{"op":"final","text":"late"}`))
	assert.Equal(t, "late", res.FinalText)

	// A non-finite cost cannot be written: dropped with a warning.
	_, res = runScript(t, do(`{"op":"cost","usd":"nan","mode":"add"}`))
	assert.Nil(t, res.CostUSD)
	_, err := json.Marshal(res)
	assert.NoError(t, err)
}

func TestStatusPrecedence(t *testing.T) {
	cases := []struct {
		name      string
		ops       []string
		st, errTx string
	}{
		{"none", nil, "incomplete", ""},
		{"terminal ok", []string{`{"op":"status","status":"ok","level":3}`}, "ok", ""},
		{"terminal wins over later error field", []string{`{"op":"status","status":"error","error":"bad","level":3}`, `{"op":"status","status":"ok","level":2}`}, "error", "bad"},
		{"later terminal replaces", []string{`{"op":"status","status":"error","error":"x","level":3}`, `{"op":"status","status":"ok","level":3}`}, "ok", ""},
		{"no terminal: an error field is an error", []string{`{"op":"status","status":"error","error":"field err","level":2}`}, "error", "field err"},
		{"no terminal: error field over exit level", []string{`{"op":"status","status":"error","error":"field err","level":2}`, `{"op":"status","status":"error","error":"exit 1","level":1}`}, "error", "field err"},
		{"no terminal: later error field", []string{`{"op":"status","status":"error","error":"a","level":2}`, `{"op":"status","status":"error","error":"b","level":2}`}, "error", "b"},
		{"no terminal: exit level text only", []string{`{"op":"status","status":"error","error":"exit 1","level":1}`}, "incomplete", "exit 1"},
		{"no terminal: provider error record", []string{`{"op":"error","msg":"529 Overloaded","code":"overloaded_error"}`}, "error", "529 Overloaded"},
		{"terminal ok over provider error", []string{`{"op":"error","msg":"429"}`, `{"op":"status","status":"ok","level":3}`}, "ok", ""},
		{"unknown status", []string{`{"op":"status","status":"weird","level":3}`}, "error", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, res := runScript(t, do(c.ops...))
			assert.Equal(t, c.st, res.Status)
			assert.Equal(t, c.errTx, res.Error)
		})
	}
}

func TestProviderErrors(t *testing.T) {
	_, res := runScript(t,
		do(`{"op":"error","msg":"rate limited","code":"429"}`, `{"op":"error","msg":"rate limited","code":"429"}`),
		do(`{"op":"status","status":"error","error":"overloaded","level":2}`),
		do(`{"op":"error","msg":"in child","scope":"s1"}`),
		do(`{"op":"status","status":"error","error":"overloaded","level":3}`, `{"op":"status","status":"error","error":"auth failed","level":3}`),
	)
	assert.Equal(t, []transcript.ProviderError{
		{Message: "rate limited", Code: "429", RawLine: 1},
		{Message: "overloaded", RawLine: 2},
		{Message: "in child", RawLine: 3, Scope: "s1"},
		{Message: "auth failed", RawLine: 4},
	}, res.Errors, "the same error twice on one line is one; the terminal event restating a listed error adds none")
	assert.Equal(t, transcript.StatusError, res.Status)
	assert.Equal(t, "auth failed", res.Error)

	_, res = runScript(t, do(`{"op":"warn","text":"x"}`), `{"end":[{"op":"error"}]}`)
	assert.Equal(t, []transcript.ProviderError{{Message: "error"}}, res.Errors, "an error without text at the end: no raw line")
}

func TestSessionStatus(t *testing.T) {
	meta := `{"op":"meta","noterm":true}`
	prompt := func(k string) string {
		return `{"op":"open","key":"` + k + `","role":"user"},{"op":"block","key":"` + k + `","type":"text","text":"do it","origin":"prompt"},{"op":"close","key":"` + k + `"}`
	}
	answer := func(k string) string {
		return `{"op":"open","key":"` + k + `","role":"assistant"},{"op":"block","key":"` + k + `","type":"text","text":"done"},{"op":"close","key":"` + k + `"}`
	}
	thinking := func(k string, redacted bool) string {
		r := ""
		if redacted {
			r = `,"redacted":true`
		}
		return `{"op":"open","key":"` + k + `","role":"assistant"},{"op":"block","key":"` + k + `","type":"thinking","text":"hmm"` + r + `},{"op":"close","key":"` + k + `"}`
	}
	cases := []struct {
		name      string
		lines     []string
		st, errTx string
	}{
		{"answered", []string{do(meta, prompt("u1")), do(answer("a1"))}, "ok", ""},
		{"empty log", []string{do(meta)}, "ok", ""},
		{"unanswered prompt", []string{do(meta, prompt("u1")), do(answer("a1")), do(prompt("u2"))}, "incomplete", "the log ends on a prompt that got no answer"},
		{"dangling call", []string{do(meta, prompt("u1")), do(`{"op":"call","id":"c1","name":"Bash"}`)}, "incomplete", "the log ends on a tool call without a result"},
		{"error after the last answer", []string{do(meta, prompt("u1")), do(answer("a1")), do(prompt("u2")), do(`{"op":"error","msg":"429 rate limit"}`)}, "error", "429 rate limit"},
		{"error then recovered", []string{do(meta, prompt("u1")), do(`{"op":"error","msg":"529 Overloaded"}`), do(answer("a1"))}, "ok", ""},
		{"error at the end", []string{do(meta, prompt("u1")), do(answer("a1")), `{"end":[{"op":"error","msg":"late"}]}`}, "error", "late"},
		{"dangling call, then the agent went on", []string{do(meta, prompt("u1")), do(`{"op":"call","id":"c1","name":"Bash"}`), do(answer("a1"))}, "ok", ""},
		{"dangling call in the last message", []string{do(meta, prompt("u1")), do(`{"op":"open","key":"a1","role":"assistant"},{"op":"block","key":"a1","type":"tool_use","tool_name":"Bash","tool_id":"c1"},{"op":"close","key":"a1"}`, `{"op":"call","id":"c1","name":"Bash"}`)}, "incomplete", "the log ends on a tool call without a result"},
		{"dangling call written before its message", []string{do(meta, prompt("u1")), do(`{"op":"call","id":"c1","name":"Bash"}`, `{"op":"open","key":"a1","role":"assistant"},{"op":"block","key":"a1","type":"tool_use","tool_name":"Bash","tool_id":"c1"},{"op":"close","key":"a1"}`)}, "incomplete", "the log ends on a tool call without a result"},
		{"dangling call of a sub-agent at the end", []string{do(meta, prompt("u1")), do(answer("a1")), do(`{"op":"call","id":"c9","name":"Bash","scope":"s1"}`)}, "incomplete", "the log ends on a tool call without a result"},
		// A document holds the whole conversation on one raw line: the
		// order the records were written tells what came last.
		{"one line: prompt after the answer", []string{do(meta, prompt("u1"), answer("a1"), prompt("u2"))}, "incomplete", "the log ends on a prompt that got no answer"},
		{"one line: answered", []string{do(meta, prompt("u1"), answer("a1"), prompt("u2"), answer("a2"))}, "ok", ""},
		{"one line: error, then the answer", []string{do(meta, prompt("u1"), `{"op":"error","msg":"529 Overloaded"}`, answer("a1"))}, "ok", ""},
		{"one line: answer, then an error", []string{do(meta, prompt("u1"), answer("a1"), prompt("u2"), `{"op":"error","msg":"429 rate limit"}`)}, "error", "429 rate limit"},
		{"one line: error inside the message that carries it", []string{do(meta, prompt("u1"), `{"op":"open","key":"a1","role":"assistant"},{"op":"block","key":"a1","type":"text","text":"API Error: 529"},{"op":"error","msg":"529 Overloaded"},{"op":"close","key":"a1"}`)}, "error", "529 Overloaded"},
		{"one line: error, then an empty message carrying it", []string{do(meta, prompt("u1"), answer("a1"), prompt("u2"), `{"op":"error","msg":"Invalid API key"},{"op":"open","key":"a2","role":"assistant"},{"op":"close","key":"a2"}`)}, "error", "Invalid API key"},
		{"one line: error while a message is open, then another answer", []string{do(meta, prompt("u1"), `{"op":"open","key":"a1","role":"assistant"},{"op":"error","msg":"529 Overloaded"},{"op":"block","key":"a1","type":"text","text":"partial"}`, answer("a2"), `{"op":"close","key":"a1"}`)}, "ok", ""},
		{"answer written at the end, after an error on the last line", []string{do(meta, prompt("u1"), `{"op":"error","msg":"ECONNRESET"}`), `{"end":[` + answer("a1") + `]}`}, "ok", ""},
		{"tool result answers", []string{do(meta, prompt("u1")), do(`{"op":"call","id":"c1","name":"Bash"}`), do(`{"op":"result","id":"c1","output":"x"}`)}, "ok", ""},
		{"terminal report wins", []string{do(meta, prompt("u1")), do(`{"op":"status","status":"ok","level":3}`)}, "ok", ""},
		// Thinking is no answer (spec 6.4, 6.7): a log whose model
		// output ends on a message of thinking alone was cut off
		// before the model said or did anything.
		{"thinking only", []string{do(meta, prompt("u1")), do(thinking("a1", false))}, "incomplete", "the log ends on the model's thinking, with no answer after it"},
		{"redacted thinking only", []string{do(meta, prompt("u1")), do(thinking("a1", true))}, "incomplete", "the log ends on the model's thinking, with no answer after it"},
		{"thinking after a tool result", []string{do(meta, prompt("u1")), do(`{"op":"call","id":"c1","name":"Bash"}`), do(`{"op":"result","id":"c1","output":"x"}`), do(thinking("a1", false))}, "incomplete", "the log ends on the model's thinking, with no answer after it"},
		{"thinking after an answer", []string{do(meta, prompt("u1")), do(answer("a1")), do(thinking("a2", false))}, "incomplete", "the log ends on the model's thinking, with no answer after it"},
		{"thinking, then the answer", []string{do(meta, prompt("u1")), do(thinking("a1", false)), do(answer("a2"))}, "ok", ""},
		{"thinking and text in one message", []string{do(meta, prompt("u1")), do(`{"op":"open","key":"a1","role":"assistant"},{"op":"block","key":"a1","type":"thinking","text":"hmm"},{"op":"block","key":"a1","type":"text","text":"done"},{"op":"close","key":"a1"}`)}, "ok", ""},
		{"thinking, then the call's result", []string{do(meta, prompt("u1")), do(thinking("a1", false)), do(`{"op":"call","id":"c1","name":"Bash"}`), do(`{"op":"result","id":"c1","output":"x"}`)}, "ok", ""},
		{"thinking, then a provider error", []string{do(meta, prompt("u1")), do(thinking("a1", false)), do(`{"op":"error","msg":"529 Overloaded"}`)}, "error", "529 Overloaded"},
		{"thinking, then a prompt", []string{do(meta, prompt("u1")), do(thinking("a1", false)), do(prompt("u2"))}, "incomplete", "the log ends on a prompt that got no answer"},
		// A response the provider says was cut short (Pi's stopReason
		// aborted: a status incomplete below the terminal level).
		{"aborted last answer", []string{do(meta, prompt("u1")), do(answer("a1"), `{"op":"status","status":"incomplete","error":"the response was aborted","level":2}`)}, "incomplete", "the response was aborted"},
		{"aborted, then asked again and answered", []string{do(meta, prompt("u1")), do(answer("a1"), `{"op":"status","status":"incomplete","error":"the response was aborted","level":2}`), do(prompt("u2")), do(answer("a2"))}, "ok", ""},
		{"aborted, then an error", []string{do(meta, prompt("u1")), do(answer("a1"), `{"op":"status","status":"incomplete","error":"the response was aborted","level":2}`), do(`{"op":"error","msg":"529 Overloaded"}`)}, "error", "529 Overloaded"},
		{"a sub-agent's thinking at the end", []string{do(meta, prompt("u1")), do(answer("a1")), do(`{"op":"open","key":"s1a","role":"assistant","scope":"s1"},{"op":"block","key":"s1a","type":"thinking","text":"hmm"},{"op":"close","key":"s1a"}`)}, "ok", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, res := runScript(t, c.lines...)
			assert.Equal(t, c.st, res.Status)
			assert.Equal(t, c.errTx, res.Error)
		})
	}
}

func TestExitCodeStatus(t *testing.T) {
	cases := []struct {
		name      string
		line      string
		code      int
		st, errTx string
	}{
		{"non-zero exit without terminal event", do(`{"op":"warn","text":"x"}`), 2, "error", "the agent exited with code 2"},
		{"zero exit without terminal event", do(`{"op":"warn","text":"x"}`), 0, "incomplete", ""},
		{"terminal event over exit code", do(`{"op":"status","status":"ok","level":3}`), 1, "ok", ""},
		{"error field over exit code", do(`{"op":"error","msg":"auth"}`), 1, "error", "auth"},
		{"session log: non-zero exit", do(`{"op":"meta","noterm":true}`), 3, "error", "the agent exited with code 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := NewStream(ctx, NativeInstance(scriptPlugin()), &checkSink{t: t}, opts())
			require.NoError(t, err)
			require.NoError(t, s.Feed(ctx, []byte(c.line+"\n")))
			s.ExitCode(c.code)
			res, err := s.Close(ctx)
			require.NoError(t, err)
			assert.Equal(t, c.st, res.Status)
			assert.Equal(t, c.errTx, res.Error)
			require.NotNil(t, res.ExitCode)
			assert.Equal(t, c.code, *res.ExitCode)
		})
	}
}

func TestLineAccounting(t *testing.T) {
	silent := func(lines ...string) (int, []int) {
		ctx := context.Background()
		s, err := NewStream(ctx, NativeInstance(scriptPlugin()), &checkSink{t: t}, opts())
		require.NoError(t, err)
		require.NoError(t, s.Feed(ctx, []byte(strings.Join(lines, "\n")+"\n")))
		_, err = s.Close(ctx)
		require.NoError(t, err)
		return s.Silent()
	}
	n, first := silent(
		do(`{"op":"warn","text":"a record"}`),
		do(), // nothing: silent
		do(`{"op":"ignored","native":"delta"}`),
		"not json", // counted unmapped by the script
		"",         // blank: not sent to the plugin
		do(),       // covered by the next line's count
		do(`{"op":"ignored","native":"doc","n":2}`),
		do(),         // silent
		`{"end":[]}`, // nothing at feed, nothing at end: silent
	)
	assert.Equal(t, 3, n)
	assert.Equal(t, []int{2, 8, 9}, first)

	// Records reported at the end cover the last lines still pending.
	n, first = silent(do(), do(), `{"end":[{"op":"ignored","n":2}]}`)
	assert.Equal(t, 1, n)
	assert.Equal(t, []int{1}, first)
}

func TestAccountingBounded(t *testing.T) {
	var c accounting
	for l := 1; l <= maxPending+5; l++ {
		c.fed(l)
	}
	assert.Len(t, c.pending, maxPending)
	c.cover(maxPending+5, 3)
	c.cover(0, 2)
	c.coverAll(maxPending)
	n, first := c.finish()
	assert.Equal(t, maxPending-1, n, "5 given up early, 3+2 covered, 2 lost to a fault")
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, first)
}

func TestScopes(t *testing.T) {
	sink, res := runScript(t,
		do(`{"op":"call","id":"task1","name":"Task"}`, `{"op":"scope_open","scope":"task1","parent":"task1","name":"explorer","desc":"look around"}`,
			`{"op":"scope_open","scope":"task1","name":"again"}`),
		do(`{"op":"open","key":"sm","scope":"task1"}`, `{"op":"block","key":"sm","type":"text","text":"in child"}`, `{"op":"close","key":"sm"}`),
		do(`{"op":"scope_close","scope":"task1","status":"error","error":"child failed"}`, `{"op":"scope_close","scope":"nope"}`),
		do(`{"op":"call","id":"c9","name":"X","scope":"auto"}`),
		do(`{"op":"scope_open","scope":"open2"}`, `{"op":"scope_open"}`),
		do(`{"op":"scope_open","scope":"s3"}`, `{"op":"scope_close","scope":"s3","status":"bogus"}`),
	)
	assert.Equal(t, []string{
		`|{"seq":0,"run_id":"run","type":"tool.call","path":"","iteration":0,"timestamp":"2020-01-02T03:04:05.000Z","payload":{"name":"Task","call_id":"task1","input":{},"fidelity":"agent_emitted","raw_line":1}}`,
		"open|task1|task1|explorer|look around",
		`task1|{"seq":0,"run_id":"run","type":"message.assistant","path":"","iteration":0,"timestamp":"2020-01-02T03:04:05.000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"in child"}],"raw_line":2}}`,
		"close|task1|error|child failed",
		"open|auto|auto||",
		`auto|{"seq":0,"run_id":"run","type":"tool.call","path":"","iteration":0,"timestamp":"2020-01-02T03:04:05.000Z","payload":{"name":"X","call_id":"c9","input":{},"fidelity":"agent_emitted","raw_line":4}}`,
		"open|open2|||",
		"open|s3|||",
		"close|s3|ok|",
		"close|auto|incomplete|",
		"close|open2|incomplete|",
	}, render(t, &sink.Collector))
	assert.Equal(t, "incomplete", res.Status)

	// With a terminal status, scopes still open at the end take it.
	sink, _ = runScript(t, do(`{"op":"scope_open","scope":"s"}`, `{"op":"status","status":"error","error":"e","level":3}`))
	assert.Equal(t, []string{"open|s|||", "close|s|error|"}, render(t, &sink.Collector))
}

func TestWarningsCap(t *testing.T) {
	var ops []string
	for i := 0; i < maxWarnings+5; i++ {
		ops = append(ops, fmt.Sprintf(`{"op":"warn","text":"w%d"}`, i))
	}
	_, res := runScript(t, do(ops...))
	require.Len(t, res.Warnings, maxWarnings+1)
	assert.Equal(t, "w0", res.Warnings[0])
	assert.Equal(t, "5 more warnings not kept", res.Warnings[maxWarnings])
}

func TestTimestamps(t *testing.T) {
	sink, _ := runScript(t,
		do(`{"op":"call","id":"a","time":"2023-01-01T10:00:00+02:00"}`, `{"op":"call","id":"b","time":"yesterday"}`,
			`{"op":"call","id":"c","time":"9999-12-31T23:00:00-05:00"}`, `{"op":"call","id":"d","time":"0000-01-01T00:30:00+01:00"}`,
			`{"op":"result","id":"a","time":"2023-01-01T10:00:01.123456Z"}`),
	)
	evs := events(sink, "")
	require.Len(t, evs, 5)
	assert.Equal(t, time.Date(2023, 1, 1, 8, 0, 0, 0, time.UTC), evs[0].Timestamp.UTC())
	assert.Equal(t, epoch, evs[1].Timestamp, "unparsable: the clock")
	assert.Equal(t, epoch, evs[2].Timestamp, "a time whose UTC year is outside 0000..9999 cannot be written: the clock")
	assert.Equal(t, epoch, evs[3].Timestamp)
	assert.Equal(t, time.Date(2023, 1, 1, 10, 0, 1, 123456000, time.UTC), evs[4].Timestamp.UTC())
}

func TestToolStatusClosedSet(t *testing.T) {
	cases := []struct {
		result, status, errTx string
	}{
		{`{"op":"result","id":"c","status":"completed"}`, "ok", ""},
		{`{"op":"result","id":"c","status":"ok","output":"x"}`, "ok", ""},
		{`{"op":"result","id":"c","status":"failed","error":"boom"}`, "error", "boom"},
		{`{"op":"result","id":"c","status":"failed","exit":2}`, "error", "exit code 2"},
		{`{"op":"result","id":"c","status":"declined"}`, "denied", "denied"},
		{`{"op":"result","id":"c","status":"rejected","error":"the user said no"}`, "denied", "the user said no"},
		{`{"op":"result","id":"c","status":"interrupted"}`, "cancelled", "cancelled"},
		{`{"op":"result","id":"c","is_error":true}`, "error", "failed"},
		{`{"op":"result","id":"c","exit":1}`, "error", "exit code 1"},
		{`{"op":"result","id":"c","exit":0}`, "", ""},
		{`{"op":"result","id":"c"}`, "", ""},
		{`{"op":"result","id":"c","status":"weird"}`, "ok", ""},
		{`{"op":"result","id":"c","status":"weird","error":"bad"}`, "error", "bad"},
	}
	for _, c := range cases {
		t.Run(c.result, func(t *testing.T) {
			sink, res := runScript(t, do(`{"op":"call","id":"c","name":"Bash"}`, c.result))
			evs := events(sink, "")
			require.Len(t, evs, 2)
			p := evs[1].Tool()
			assert.Equal(t, c.status, p.Status)
			assert.Equal(t, c.errTx, p.Error)
			if strings.Contains(c.result, "weird") {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), `status "weird"`)
			}
		})
	}
}

// TestSynthesizedCallNamed: a result whose call was never reported gets a
// call with a name (spec 6.12): the tool's kind, else "unknown".
func TestSynthesizedCallNamed(t *testing.T) {
	sink, res := runScript(t,
		do(`{"op":"result","id":"x","output":"out"}`),
		do(`{"op":"call","id":"y","kind":"read"}`),
	)
	var got []string
	for _, e := range events(sink, "") {
		if e.Type == transcript.ToolCall {
			got = append(got, e.Tool().CallID+" "+e.Tool().Name)
		}
	}
	assert.Equal(t, []string{"x unknown", "y read"}, got)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), `a call named "unknown" was synthesized`)
}

// TestToolResultOutputPresence: a result the plugin set an output for,
// even empty, has one; a result without one, or refused before it ran
// with an empty one, has none (spec section 4).
func TestToolResultOutputPresence(t *testing.T) {
	sink, _ := runScript(t,
		do(`{"op":"call","id":"a","name":"Read"}`, `{"op":"result","id":"a","output":""}`),
		do(`{"op":"call","id":"b","name":"Read"}`, `{"op":"result","id":"b","error":"boom","status":"error"}`),
		do(`{"op":"call","id":"c","name":"Bash"}`, `{"op":"result","id":"c","output":"","error":"declined","status":"denied"}`),
		do(`{"op":"call","id":"d","name":"Bash"}`, `{"op":"result","id":"d","output":"policy says no","error":"declined","status":"denied"}`),
	)
	has := map[string]bool{}
	for _, e := range events(sink, "") {
		if e.Type == transcript.ToolResult {
			has[e.Tool().CallID] = e.Tool().HasOutput
		}
	}
	assert.Equal(t, map[string]bool{"a": true, "b": false, "c": false, "d": true}, has)
}

// TestToolCallIDReused: a call id reported again is the same call (an
// update, a message rewritten in place), unless the first call is
// settled (answered, or its turn ended: a prompt came after it) and the
// id's tool_use block is in another message: then it is a new call that
// reuses the id (a provider whose ids are unique per response, not per
// session), paired with its own result.
func TestToolCallIDReused(t *testing.T) {
	// use is message key's tool_use block for id and its call.
	use := func(key, id, cmd string) string {
		return do(`{"op":"open","key":"`+key+`"}`,
			`{"op":"block","key":"`+key+`","slot":0,"type":"tool_use","tool_name":"Bash","tool_id":"`+id+`","tool_input":{"command":"`+cmd+`"}}`,
			`{"op":"call","id":"`+id+`","name":"Bash","input":{"command":"`+cmd+`"}}`,
			`{"op":"close","key":"`+key+`"}`)
	}
	result := func(id, out string) string { return do(`{"op":"result","id":"` + id + `","output":"` + out + `"}`) }
	prompt := func(key, text string) string {
		return do(`{"op":"open","key":"`+key+`","role":"user"}`, `{"op":"block","key":"`+key+`","slot":0,"type":"text","text":"`+text+`","origin":"prompt"}`, `{"op":"close","key":"`+key+`"}`)
	}
	for _, c := range []struct {
		name     string
		lines    []string
		want     []string // tool events: type, call id, input or output
		dangling []string
		warn     string // a warning that must be there ("" none)
	}{
		{"reused in another message after its result",
			[]string{use("m1", "call_1", "ls"), result("call_1", "a"), use("m2", "call_1", "ls"), result("call_1", "a")},
			[]string{`call call_1 {"command":"ls"}`, "result call_1 a", `call call_1 {"command":"ls"}`, "result call_1 a"}, nil, ""},
		{"reused, the second call unanswered",
			[]string{use("m1", "call_1", "ls"), result("call_1", "a"), use("m2", "call_1", "pwd")},
			[]string{`call call_1 {"command":"ls"}`, "result call_1 a", `call call_1 {"command":"pwd"}`}, []string{"call_1"}, ""},
		{"reused, the second call's result only",
			[]string{use("m1", "call_1", "ls"), result("call_1", "a"),
				do(`{"op":"open","key":"m2"}`, `{"op":"block","key":"m2","slot":0,"type":"tool_use","tool_name":"Bash","tool_id":"call_1"}`, `{"op":"close","key":"m2"}`),
				result("call_1", "b")},
			[]string{`call call_1 {"command":"ls"}`, "result call_1 a", "call call_1 ", "result call_1 b"}, nil, "call_1 had no tool call"},
		{"reused after a new prompt, the first unanswered",
			[]string{use("m1", "call_1", "ls"), prompt("u2", "and now?"), use("m2", "call_1", "pwd"), result("call_1", "b")},
			[]string{`call call_1 {"command":"ls"}`, `call call_1 {"command":"pwd"}`, "result call_1 b"}, []string{"call_1"}, ""},
		{"repeated in its message after a new prompt, unanswered",
			[]string{use("m1", "call_1", "ls"), prompt("u2", "and now?"), use("m1", "call_1", "ls"), result("call_1", "a")},
			[]string{`call call_1 {"command":"ls"}`, "result call_1 a"}, nil, ""},
		{"repeated before its result: an update",
			[]string{use("m1", "call_1", "l"), use("m1", "call_1", "ls"), result("call_1", "a")},
			[]string{`call call_1 {"command":"l"}`, "result call_1 a"}, nil, ""},
		{"repeated in another message before its result",
			[]string{use("m1", "call_1", "ls"), use("m2", "call_1", "ls"), result("call_1", "a")},
			[]string{`call call_1 {"command":"ls"}`, "result call_1 a"}, nil, ""},
		{"its message rewritten after its result",
			[]string{use("m1", "call_1", "ls"), result("call_1", "a"), use("m1", "call_1", "ls"), result("call_1", "a")},
			[]string{`call call_1 {"command":"ls"}`, "result call_1 a"}, nil, "second result for tool call call_1"},
		{"no block tells the calls apart",
			[]string{do(`{"op":"call","id":"call_1","name":"Bash"}`), result("call_1", "a"), do(`{"op":"call","id":"call_1","name":"Bash"}`), result("call_1", "b")},
			[]string{"call call_1 ", "result call_1 a"}, nil, "second result for tool call call_1"},
		{"the first call's block after its call",
			[]string{do(`{"op":"call","id":"call_1","name":"Bash"}`),
				do(`{"op":"open","key":"m1"}`, `{"op":"block","key":"m1","slot":0,"type":"tool_use","tool_name":"Bash","tool_id":"call_1"}`, `{"op":"close","key":"m1"}`),
				result("call_1", "a"), use("m2", "call_1", "ls"), result("call_1", "b")},
			[]string{"call call_1 ", "result call_1 a", `call call_1 {"command":"ls"}`, "result call_1 b"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, res := runScript(t, c.lines...)
			var got []string
			for _, e := range events(sink, "") {
				if p := e.Tool(); p != nil {
					if e.Type == transcript.ToolCall {
						got = append(got, fmt.Sprintf("call %s %s", p.CallID, p.Input))
					} else {
						got = append(got, fmt.Sprintf("result %s %s", p.CallID, p.Output))
					}
				}
			}
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.dangling, res.Dangling)
			if c.warn == "" {
				assert.Empty(t, res.Warnings)
			} else {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), c.warn)
			}
		})
	}
}

// TestAnsweredCallsForgetTheirState checks that an answered call, once
// its state leaves tools for done and the dangling list drops it
// (answer), is still told apart as before: a call reported again and a
// second result are ignored, the dangling list keeps the unanswered
// calls in call order, across the compactions of many answered calls.
func TestAnsweredCallsForgetTheirState(t *testing.T) {
	var lines []string
	var wantDangling []string
	for i := range 300 {
		id := fmt.Sprintf("c%d", i)
		lines = append(lines, do(fmt.Sprintf(`{"op":"call","id":%q,"name":"A"}`, id)))
		if i%50 == 7 {
			wantDangling = append(wantDangling, id) // never answered
			continue
		}
		lines = append(lines, do(fmt.Sprintf(`{"op":"result","id":%q,"output":"one"}`, id)))
	}
	// After every compaction: c0 again (its call and a second result),
	// both ignored.
	lines = append(lines,
		do(`{"op":"call","id":"c0","name":"again"}`),
		do(`{"op":"result","id":"c0","output":"two"}`),
		do(`{"op":"result","id":"c7","output":"late"}`))
	wantDangling = wantDangling[1:] // c7 got its result at last
	sink, res := runScript(t, lines...)
	var calls, results int
	for _, e := range events(sink, "") {
		switch e.Type {
		case transcript.ToolCall:
			calls++
			assert.Equal(t, "A", e.Tool().Name)
		case transcript.ToolResult:
			results++
			if e.Tool().CallID == "c0" {
				assert.Equal(t, "one", e.Tool().Output)
			}
		}
	}
	assert.Equal(t, 300, calls, "c0 reported again is not a new call")
	assert.Equal(t, 300-len(wantDangling), results, "the second result of c0 is ignored, c7's late one kept")
	assert.Equal(t, wantDangling, res.Dangling)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "second result for tool call c0")
}

// discardSink takes everything and keeps nothing but counts.
type discardSink struct{ calls, results int }

func (d *discardSink) Emit(_ context.Context, _ string, evs []*transcript.Event) error {
	for _, e := range evs {
		switch e.Type {
		case transcript.ToolCall:
			d.calls++
		case transcript.ToolResult:
			d.results++
		}
	}
	return nil
}
func (d *discardSink) OpenScope(context.Context, Scope) error                   { return nil }
func (d *discardSink) CloseScope(context.Context, string, string, string) error { return nil }

// TestAnsweredCallIDsCompact checks what an answered call costs the
// stream once it is done (ids): distinct calls, each named by a tool_use
// block of a message of its own and answered, are fed in two rounds of
// the same count, and the live heap the second round adds, per call, is
// at most maxBytesPerCall: 78 bytes measured (a map entry of 40 bytes
// and the map's slack), where an id kept as strings (its map entry, its
// copy and its message's key) cost 194. The calls still
// pair, and a repeat of the first call after them all is still dropped.
func TestAnsweredCallIDsCompact(t *testing.T) {
	const (
		round           = 20000
		maxBytesPerCall = 100
	)
	ctx := context.Background()
	var sink discardSink
	s, err := NewStream(ctx, NativeInstance(scriptPlugin()), &sink, opts())
	require.NoError(t, err)
	call := func(i int) string {
		id := fmt.Sprintf("toolu_01%024d", i)
		key := fmt.Sprintf("msg_01%024d", i)
		return do(fmt.Sprintf(`{"op":"open","key":%q}`, key),
			fmt.Sprintf(`{"op":"block","key":%q,"slot":0,"type":"tool_use","tool_name":"Bash","tool_id":%q}`, key, id),
			fmt.Sprintf(`{"op":"close","key":%q}`, key),
			fmt.Sprintf(`{"op":"call","id":%q,"name":"Bash"}`, id),
			fmt.Sprintf(`{"op":"result","id":%q,"output":"ok"}`, id)) + "\n"
	}
	feed := func(from, to int) {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.WriteString(call(i))
			if b.Len() > 1<<16 || i == to-1 {
				require.NoError(t, s.Feed(ctx, []byte(b.String())))
				b.Reset()
			}
		}
	}
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	feed(0, round)
	before := live()
	feed(round, 2*round)
	after := live()
	feed(0, 1) // the first call again: a repeat, dropped
	res, err := s.Close(ctx)
	require.NoError(t, err)
	perCall := (int64(after) - int64(before)) / round
	t.Logf("%d bytes of live heap per answered call id", perCall)
	assert.LessOrEqual(t, perCall, int64(maxBytesPerCall), "live heap per answered call id")
	assert.Equal(t, 2*round, sink.calls, "the repeat of the first call is not a new call")
	assert.Equal(t, 2*round, sink.results)
	assert.Empty(t, res.Dangling)
}
