//go:build !wasip1

package cline_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestUIMessageChangedInPlace: a task read from its UI messages alone
// whose message changes in place, keeping its ts (Cline's ask and say
// complete a partial message under its ts; its CommandOrchestrator marks
// the command message commandCompleted once the command ends; its
// CommandExecutor, when the user cancels a command, appends "\n\nCommand(s)
// cancelled by user." to the last command_output: cline/cline 59e5eac3e0
// src/core/task/index.ts, src/integrations/terminal). Read in one part
// (two versions of ui_messages.json before the task's end) or in two
// (sync read the task before and after: a facts line between them), each
// call counts once, with its latest input and outcome (a file tool's
// outcome is not on the screen: its call dangles, as ever), a command's
// output whole however it grew; a command the user cancelled is
// cancelled. Before, a message changed between two versions
// read in one part was written twice (two calls, the output twice), and
// one changed after a part wrote it was not written again (its new input
// or outcome lost; a command's output that came after the part that
// wrote the command was lost).
func TestUIMessageChangedInPlace(t *testing.T) {
	const fileHead = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n"
	const task = `{"ts":1767225600000,"type":"say","say":"task","text":"Run the tests"},` +
		`{"ts":1767225600100,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":5,\"cost\":0.01}"}`
	command := func(extra string) string {
		return `{"ts":1767225602000,"type":"ask","ask":"command","text":"npm test"` + extra + `}`
	}
	output := func(text string) string {
		return `{"ts":1767225603000,"type":"ask","ask":"command_output","text":` + jsonString(text) + `}`
	}
	tool := func(path, extra string) string {
		return `{"ts":1767225602000,"type":"ask","ask":"tool","text":` + jsonString(`{"tool":"readFile","path":"`+path+`"}`) + extra + `}`
	}
	mcp := func(args string) string {
		return `{"ts":1767225602000,"type":"ask","ask":"use_mcp_server","text":` + jsonString(`{"type":"use_mcp_tool","serverName":"gh","toolName":"search","arguments":"`+args+`"}`) + `}`
	}
	doc := func(msgs ...string) string { return "[" + task + "," + strings.Join(msgs, ",") + "]\n" }
	const cancelled = "PASS a.test\n\nCommand(s) cancelled by user."
	type want struct {
		calls, dangling       int
		input, output, status string
	}
	tests := []struct {
		name   string
		v1, v2 string
		want   want
	}{
		{"a command cancelled in place", doc(command(""), output("PASS a.test")), doc(command(""), output(cancelled)),
			want{1, 0, `{"command":"npm test"}`, cancelled, "cancelled"}},
		{"a command marked completed in place", doc(command(""), output("PASS a.test")), doc(command(`,"commandCompleted":true`), output("PASS a.test")),
			want{1, 0, `{"command":"npm test"}`, "PASS a.test", ""}},
		{"a command's output after the command was read", doc(command("")), doc(command(""), output("PASS a.test")),
			want{1, 0, `{"command":"npm test"}`, "PASS a.test", ""}},
		{"a command's output grew after it was read", doc(command(""), output("PASS a.test")),
			doc(command(""), output("PASS a.test"), `{"ts":1767225604000,"type":"ask","ask":"command_output","text":"PASS b.test"}`),
			want{1, 0, `{"command":"npm test"}`, "PASS a.test\nPASS b.test", ""}},
		{"an MCP use changed in place, answered after", doc(mcp("a")), doc(mcp("b"), `{"ts":1767225603000,"type":"say","say":"mcp_server_response","text":"found 2"}`),
			want{1, 0, `{"type":"use_mcp_tool","serverName":"gh","toolName":"search","arguments":"b"}`, "found 2", ""}},
		{"a tool's input changed in place", doc(tool("a.go", "")), doc(tool("b.go", "")),
			want{1, 1, `{"tool":"readFile","path":"b.go"}`, "", ""}},
		{"a partial tool completed under its ts", doc(tool("a", `,"partial":true`)), doc(tool("a.go", "")),
			want{1, 1, `{"tool":"readFile","path":"a.go"}`, "", ""}},
	}
	for _, tt := range tests {
		for _, parts := range []struct{ name, between string }{{"one part", fileHead}, {"two parts", uiHead}} {
			t.Run(tt.name+", "+parts.name, func(t *testing.T) {
				raw := uiHead + tt.v1 + parts.between + tt.v2
				o := plugintest.Run(t, cline.Plugin, []byte(raw), normalize.Options{Provider: "cline"})
				var evs []*transcript.Event
				for _, it := range o.Sink.Items {
					if it.Event != nil && it.Event.Tool() != nil {
						evs = append(evs, it.Event)
					}
				}
				// The calls as every reader counts them: each at its
				// latest version, with its latest result.
				pairs, old := transcript.PairEvents(evs), transcript.Superseded(evs)
				var calls []*transcript.Event
				for _, ev := range evs {
					if ev.Type == transcript.ToolCall && !old[ev] {
						calls = append(calls, ev)
					}
				}
				if len(calls) != tt.want.calls {
					t.Fatalf("calls counted %d, want %d", len(calls), tt.want.calls)
				}
				last := calls[len(calls)-1]
				got := want{calls: len(calls), dangling: len(o.Result.Dangling), input: string(last.Tool().Input)}
				if r := pairs[last]; r != nil {
					got.output, got.status = r.Tool().Output, r.Tool().Status
				}
				if got != tt.want {
					t.Errorf("got %+v\nwant %+v", got, tt.want)
				}
			})
		}
	}
}

