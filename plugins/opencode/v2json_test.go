//go:build !wasip1

package opencode_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// v2Tool is a tool_use line as the "mini" client of OpenCode's v2 event
// runtime prints it for run --format json (cli/cmd/run/noninteractive.ts
// at 0f582b14246bad74884e6ebbe92f0ba8d175177e): a settled tool's state is
// built from the session.next.tool.success or .failed event, its
// metadata holds the tool's structured output (metadata.structured, never
// metadata.exit), its output the text content joined, its error the
// event's error.message (the error's type is dropped).
func v2Tool(tool, state string) string {
	return `{"type":"tool_use","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"tool","callID":"c1","tool":"` + tool + `","state":` + state + `}}`
}

// v2Shell is a completed shell call: its output and structured output
// (core/src/tool/plugin/shell.ts: {exit?, signal?, shellID?, truncated,
// timeout?}; shell/result.ts: the notice "Command exited with code N.",
// "Command timed out before completion." or "Command stopped by user. ..."
// follows the output as its own text content).
func v2Shell(output, structured string) string {
	return v2Tool("shell", `{"status":"completed","input":{"command":"go test ./..."},"output":"`+output+`","title":"shell","metadata":{"structured":`+structured+`,"content":[{"type":"text","text":"`+output+`"}],"outputPaths":[]},"time":{"start":1762077600000,"end":1762077601000}}`)
}

