//go:build !wasip1

package kimi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// legacyRec is one Kimi CLI wire record {timestamp, message: {type,
// payload}}.
func legacyRec(typ, payload string) string {
	return `{"timestamp":1767261600.0,"message":{"type":"` + typ + `","payload":` + payload + `}}`
}

// runLegacy runs the plugin over lines, one record a line.
func runLegacy(t *testing.T, lines []string) *sdktest.Result {
	t.Helper()
	r, err := sdktest.Run(context.Background(), kimi.Plugin, "kimi", []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStepInterruptedFailed: every Kimi CLI that logs its wire (0.59 on)
// sends StepInterrupted only when the step raised an error (kimisoul.py,
// MoonshotAI/kimi-cli 4a550eff: except Exception around the step; the
// user's Ctrl-C is asyncio.CancelledError, which it does not catch), the
// API call's once its retries are spent. A session whose last step ended
// so failed, whether or not the model had answered part of it before.
func TestStepInterruptedFailed(t *testing.T) {
	meta := `{"type": "metadata", "protocol_version": "1.10"}`
	begin := legacyRec("TurnBegin", `{"user_input":"Fix the bug."}`)
	step := legacyRec("StepBegin", `{"n":1}`)
	tests := []struct {
		name   string
		lines  []string
		status string
		errors int
	}{
		{"failed before any answer", []string{meta, begin, step, legacyRec("StepInterrupted", `{}`), legacyRec("TurnEnd", `{}`)}, "error", 1},
		{"failed after part of an answer", []string{meta, begin, step,
			legacyRec("ContentPart", `{"type":"text","text":"Let me look at"}`),
			legacyRec("StepInterrupted", `{}`), legacyRec("TurnEnd", `{}`)}, "error", 1},
		{"retried, then failed", []string{meta, begin, step,
			legacyRec("StepRetry", `{"n":1,"next_attempt":2,"max_attempts":3,"wait_s":1.0,"error_type":"APIStatusError","status_code":503}`),
			legacyRec("StepInterrupted", `{}`), legacyRec("TurnEnd", `{}`)}, "error", 2},
		{"the user cancelled: no StepInterrupted", []string{meta, begin, step,
			legacyRec("ContentPart", `{"type":"text","text":"Let me look at"}`), legacyRec("TurnEnd", `{}`)}, "ok", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runLegacy(t, tt.lines)
			if r.Step.Status != tt.status || len(r.Step.Errors) != tt.errors {
				t.Errorf("status %q, errors %+v; want %q and %d errors", r.Step.Status, r.Step.Errors, tt.status, tt.errors)
			}
		})
	}
}

// TestLegacySubagentTaskID: Kimi CLI builds before 1.25 (wire protocol
// 1.6) wrote a sub-agent's records as SubagentEvent {task_tool_call_id,
// event}, with no parent_tool_call_id or agent_id (kimi_cli/wire/types.py
// before ff09e97c; today's model still reads that name). Their records are
// the sub-agent's, in its scope, not unmapped.
func TestLegacySubagentTaskID(t *testing.T) {
	sub := func(field, typ, payload string) string {
		return legacyRec("SubagentEvent", `{"`+field+`":"Task:0","event":{"type":"`+typ+`","payload":`+payload+`}}`)
	}
	tests := []struct {
		field string
	}{{"task_tool_call_id"}, {"parent_tool_call_id"}}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			lines := []string{
				legacyRec("TurnBegin", `{"user_input":"Find the parser."}`),
				legacyRec("StepBegin", `{"n":1}`),
				legacyRec("ToolCall", `{"type":"function","id":"Task:0","function":{"name":"Task","arguments":"{\"description\":\"find\",\"subagent_name\":\"coder\",\"prompt\":\"Find it.\"}"}}`),
				sub(tt.field, "TurnBegin", `{"user_input":"Find it."}`),
				sub(tt.field, "StepBegin", `{"n":1}`),
				sub(tt.field, "ToolCall", `{"type":"function","id":"Grep:0","function":{"name":"Grep","arguments":"{\"pattern\":\"parse\"}"}}`),
				sub(tt.field, "ToolResult", `{"tool_call_id":"Grep:0","return_value":{"is_error":false,"output":"src/config.py:12","message":"","display":[]}}`),
				sub(tt.field, "TurnEnd", `{}`),
				legacyRec("ToolResult", `{"tool_call_id":"Task:0","return_value":{"is_error":false,"output":"In src/config.py.","message":"","display":[]}}`),
			}
			plugintest.WantToolTrace(t, kimi.Plugin, "kimi", lines, []string{
				"open Task:0 by Task:0",
				"main: call Task Task:0",
				"Task:0: call Grep Grep:0",
				"Task:0: result Grep Grep:0: src/config.py:12",
				"main: result Task Task:0: In src/config.py.",
				"close Task:0 ok",
			})
		})
	}
}