// TestStreamMessageAgain: the CLIs' streams write each UI message once,
// whole: the Cline CLI's --json output skips a partial message and one
// whose ts it printed (cline/cline 59e5eac3e0 cli/src/utils/plain-text-task.ts,
// processedMessages), Roo Code's stream-json streams a partial one's
// deltas and writes it whole once (RooCodeInc/Roo-Code cb83656718
// apps/cli/src/agent/json-event-emitter.ts, seenMessageIds). A stream
// that writes a tool message of a ts again (the structured output's
// writer, whose source was not found, or a later writer dropping that
// check) writes a version of the same message changed in place: its call
// counts once, with the latest input; any other message written again is
// not a second message. Before, the Cline stream made a second call (and
// message) of it, and the Roo stream kept the first input.
func TestStreamMessageAgain(t *testing.T) {
	const taskLine = `{"type":"task_started","taskId":"1767225600000"}` + "\n" + `{"type":"say","say":"text","ts":1767225600000,"text":"Read it"}` + "\n"
	tool := func(path, extra string) string {
		return `{"type":"ask","ask":"tool","ts":1767225602000,"text":` + jsonString(`{"tool":"readFile","path":"`+path+`"}`) + extra + `}` + "\n"
	}
	const said = `{"type":"say","say":"text","ts":1767225601000,"text":"Reading it."}` + "\n"
	const rooInit = `{"type":"system","subtype":"init","protocol":"roo-cli-stream","schemaVersion":1}` + "\n" + `{"type":"user","id":1767225600000,"content":"Read it","done":true}` + "\n"
	rooTool := func(path string, done bool) string {
		d := ""
		if done {
			d = `,"done":true`
		}
		return `{"type":"tool_use","id":1767225602000,"subtype":"tool","tool_use":{"name":"readFile","input":{"tool":"readFile","path":"` + path + `"}}` + d + `}` + "\n"
	}
	tests := []struct {
		name, raw, provider string
		calls, texts        int
		input               string
	}{
		{"cline: a tool message again, changed", taskLine + said + tool("a.go", "") + tool("b.go", ""), "cline", 1, 1, `{"tool":"readFile","path":"b.go"}`},
		{"cline: partial, then whole", taskLine + said + tool("a", `,"partial":true`) + tool("a.go", `,"partial":false`), "cline", 1, 1, `{"tool":"readFile","path":"a.go"}`},
		{"cline: a text again", taskLine + said + said + tool("a.go", ""), "cline", 1, 1, `{"tool":"readFile","path":"a.go"}`},
		{"roo: a tool use done again, changed", rooInit + rooTool("a", false) + rooTool("a.go", true) + rooTool("b.go", true), "roo", 1, 0, `{"tool":"readFile","path":"b.go"}`},
		{"roo: streamed, then done", rooInit + rooTool("a", false) + rooTool("a.go", true), "roo", 1, 0, `{"tool":"readFile","path":"a.go"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, cline.Plugin, []byte(tt.raw), normalize.Options{Provider: tt.provider})
			var evs []*transcript.Event
			texts := 0
			for _, it := range o.Sink.Items {
				switch ev := it.Event; {
				case ev == nil:
				case ev.Tool() != nil:
					evs = append(evs, ev)
				case ev.Type == transcript.MessageAssistant && ev.Message().Blocks[0].Type == "text":
					texts++
				}
			}
			old := transcript.Superseded(evs)
			var calls []*transcript.Event
			for _, ev := range evs {
				if ev.Type == transcript.ToolCall && !old[ev] {
					calls = append(calls, ev)
				}
			}
			if len(calls) != tt.calls || texts != tt.texts {
				t.Fatalf("calls counted %d, assistant texts %d; want %d, %d", len(calls), texts, tt.calls, tt.texts)
			}
			if in := string(calls[len(calls)-1].Tool().Input); in != tt.input {
				t.Errorf("the call's input %s, want %s", in, tt.input)
			}
		})
	}
}

// TestUITextChangedInPlace: a task read from its UI messages alone whose
// text, reasoning or completion changes in place under its ts (cline/cline
// 59e5eac3e0 src/core/task/index.ts: say and ask complete a partial
// message under its ts). Read in one part, the message is written once,
// in its latest version. Read in two (sync read the task before and
// after), the first part wrote it, and the ABI writes a new version of a
// call or result, not of a message: the transcript keeps the earlier
// version and a warning names the message, so that a reader knows the
// text is not the latest. Before, the change was dropped silently.
func TestUITextChangedInPlace(t *testing.T) {
	const fileHead = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n"
	const task = `{"ts":1767225600000,"type":"say","say":"task","text":"Run the tests"},` +
		`{"ts":1767225600100,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":5,\"cost\":0.01}"}`
	say := func(kind, text string) string {
		return `{"ts":1767225601000,"type":"say","say":"` + kind + `","text":"` + text + `"}`
	}
	doc := func(m string) string { return "[" + task + "," + m + "]\n" }
	tests := []struct {
		name, kind, v1, v2 string
	}{
		{"a text", "text", "Reading", "Reading the file."},
		{"a reasoning", "reasoning", "Think", "Think it through."},
		{"a completion", "completion_result", "Done", "Done: all tests pass."},
	}
	for _, tt := range tests {
		for _, parts := range []struct {
			name, between, text string
			warned              bool
		}{{"one part", fileHead, tt.v2, false}, {"two parts", uiHead, tt.v1, true}} {
			t.Run(tt.name+", "+parts.name, func(t *testing.T) {
				raw := uiHead + doc(say(tt.kind, tt.v1)) + parts.between + doc(say(tt.kind, tt.v2))
				o := plugintest.Run(t, cline.Plugin, []byte(raw), normalize.Options{Provider: "cline"})
				var texts []string
				for _, it := range o.Sink.Items {
					if ev := it.Event; ev != nil && ev.Type == transcript.MessageAssistant {
						for _, b := range ev.Message().Blocks {
							texts = append(texts, b.Text+b.Thinking)
						}
					}
				}
				if len(texts) != 1 || texts[0] != parts.text {
					t.Errorf("assistant texts %q; want [%q]", texts, parts.text)
				}
				warned := 0
				for _, w := range o.Result.Warnings {
					if strings.Contains(w, "UI message "+tt.kind+" at 2026-01-01T00:00:01.000Z changed in place") {
						warned++
					}
				}
				if want := map[bool]int{true: 1}[parts.warned]; warned != want {
					t.Errorf("warnings %q; want %d naming the message", o.Result.Warnings, want)
				}
			})
		}
	}
}