// TestV2RunJSON: what run --format json of OpenCode's v2 runtime states
// of a settled tool reads as its result, though no metadata.exit is
// there: the exit code, a timeout or a signal in metadata.structured, the
// notice the shell tool appends, the error texts of the v2 runtime.
func TestV2RunJSON(t *testing.T) {
	for _, tc := range []struct {
		name, line, status, err string
		exit                    int64 // -1: none stated
	}{
		{"a command that exited 1", v2Shell(`FAIL\n\nCommand exited with code 1.`, `{"exit":1,"truncated":false}`), "error", "exit code 1", 1},
		{"a command that exited 0", v2Shell(`ok\n\nCommand exited with code 0.`, `{"exit":0,"truncated":false}`), "ok", "", 0},
		{"the exit stated by the notice alone", v2Shell(`FAIL\n\nCommand exited with code 2.`, `{"truncated":false}`), "error", "exit code 2", 2},
		{"a command that timed out", v2Shell(`started\n\nCommand exceeded timeout of 120000 ms. Retry with a larger timeout if the command is expected to take longer.\n\nCommand timed out before completion.`, `{"truncated":false,"timeout":true}`), "cancelled", "Command exceeded timeout of 120000 ms", -1},
		{"a command the user stopped", v2Shell(`started\n\nCommand stopped by user. Do not restart it unless the user asks.`, `{"truncated":false}`), "cancelled", "Command stopped by user", -1},
		{"a command a signal ended", v2Shell(`Killed`, `{"signal":"SIGKILL","truncated":false}`), "error", "SIGKILL", -1},
		{"a tool the interruption failed", v2Tool("shell", `{"status":"error","input":{"command":"sleep 99"},"error":"Tool execution interrupted: shell","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "cancelled", "Tool execution interrupted", -1},
		{"a tool a restart failed", v2Tool("read", `{"status":"error","input":{},"error":"Tool execution interrupted","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "cancelled", "Tool execution interrupted", -1},
		{"a permission rule refused it", v2Tool("shell", `{"status":"error","input":{"command":"rm -rf x"},"error":"Permission denied: shell","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "denied", "Permission denied", -1},
		{"the user dismissed a question", v2Tool("question", `{"status":"error","input":{},"error":"The user dismissed this question: \"Scope\"=\"Which files?\"","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "denied", "dismissed", -1},
		{"a tool that failed", v2Tool("read", `{"status":"error","input":{},"error":"File not found: /x","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "error", "File not found", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(tc.line+"\n"), normalize.Options{Provider: "opencode"})
			if st, ok := o.ResultStatus("c1"); st != tc.status {
				t.Errorf("c1's status %q (a result: %v), want %s", st, ok, tc.status)
			}
			_, rs := o.Tools()
			if len(rs) != 1 {
				t.Fatalf("results %+v, want one", rs)
			}
			if tc.err != "" && !strings.Contains(rs[0].Error, tc.err) {
				t.Errorf("error %q, want one that says %q", rs[0].Error, tc.err)
			}
			if tc.err == "" && rs[0].Error != "" {
				t.Errorf("error %q, want none", rs[0].Error)
			}
			got := int64(-1)
			if rs[0].ExitCode != nil {
				got = int64(*rs[0].ExitCode)
			}
			if got != tc.exit {
				t.Errorf("exit code %d, want %d (-1: none)", got, tc.exit)
			}
			if n, first := silent(t, []byte(tc.line+"\n")); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

// TestV2RunJSONError: the error line of the v2 client holds a session
// error {type, message} (schema/session-error.ts), not the v1 {name,
// data: {message}}: its type is the error's code.
func TestV2RunJSONError(t *testing.T) {
	for _, tc := range []struct{ name, line, code, msg string }{
		{"a provider error", `{"type":"error","timestamp":1762077602000,"sessionID":"ses_1","error":{"type":"provider.unknown","message":"Overloaded"}}`, "provider.unknown", "Overloaded"},
		{"a failed execution", `{"type":"error","timestamp":1762077602000,"sessionID":"ses_1","error":{"type":"unknown","message":"Session execution failed"}}`, "unknown", "Session execution failed"},
		{"a v1 error", `{"type":"error","timestamp":1762077602000,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Overloaded"}}}`, "APIError", "Overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(tc.line+"\n"), normalize.Options{Provider: "opencode"})
			if len(o.Result.Errors) != 1 || o.Result.Errors[0].Code != tc.code || o.Result.Errors[0].Message != tc.msg {
				t.Errorf("errors %+v, want %s: %s", o.Result.Errors, tc.code, tc.msg)
			}
		})
	}
}

// TestV2RunJSONText: the v2 client prints a text as it streams, each
// delta a text line of the same part id holding that delta alone
// (noninteractive.ts, session.next.text.delta), then what the deltas
// lacked at text.ended: the text is every line's, in order. OpenCode
// before it printed a text once, whole, at its end, and a text printed
// again whole replaces the first.
func TestV2RunJSONText(t *testing.T) {
	text := func(id, s string) string {
		return `{"type":"text","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"` + id + `","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"` + s + `","time":{"start":1762077600000,"end":1762077601000}}}`
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"deltas", []string{text("prt_1", "The tests "), text("prt_1", "fail in "), text("prt_1", "parse.go.")}, []string{"The tests fail in parse.go."}},
		{"deltas of two texts", []string{text("prt_1", "One"), text("prt_1", "."), text("prt_2", "Two"), text("prt_2", ".")}, []string{"One.", "Two."}},
		{"a text printed again whole", []string{text("prt_1", "Done"), text("prt_1", "Done.")}, []string{"Done."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Join(tc.lines, "\n") + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), tc.want, false)
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

// TestRunJSONReasoningOutput: a step_finish of run --format json whose
// tokens state reasoning and no total was written by the v2 client (the
// output the visible output alone: core session/usage.ts tokens) or by
// OpenCode's v1 run before AI SDK 6 (the provider's output, the
// reasoning in it); the line is the same. The rest of the output tells
// them apart: a tool's metadata.providerResult, text deltas of one part
// id, an error {type, message} are the v2 client's alone, and then the
// output counts the reasoning, in the session's usage and in each
// message's, though the sign came after the step. Without a sign the
// output is read as written and a warning says what it may lack; a step
// stating its total keeps the AI SDK 6 reading.
func TestRunJSONReasoningOutput(t *testing.T) {
	const ses = `"sessionID":"ses_1"`
	line := func(typ, msg, part string) string {
		return `{"type":"` + typ + `","timestamp":1762077601000,` + ses + `,"part":{"sessionID":"ses_1","messageID":"` + msg + `",` + part + `}}`
	}
	start := func(msg, id string) string { return line("step_start", msg, `"id":"`+id+`","type":"step-start"`) }
	text := func(msg, id, s string) string {
		return line("text", msg, `"id":"`+id+`","type":"text","text":"`+s+`","time":{"start":1762077600000,"end":1762077601000}`)
	}
	finish := func(msg, id, tokens string) string {
		return line("step_finish", msg, `"id":"`+id+`","type":"step-finish","reason":"stop","cost":0.001,"tokens":`+tokens)
	}
	tool := func(msg, id, metadata string) string {
		return line("tool_use", msg, `"id":"`+id+`","type":"tool","callID":"c1","tool":"read","state":{"status":"completed","input":{"filePath":"a.go"},"output":"package a","title":"read","metadata":`+metadata+`,"time":{"start":1762077600000,"end":1762077601000}}`)
	}
	v2Tokens := `{"input":100,"output":40,"reasoning":120,"cache":{"read":0,"write":0}}`
	v2Error := `{"type":"error","timestamp":1762077602000,` + ses + `,"error":{"type":"provider.unknown","message":"Overloaded"}}`
	for _, tc := range []struct {
		name  string
		lines []string
		// output is the session's output tokens, msgs each message's
		// (by id), warn whether a warning says the output may lack the
		// reasoning.
		output int64
		msgs   map[string]int64
		warn   bool
	}{
		{"text deltas: the v2 client", []string{start("msg_1", "prt_1"), text("msg_1", "prt_2", "The answer "), text("msg_1", "prt_2", "is 4."), finish("msg_1", "prt_3", v2Tokens)}, 160, map[string]int64{"msg_1": 160}, false},
		{"a tool's providerResult: the v2 client", []string{start("msg_1", "prt_1"), tool("msg_1", "prt_2", `{"structured":{},"content":[],"providerResult":{"executed":false}}`), finish("msg_1", "prt_3", v2Tokens)}, 160, map[string]int64{"msg_1": 160}, false},
		{"an error {type, message} after the step", []string{start("msg_1", "prt_1"), text("msg_1", "prt_2", "Done."), finish("msg_1", "prt_3", v2Tokens), v2Error}, 160, map[string]int64{"msg_1": 160}, false},
		{"the sign in a later message", []string{
			start("msg_1", "prt_1"), text("msg_1", "prt_2", "Reading."), finish("msg_1", "prt_3", v2Tokens),
			start("msg_2", "prt_4"), tool("msg_2", "prt_5", `{"providerResult":{"executed":false}}`), finish("msg_2", "prt_6", `{"input":50,"output":10,"reasoning":5,"cache":{"read":0,"write":0}}`),
		}, 175, map[string]int64{"msg_1": 160, "msg_2": 15}, false},
		{"no sign: read as written, said", []string{start("msg_1", "prt_1"), text("msg_1", "prt_2", "Done."), finish("msg_1", "prt_3", v2Tokens)}, 40, map[string]int64{"msg_1": 40}, true},
		{"no reasoning: nothing to tell", []string{start("msg_1", "prt_1"), text("msg_1", "prt_2", "Done."), finish("msg_1", "prt_3", `{"input":100,"output":40,"reasoning":0,"cache":{"read":0,"write":0}}`)}, 40, map[string]int64{"msg_1": 40}, false},
		{"v1 on AI SDK 6: a total of every token", []string{start("msg_1", "prt_1"), text("msg_1", "prt_2", "Done."), finish("msg_1", "prt_3", `{"total":260,"input":100,"output":40,"reasoning":120,"cache":{"write":0,"read":0}}`)}, 160, map[string]int64{"msg_1": 160}, false},
		{"v1 with a total of the output holding the reasoning", []string{start("msg_1", "prt_1"), text("msg_1", "prt_2", "Done."), finish("msg_1", "prt_3", `{"total":260,"input":100,"output":160,"reasoning":120,"cache":{"write":0,"read":0}}`)}, 160, map[string]int64{"msg_1": 160}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Join(tc.lines, "\n") + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			output := int64(-1)
			if u := o.Result.Usage; u != nil {
				output = plugintest.Val(u.OutputTokens)
			}
			if output != tc.output {
				t.Errorf("the session's output %d, want %d", output, tc.output)
			}
			got := map[string]int64{}
			for _, it := range o.Sink.Items {
				if mp := it.Event.Message(); mp != nil && it.Event.Type == transcript.MessageAssistant && mp.Usage != nil && mp.Usage.OutputTokens != nil {
					got[mp.ID] = *mp.Usage.OutputTokens // the last version of each message
				}
			}
			if !maps.Equal(got, tc.msgs) {
				t.Errorf("the messages' output %v, want %v", got, tc.msgs)
			}
			warned := slices.ContainsFunc(o.Result.Warnings, func(w string) bool { return strings.Contains(w, "reasoning tokens and no total") })
			if warned != tc.warn {
				t.Errorf("warnings %q: a warning of the output's reasoning %v, want %v", o.Result.Warnings, warned, tc.warn)
			}
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

// TestRunJSONDone: OpenCode's run prints a done line last once the
// session went idle (cli/cmd/run.ts finish(), anomalyco/opencode 00f9806c:
// {reason: "idle", rejected}); it is no unknown line, and the
// permissions it refused on its own are said.
func TestRunJSONDone(t *testing.T) {
	text := `{"type":"text","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"Done.","time":{"start":1762077600000,"end":1762077601000}}}`
	for _, tc := range []struct {
		name, done, warn string
	}{
		{"idle", `{"type":"done","timestamp":1762077602000,"sessionID":"ses_1","reason":"idle","rejected":[]}`, ""},
		{"a permission refused", `{"type":"done","timestamp":1762077602000,"sessionID":"ses_1","reason":"idle","rejected":["bash"]}`, "on its own (run without --auto): bash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(text + "\n" + tc.done + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v, want none", o.Result.Unmapped)
			}
			warned := slices.ContainsFunc(o.Result.Warnings, func(w string) bool { return tc.warn != "" && strings.Contains(w, tc.warn) })
			if warned != (tc.warn != "") {
				t.Errorf("warnings %q, want one saying %q", o.Result.Warnings, tc.warn)
			}
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}