// TestCLIText: the Kimi CLI writes its own text as a ContentPart of a
// turn whose model it never called (kimisoul.py: "Prompt blocked by
// hook.", 'Unknown slash command "/x".'); only a step (StepBegin) calls
// the model. That text is not the model's answer; after a slash command
// it is a warning (a prompt blocked: TestBlockedPrompt).
func TestCLIText(t *testing.T) {
	begin := legacyRec("TurnBegin", `{"user_input":"/deploy now"}`)
	cli := legacyRec("ContentPart", `{"type":"text","text":"Unknown slash command \"/deploy\"."}`)
	tests := []struct {
		name    string
		lines   []string
		answer  string
		warning bool
	}{
		{"an unknown slash command", []string{begin, cli, legacyRec("TurnEnd", `{}`)}, "", true},
		{"a slash command a hook blocked, not announced (told from the command's own text by nothing)", []string{begin, legacyRec("ContentPart", `{"type":"text","text":"Prompt blocked by hook."}`), legacyRec("TurnEnd", `{}`)}, "", true},
		{"the model's answer", []string{begin, legacyRec("StepBegin", `{"n":1}`), legacyRec("ContentPart", `{"type":"text","text":"Deployed."}`), legacyRec("TurnEnd", `{}`)}, "Deployed.", false},
		{"a log without StepBegin: thinking first", []string{begin, legacyRec("ContentPart", `{"type":"think","think":"Deploy."}`), legacyRec("ContentPart", `{"type":"text","text":"Deployed."}`), legacyRec("TurnEnd", `{}`)}, "Deployed.", false},
		{"a log without StepBegin: a call first", []string{begin, legacyRec("ToolCall", `{"type":"function","id":"t1","function":{"name":"Shell","arguments":"{\"command\":\"make deploy\"}"}}`),
			legacyRec("ToolResult", `{"tool_call_id":"t1","return_value":{"is_error":false,"output":"ok","message":"","display":[]}}`), legacyRec("ContentPart", `{"type":"text","text":"Deployed."}`), legacyRec("TurnEnd", `{}`)}, "Deployed.", false},
		{"the next turn's answer", []string{begin, cli, legacyRec("TurnEnd", `{}`),
			legacyRec("TurnBegin", `{"user_input":"Deploy now"}`), legacyRec("StepBegin", `{"n":1}`), legacyRec("ContentPart", `{"type":"text","text":"Deployed."}`), legacyRec("TurnEnd", `{}`)}, "Deployed.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runLegacy(t, tt.lines)
			answer := ""
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil && m.Role == "assistant" {
					for _, b := range m.Blocks {
						answer += b.Text
					}
				}
			}
			warned := false
			for _, w := range r.Step.Warnings {
				warned = warned || strings.HasPrefix(w, "kimi: the CLI said, no model call: ")
			}
			if answer != tt.answer || warned != tt.warning {
				t.Errorf("assistant text %q, warned %v; want %q, %v", answer, warned, tt.answer, tt.warning)
			}
		})
	}
}

// TestSideQuestion: /btw asks a side question while the agent works; a
// separate model call answers it from the conversation so far, and
// neither the question nor the answer joins the main conversation
// (MoonshotAI/kimi-cli 4a550eff, soul/btw.py run_side_question: BtwBegin
// {id, question}, then BtwEnd {id, response} or {id, error}; it sends no
// StatusUpdate). It is a child run of its own: the answer is never the
// step's, and no usage is counted for it. Before, both records were
// declared ignored and the exchange was lost.
func TestSideQuestion(t *testing.T) {
	meta := `{"type": "metadata", "protocol_version": "1.10"}`
	turn := []string{meta,
		legacyRec("TurnBegin", `{"user_input":"Refactor the parser."}`),
		legacyRec("StepBegin", `{"n":1}`),
		legacyRec("ContentPart", `{"type":"text","text":"Working"}`),
	}
	end := []string{
		legacyRec("ContentPart", `{"type":"text","text":" on it."}`),
		legacyRec("StatusUpdate", `{"token_usage":{"input_other":100,"output":20,"input_cache_read":0,"input_cache_creation":0},"message_id":"chatcmpl-1"}`),
		legacyRec("TurnEnd", `{}`),
	}
	begin := legacyRec("BtwBegin", `{"id":"a1b2c3d4e5f6","question":"What does parse() return?"}`)
	tests := []struct {
		name  string
		btw   []string
		trace []string // scopes opened and closed
		texts []string // scope role: text of every block (the main turn's message is written when it opens)
	}{
		{"answered", []string{begin, legacyRec("BtwEnd", `{"id":"a1b2c3d4e5f6","response":"A Node tree."}`)},
			[]string{"open btw-a1b2c3d4e5f6 by ", "close btw-a1b2c3d4e5f6 ok"},
			[]string{"user: Refactor the parser.", "assistant: Working on it.", "btw-a1b2c3d4e5f6 user: What does parse() return?",
				"btw-a1b2c3d4e5f6 assistant: A Node tree."}},
		{"failed", []string{begin, legacyRec("BtwEnd", `{"id":"a1b2c3d4e5f6","error":"Side question tried to call tools (Grep) instead of answering directly."}`)},
			[]string{"open btw-a1b2c3d4e5f6 by ", "close btw-a1b2c3d4e5f6 error"},
			[]string{"user: Refactor the parser.", "assistant: Working on it.", "btw-a1b2c3d4e5f6 user: What does parse() return?"}},
		{"not ended when the log ends", []string{begin},
			[]string{"open btw-a1b2c3d4e5f6 by ", "close btw-a1b2c3d4e5f6 incomplete"},
			[]string{"user: Refactor the parser.", "assistant: Working on it.", "btw-a1b2c3d4e5f6 user: What does parse() return?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := append(append(append([]string{}, turn...), tt.btw...), end...)
			o := plugintest.Run(t, kimi.Plugin, []byte(strings.Join(lines, "\n")+"\n"), normalize.Options{Provider: "kimi"})
			var trace, texts []string
			for _, l := range o.ToolTrace() {
				if strings.HasPrefix(l, "open ") || strings.HasPrefix(l, "close ") {
					trace = append(trace, l)
				}
			}
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Message() == nil {
					continue
				}
				m := it.Event.Message()
				for _, b := range m.Blocks {
					texts = append(texts, strings.TrimPrefix(it.Scope+" ", " ")+string(m.Role)+": "+b.Text)
				}
			}
			if strings.Join(trace, "|") != strings.Join(tt.trace, "|") || strings.Join(texts, "|") != strings.Join(tt.texts, "|") {
				t.Errorf("scopes %q, want %q\nblocks %q\nwant %q", trace, tt.trace, texts, tt.texts)
			}
			if o.Result.FinalText != "Working on it." || len(o.Result.Unmapped) != 0 {
				t.Errorf("final text %q, unmapped %v; want the main turn's answer and none", o.Result.FinalText, o.Result.Unmapped)
			}
			if u := o.Result.Usage; u == nil || u.InputTokens == nil || *u.InputTokens != 100 {
				t.Errorf("usage %+v, want the main turn's 100 input tokens alone", u)
			}
		})
	}
}

