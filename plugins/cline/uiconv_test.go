//go:build !wasip1

package cline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// uiHead is the facts line and file line of a Cline task folder's
// ui_messages.json, as the host writes them before the document.
const uiHead = `{"$twasm":"source","store":"Cline tasks","path":"1767225600000","name":"1767225600000","size":1,"mtime":"2026-01-01T00:05:00Z"}` + "\n" +
	`{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n"

// TestUIOnlyConversation: a task folder holding only ui_messages.json is
// read from the UI's copy of the conversation (ClineMessage say/ask types
// as cline/cline src/shared/ExtensionMessage.ts declares them): the
// user's feedback is a prompt, the model's text an answer, a command a
// call whose result is its command_output without a status (the UI
// states no exit code), a file tool a call with no result; an error after
// the last answer makes the step an error (spec §6.7), even when a
// request nobody answered follows it, one the task went on after does
// not. With the API history the UI's copy is not mapped.
// Written for the test from Cline's source.
func TestUIOnlyConversation(t *testing.T) {
	const convo = `{"ts":1767225600000,"type":"say","say":"task","text":"Run the tests"},` +
		`{"ts":1767225600100,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":5,\"cost\":0.01}"},` +
		`{"ts":1767225601000,"type":"say","say":"text","text":"Running them."},` +
		`{"ts":1767225602000,"type":"ask","ask":"command","text":"go test ./..."},` +
		`{"ts":1767225603000,"type":"ask","ask":"command_output","text":"ok  pkg/a"},` +
		`{"ts":1767225603100,"type":"ask","ask":"command_output","text":"FAIL pkg/b"},` +
		`{"ts":1767225604000,"type":"say","say":"api_req_started","text":"{\"tokensIn\":20,\"tokensOut\":5,\"cost\":0.02}"},` +
		`{"ts":1767225605000,"type":"say","say":"tool","text":"{\"tool\":\"readFile\",\"path\":\"b.go\"}"},` +
		`{"ts":1767225606000,"type":"say","say":"completion_result","text":"pkg/b fails.HAS_CHANGES"},` +
		`{"ts":1767225607000,"type":"say","say":"user_feedback","text":"Fix it"},` +
		`{"ts":1767225608000,"type":"say","say":"api_req_started","text":"{\"tokensIn\":30,\"tokensOut\":5,\"cost\":0.03}"},` +
		`{"ts":1767225609000,"type":"say","say":"text","text":"Fixed."}`
	const failed = `,{"ts":1767225610000,"type":"say","say":"user_feedback","text":"And the docs"},` +
		`{"ts":1767225611000,"type":"ask","ask":"api_req_failed","text":"429 rate limited"}`
	const api = `{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n" +
		`[{"role":"user","content":[{"type":"text","text":"<task>\nRun the tests\n</task>"}]},{"role":"assistant","content":[{"type":"text","text":"Fixed."}]}]` + "\n"
	tests := []struct {
		name, raw       string
		prompts, calls  int
		cmdOutput       string
		status, lastMsg string
	}{
		{"answered", uiHead + "[" + convo + "]\n", 2, 2, "ok  pkg/a\nFAIL pkg/b", "ok", "Fixed."},
		{"error after the last answer", uiHead + "[" + convo + failed + "]\n", 3, 2, "ok  pkg/a\nFAIL pkg/b", "error", "And the docs"},
		{"error the task went on after", uiHead + "[" + convo[:strings.LastIndex(convo, ",{")] + `,{"ts":1767225608500,"type":"say","say":"error","text":"overloaded"}` + convo[strings.LastIndex(convo, ",{"):] + "]\n", 2, 2, "ok  pkg/a\nFAIL pkg/b", "ok", "Fixed."},
		// Cline showed the error after the last answer, then started a
		// request (api_req_started, no figures yet: the model asked
		// again, the error in its request) still running: the turn goes
		// on (the error stays listed).
		{"error after the last answer, then a request still running", uiHead + "[" + convo + `,{"ts":1767225610000,"type":"say","say":"error","text":"Cline tried to use write_to_file without value for required parameter 'path'."},` +
			`{"ts":1767225611000,"type":"say","say":"api_req_started","text":"{\"request\":\"[ERROR] You did not use a tool...\"}"}]` + "\n", 2, 2, "ok  pkg/a\nFAIL pkg/b", "incomplete", "Fixed."},
		{"with the API history", uiHead + "[" + convo + "]\n" + api, 1, 0, "", "ok", "Fixed."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			prompts, calls, output, last := 0, 0, "", ""
			for _, e := range r.Events {
				switch e.Type {
				case transcript.MessageUser:
					prompts++
				case transcript.ToolCall:
					calls++
				case transcript.ToolResult:
					p := e.Tool()
					if p.Name == "execute_command" {
						output = p.Output
						if p.Status != "" || p.ExitCode != nil {
							t.Errorf("command result states status %q exit %v: the UI states none", p.Status, p.ExitCode)
						}
					} else {
						t.Errorf("result for %s: the UI states no outcome of a file tool", p.Name)
					}
				}
				if m := e.Message(); m != nil && len(m.Blocks) > 0 && m.Blocks[0].Text != "" {
					last = m.Blocks[0].Text
				}
			}
			if prompts != tt.prompts || calls != tt.calls || output != tt.cmdOutput {
				t.Errorf("prompts %d calls %d command output %q, want %d %d %q", prompts, calls, output, tt.prompts, tt.calls, tt.cmdOutput)
			}
			if r.Step.Status != tt.status || last != tt.lastMsg {
				t.Errorf("status %q (%s), last message %q; want %q, %q", r.Step.Status, r.Step.Error, last, tt.status, tt.lastMsg)
			}
		})
	}
}

