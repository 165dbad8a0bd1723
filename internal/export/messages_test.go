package export

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// msgTool is a tool call as a message list holds it: the id written, its
// input, and the content of the result that names the id.
type msgTool struct {
	id, input, output string
}

// msgTools reads the calls and results of an exported message list in
// the format's own shape, in order, and fails the test when an id
// repeats, a result names no call made before it, or a call has no
// result (both APIs refuse each).
func msgTools(t *testing.T, format string, out []byte) []msgTool {
	t.Helper()
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out, &body); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var tools []msgTool
	at := map[string]int{}
	call := func(id, input string) {
		if _, dup := at[id]; dup {
			t.Fatalf("call id %s written twice:\n%s", id, out)
		}
		at[id] = len(tools)
		tools = append(tools, msgTool{id: id, input: input})
	}
	answered := map[string]bool{}
	result := func(id, content string) {
		i, ok := at[id]
		if !ok || answered[id] {
			t.Fatalf("result for %s: no call before it, or a second result:\n%s", id, out)
		}
		answered[id] = true
		tools[i].output = content
	}
	for _, m := range body.Messages {
		if format == FormatOpenAI {
			for _, c := range m.ToolCalls {
				call(c.ID, c.Function.Arguments)
			}
			if m.Role == "tool" {
				var s string
				if err := json.Unmarshal(m.Content, &s); err != nil {
					t.Fatalf("tool message content: %v", err)
				}
				result(m.ToolCallID, s)
			}
			continue
		}
		var parts []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   string          `json:"content"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			t.Fatalf("content of a %s message: %v", m.Role, err)
		}
		for _, p := range parts {
			switch p.Type {
			case "tool_use":
				call(p.ID, string(p.Input))
			case "tool_result":
				result(p.ToolUseID, p.Content)
			}
		}
	}
	for _, c := range tools {
		if !answered[c.id] {
			t.Fatalf("call %s has no result:\n%s", c.id, out)
		}
	}
	return tools
}

// TestMessagesReusedCallID: a call id the provider reused for a new call
// once the first was answered is kept as a call of its own under an id of
// its own (the first free of <id>-2, <id>-3...), in its call and in its
// result, in both formats; an answered call's message written again is
// not a new call.
func TestMessagesReusedCallID(t *testing.T) {
	agent := transcript.FidelityAgentEmitted
	ev := func(typ transcript.EventType, p transcript.Payload) *transcript.Event {
		return &transcript.Event{Type: typ, Path: "agent", Timestamp: at(2), Payload: p}
	}
	prompt := func(text string) *transcript.Event {
		return ev(transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{{Type: transcript.BlockText, Fidelity: agent, Text: text, Origin: transcript.OriginPrompt}}})
	}
	input := func(cmd string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": cmd}); return b }
	asst := func(id string, blocks ...transcript.Block) *transcript.Event {
		return ev(transcript.MessageAssistant, &transcript.MessagePayload{Role: "assistant", ID: id, Blocks: blocks})
	}
	use := func(id, cmd string) transcript.Block {
		return transcript.Block{Type: transcript.BlockToolUse, Fidelity: agent, ToolName: "bash", ToolID: id, ToolInput: input(cmd)}
	}
	answer := func(id, out string) *transcript.Event {
		return ev(transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{{Type: transcript.BlockToolResult, Fidelity: agent, ToolID: id, ToolContent: out}}})
	}
	call := func(id, cmd string) *transcript.Event {
		return ev(transcript.ToolCall, &transcript.ToolPayload{Name: "bash", CallID: id, Input: input(cmd), Command: cmd, Fidelity: agent})
	}
	result := func(id, out string) *transcript.Event {
		return ev(transcript.ToolResult, &transcript.ToolPayload{Name: "bash", CallID: id, Output: out, HasOutput: true, Status: transcript.StatusOK, Fidelity: agent})
	}
	for _, tc := range []struct {
		name     string
		evs      []*transcript.Event
		dangling string
		want     []msgTool // input: the command
		renamed  []string  // <transcript's id> -> <id written>
		noted    []string
	}{
		{name: "reused in a later turn (blocks and events)", evs: []*transcript.Event{
			prompt("List the files"), asst("m1", use("call_1", "ls")), call("call_1", "ls"), answer("call_1", "go.mod"), result("call_1", "go.mod"),
			asst("m2", transcript.TextBlock("Two files.")),
			prompt("What changed?"), asst("m3", transcript.TextBlock("Checking."), use("call_1", "git status")), call("call_1", "git status"),
			answer("call_1", "M main.go"), result("call_1", "M main.go"), asst("m4", transcript.TextBlock("main.go is modified.")),
		}, want: []msgTool{{"call_1", "ls", "go.mod"}, {"call_1-2", "git status", "M main.go"}}, renamed: []string{"call_1 -> call_1-2"}},
		{name: "reused by calls known from their events alone", evs: []*transcript.Event{
			prompt("go"), asst("", transcript.TextBlock("Working.")),
			call("call_1", "ls"), result("call_1", "one"), call("call_1", "pwd"), result("call_1", "two"), call("call_1", "date"), result("call_1", "three"),
		}, want: []msgTool{{"call_1", "ls", "one"}, {"call_1-2", "pwd", "two"}, {"call_1-3", "date", "three"}},
			renamed: []string{"call_1 -> call_1-2", "call_1 -> call_1-3"}},
		{name: "the provider's own id is taken by a renamed call", evs: []*transcript.Event{
			prompt("go"), asst("m1", use("call_1", "ls")), call("call_1", "ls"), result("call_1", "one"),
			asst("m2", use("call_1", "pwd")), call("call_1", "pwd"), result("call_1", "two"),
			asst("m3", use("call_1-2", "date")), call("call_1-2", "date"), result("call_1-2", "three"),
		}, want: []msgTool{{"call_1", "ls", "one"}, {"call_1-2", "pwd", "two"}, {"call_1-2-2", "date", "three"}},
			renamed: []string{"call_1 -> call_1-2", "call_1-2 -> call_1-2-2"}},
		{name: "an answered call's message written again is the same call", evs: []*transcript.Event{
			prompt("List the files"), asst("m1", transcript.TextBlock("Listing:"), use("call_ls", "ls")), call("call_ls", "ls"), result("call_ls", "go.mod"),
			prompt("Now compact the session."), asst("m1", transcript.TextBlock("Listing:"), use("call_ls", "ls")), asst("m2", transcript.TextBlock("Done.")),
		}, want: []msgTool{{"call_ls", "ls", "go.mod"}}},
		{name: "the reused id's second call unanswered, noted", dangling: DanglingNote, evs: []*transcript.Event{
			prompt("go"), asst("m1", use("call_1", "ls")), call("call_1", "ls"), result("call_1", "one"),
			asst("m2", use("call_1", "pwd")), call("call_1", "pwd"),
		}, want: []msgTool{{"call_1", "ls", "one"}, {"call_1-2", "pwd", danglingNote}}, renamed: []string{"call_1 -> call_1-2"}, noted: []string{"call_1-2"}},
	} {
		for _, format := range []string{FormatOpenAI, FormatAnthropic} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				evs := append([]*transcript.Event{
					{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
					{Type: transcript.StepStarted, Path: "agent", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
				}, tc.evs...)
				p := writeRun(t, t.TempDir(), rootID, evs)
				var buf bytes.Buffer
				rep, err := ExportMessages(context.Background(), &buf, Run{Path: p, Dir: filepath.Dir(p)}, MessagesOptions{Format: format, Dangling: tc.dangling})
				if err != nil {
					t.Fatalf("%v\n%s", err, buf.String())
				}
				got := msgTools(t, format, buf.Bytes())
				if len(got) != len(tc.want) {
					t.Fatalf("calls %+v, want %+v\n%s", got, tc.want, buf.String())
				}
				for i, w := range tc.want {
					g := got[i]
					if g.id != w.id || !strings.Contains(g.input, w.input) || g.output != w.output {
						t.Errorf("call %d: %+v, want id %s, input with %q, result %q", i, g, w.id, w.input, w.output)
					}
				}
				var renamed []string
				for _, r := range rep.Renamed {
					renamed = append(renamed, r.CallID+" -> "+r.ID)
				}
				if !slices.Equal(renamed, tc.renamed) {
					t.Errorf("renamed %v, want %v", renamed, tc.renamed)
				}
				if !slices.Equal(rep.Noted, tc.noted) {
					t.Errorf("noted %v, want %v", rep.Noted, tc.noted)
				}
			})
		}
	}
}

// TestMessagesReusedCallIDInItsMessage: the new call of a reused id stays
// in the assistant message whose block made it, after that message's
// text.
func TestMessagesReusedCallIDInItsMessage(t *testing.T) {
	agent := transcript.FidelityAgentEmitted
	tool := func(typ transcript.EventType, cmd, out string) *transcript.Event {
		return &transcript.Event{Type: typ, Path: "agent", Timestamp: at(2), Payload: &transcript.ToolPayload{Name: "bash", CallID: "call_1", Command: cmd, Output: out, HasOutput: out != "", Fidelity: agent}}
	}
	msg := func(text, cmd string) *transcript.Event {
		return &transcript.Event{Type: transcript.MessageAssistant, Path: "agent", Timestamp: at(2), Payload: &transcript.MessagePayload{Role: "assistant", ID: text, Blocks: []transcript.Block{
			transcript.TextBlock(text), {Type: transcript.BlockToolUse, Fidelity: agent, ToolName: "bash", ToolID: "call_1", ToolInput: json.RawMessage(`{"command":"` + cmd + `"}`)}}}}
	}
	p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.StepStarted, Path: "agent", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
		msg("First.", "ls"), tool(transcript.ToolCall, "ls", ""), tool(transcript.ToolResult, "", "one"),
		msg("Second.", "pwd"), tool(transcript.ToolCall, "pwd", ""), tool(transcript.ToolResult, "", "two"),
	})
	for format, want := range map[string]string{
		FormatOpenAI:    `{"content":"Second.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"command\":\"pwd\"}","name":"bash"},"id":"call_1-2","type":"function"}]}`,
		FormatAnthropic: `{"content":[{"text":"Second.","type":"text"},{"id":"call_1-2","input":{"command":"pwd"},"name":"bash","type":"tool_use"}],"role":"assistant"}`,
	} {
		var buf bytes.Buffer
		if _, err := ExportMessages(context.Background(), &buf, Run{Path: p, Dir: filepath.Dir(p)}, MessagesOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s: no %s in\n%s", format, want, buf.String())
		}
	}
}