// TestBlockedPrompt: a UserPromptSubmit hook that blocks a prompt makes
// the Kimi CLI send TurnBegin, the hook's reason as a TextPart ("Prompt
// blocked by hook." when it gives none) and TurnEnd, the model never
// called (MoonshotAI/kimi-cli 4a550eff, soul/kimisoul.py run); the wire
// server (kimi --wire) sends HookTriggered and HookResolved {event
// "UserPromptSubmit", action "block", reason} before them
// (wire/server.py, hooks/engine.py). Text before a step is otherwise only
// a slash command's (its output, an unknown command), so the text of a
// turn whose prompt is not a slash command, or that a HookResolved block
// announced, is the block: the turn failed, its reason the error (a
// status error below the terminal level, as Kimi Code's turn.ended
// reason blocked), and a later answered turn makes the session ok again.
// Before, it was only a warning and such a session was ok.
func TestBlockedPrompt(t *testing.T) {
	const reason = "Pushing tags is not allowed from this machine."
	text := legacyRec("ContentPart", `{"type":"text","text":"`+reason+`"}`)
	end := legacyRec("TurnEnd", `{}`)
	resolved := legacyRec("HookResolved", `{"event":"UserPromptSubmit","target":"/release","action":"block","reason":"`+reason+`","duration_ms":12}`)
	answered := []string{legacyRec("TurnBegin", `{"user_input":"then list the tags"}`), legacyRec("StepBegin", `{"n":1}`),
		legacyRec("ContentPart", `{"type":"text","text":"v1.0 and v1.1."}`), end}
	tests := []struct {
		name          string
		lines         []string
		status, error string
	}{
		{"a prompt blocked", []string{legacyRec("TurnBegin", `{"user_input":[{"type":"text","text":"push the release tag"}]}`), text, end},
			"error", "the prompt was blocked by a UserPromptSubmit hook: " + reason},
		{"a slash command blocked, announced by HookResolved", []string{legacyRec("HookTriggered", `{"event":"UserPromptSubmit","target":"/release","hook_count":1}`), resolved,
			legacyRec("TurnBegin", `{"user_input":"/release"}`), text, end},
			"error", "the prompt was blocked by a UserPromptSubmit hook: " + reason},
		{"a prompt blocked, then a turn answered", append([]string{legacyRec("TurnBegin", `{"user_input":"push the release tag"}`), text, end}, answered...),
			"ok", ""},
		{"an unknown slash command: the CLI's own text", []string{legacyRec("TurnBegin", `{"user_input":"/deploy now"}`),
			legacyRec("ContentPart", `{"type":"text","text":"Unknown slash command \"/deploy\"."}`), end},
			"incomplete", "the log ends on a prompt that got no answer"},
		{"a HookResolved that allowed", append([]string{legacyRec("HookResolved", `{"event":"UserPromptSubmit","action":"allow","reason":""}`)}, answered...),
			"ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runLegacy(t, tt.lines)
			if r.Step.Status != tt.status || r.Step.Error != tt.error {
				t.Errorf("status %q error %q, want %q %q", r.Step.Status, r.Step.Error, tt.status, tt.error)
			}
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil && m.Role == "assistant" && strings.Contains(m.Blocks[0].Text, reason) {
					t.Errorf("the hook's reason is an assistant message")
				}
			}
		})
	}
}