// TestUIOnlyWholeCapture: the raw capture of a task read from its UI
// messages alone that grew (sync archived it in two parts: a facts line,
// then the UI's messages, for each) read whole, at once (twasm import of
// it), holds both parts' conversations, each message once: before, the
// earlier part's conversation, held back for its end, was dropped at the
// new part's facts line (as sync's replay wants: it is written with the
// replay's output dropped). Each message carries its UI index as its id,
// so that sync's filter leaves out what an earlier part holds.
func TestUIOnlyWholeCapture(t *testing.T) {
	// The task's ui_messages.json before and after the turn, one a line
	// (shared with synccmd's TestSyncClineUIOnlyTaskGrown).
	grown, err := os.ReadFile(filepath.Join("testdata", "ui_only_grown.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	versions := strings.Split(string(grown), "\n")
	raw := uiHead + versions[0] + "\n" + uiHead + versions[1] + "\n"
	r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var texts, ids []string
	calls := 0
	for _, e := range r.Events {
		switch e.Type {
		case transcript.MessageUser, transcript.MessageAssistant:
			m := e.Message()
			ids = append(ids, m.ID)
			if len(m.Blocks) > 0 && m.Blocks[0].Text != "" {
				texts = append(texts, m.Blocks[0].Text)
			}
		case transcript.ToolCall:
			calls++
		}
	}
	if want := []string{"Run the tests", "Running them.", "Fix it", "Fixed."}; strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("messages %q; want %q", texts, want)
	}
	if want := []string{"ui-0", "ui-2", "ui-3", "ui-5", "ui-7"}; strings.Join(ids, "|") != strings.Join(want, "|") {
		t.Errorf("message ids %q; want %q", ids, want)
	}
	if calls != 1 {
		t.Errorf("%d calls; want 1", calls)
	}
	if u := r.Step.Usage; u == nil || u.InputTokens == nil || *u.InputTokens != 40 {
		t.Errorf("usage %+v; want 40 input tokens", u)
	}
	if len(r.Step.Warnings) != 1 || !strings.Contains(r.Step.Warnings[0], "states 1 of its 1 tool call(s)") {
		t.Errorf("warnings %q; want one, of 1 call's outcome stated", r.Step.Warnings)
	}
}

// TestUIRequestModel: Cline 3.x states on every UI message the model
// then configured (modelInfo {modelId, providerId, mode}); a request's
// (say api_req_started) is the model it went to, and the latest
// request's is the step's model. A task read from its UI messages alone
// states the model nowhere else: before, its step named none. Shapes as
// in real ui_messages.json files of Cline 3.x (a task that switched from
// anthropic/claude-sonnet-4.5 to x-ai/grok-code-fast-1 mid-task); with
// the conversation file, its modelInfo names the same.
func TestUIRequestModel(t *testing.T) {
	const head = `{"$twasm":"source","store":"Cline tasks","path":"1767225600000","name":"1767225600000","size":1,"mtime":"2026-01-01T00:05:00Z"}` + "\n" +
		`{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n"
	const sonnet = `"modelInfo":{"providerId":"cline","modelId":"anthropic/claude-sonnet-4.5","mode":"act"}`
	const grok = `"modelInfo":{"providerId":"cline","modelId":"x-ai/grok-code-fast-1","mode":"act"}`
	req := func(ts, info string) string {
		s := `{"ts":` + ts + `,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":5,\"cost\":0.01}"`
		if info != "" {
			s += "," + info
		}
		return s + "}"
	}
	task := `{"ts":1767225600000,"type":"say","say":"task","text":"yo wassup",` + sonnet + `}`
	answer := func(ts, info string) string {
		return `{"ts":` + ts + `,"type":"say","say":"completion_result","text":"Done","` + info[1:] + `}`
	}
	tests := []struct {
		name, raw, model string
	}{
		{"one model", head + "[" + task + "," + req("1767225601000", sonnet) + "," + answer("1767225602000", sonnet) + "]\n", "anthropic/claude-sonnet-4.5"},
		{"switched mid-task: the latest request's", head + "[" + task + "," + req("1767225601000", sonnet) + "," + answer("1767225602000", sonnet) + "," +
			`{"ts":1767225603000,"type":"say","say":"user_feedback","text":"again",` + grok + `},` + req("1767225604000", grok) + "," + answer("1767225605000", grok) + "]\n", "x-ai/grok-code-fast-1"},
		{"a task message's model is not a request's", head + "[" + task + "," + req("1767225601000", "") + "]\n", ""},
		{"with the conversation file", head + "[" + task + "," + req("1767225601000", sonnet) + "]\n" +
			`{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n" +
			`[{"role":"user","content":[{"type":"text","text":"<task>\nyo wassup\n</task>"}]},{"role":"assistant","content":[{"type":"text","text":"Done"}],` + sonnet + `}]` + "\n",
			"anthropic/claude-sonnet-4.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if r.Step.Model != tt.model {
				t.Errorf("step model %q, want %q", r.Step.Model, tt.model)
			}
		})
	}
}
