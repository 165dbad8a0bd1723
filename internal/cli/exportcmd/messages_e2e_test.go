package exportcmd_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// `export messages` output is checked by the official SDKs' request types:
// it must decode into openai.ChatCompletionNewParams and
// anthropic.MessageNewParams with every message in its typed variant, and
// every tool call and result of the transcript must be there, paired.

var messagesCases = []struct {
	provider, file string
	dangling       bool // the transcript has calls without results
}{
	{"claude", "testdata/golden/claude/stream_json_tool_kinds.jsonl", false},
	{"claude", "testdata/golden/claude/session_log.jsonl", true},
	{"claude", "testdata/golden/claude/stream_json_partial_messages.jsonl", false},
	{"codex", "testdata/golden/codex/exec_command_failed.jsonl", false},
	{"codex", "testdata/golden/codex/exec_file_change.jsonl", false},
	{"codex", "testdata/golden/codex/exec_command_dangling.jsonl", true},
	{"gemini", "testdata/golden/gemini/stream_parallel_tools.jsonl", false},
	{"copilot", "testdata/golden/copilot/json_tools_out_of_order.jsonl", false},
	{"openai", "testdata/golden/openai/chat_sse_tool_calls_parallel.sse", true},
	{"pi", "testdata/golden/pi/session_fork_branch_summary.jsonl", false},
	{"opencode", "testdata/golden/opencode/json_run_tool_error.jsonl", false},
	{"cline", "testdata/golden/cline/task_native_tools.jsonl", false},
	{"qwen", "testdata/golden/qwen/session_tools_errors.jsonl", false},
	{"goose", "testdata/golden/goose/rows_session_tools_errors.jsonl", false},
	{"amp", "testdata/golden/amp/thread_tools_failures.json", false},
	{"kimi", "testdata/golden/kimi/code_tools_failed_turn.jsonl", false},
	{"droid", "testdata/golden/droid/session_settings_tools.jsonl", false},
	{"crush", "testdata/golden/crush/rows_summary_errors_denied.jsonl", true},
	{"cursor", "testdata/golden/cursor/transcript_tools_subagent.jsonl", true},
}

func TestExportMessagesAcceptedBySDKs(t *testing.T) {
	storage := t.TempDir()
	for _, tc := range messagesCases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			r := clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--json", "--provider", tc.provider, "--prompt", "do the task",
				"--system-prompt", "You are careful.", "--input", filepath.Join(clitest.Root, tc.file))
			var rec struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal([]byte(clitest.LastLine(r.Out)), &rec); err != nil || rec.RunID == "" {
				t.Fatalf("record: %v\n%v", err, r)
			}
			evs := clitest.ReadRun(t, clitest.TranscriptPath(storage, rec.RunID))
			calls, results := map[string]bool{}, map[string]bool{}
			for _, ev := range evs {
				switch ev.Type {
				case transcript.ToolCall:
					calls[ev.Tool().CallID] = true
				case transcript.ToolResult:
					results[ev.Tool().CallID] = true
				}
			}
			for _, format := range []string{"openai", "anthropic"} {
				args := []string{"--storage", storage, "export", "messages", "--format", format, rec.RunID}
				r := clitest.Run(t, clitest.Plain(), args...)
				if tc.dangling {
					if r.Code != 1 || !strings.Contains(r.ErrOut, "results") || r.Out != "" {
						t.Fatalf("%s: dangling calls must be refused with the reason and nothing written: %v", format, r)
					}
					r = clitest.RunOK(t, clitest.Plain(), append(args, "--dangling", "note")...)
					if !strings.Contains(r.ErrOut, "answered with a note") {
						t.Fatalf("%s: notes not reported: %v", format, r)
					}
				} else if r.Code != 0 {
					t.Fatalf("%s: %v", format, r)
				}
				gotCalls, gotResults := map[string]bool{}, map[string]bool{}
				switch format {
				case "openai":
					checkOpenAI(t, []byte(r.Out), gotCalls, gotResults)
				case "anthropic":
					checkAnthropic(t, []byte(r.Out), gotCalls, gotResults)
				}
				for id := range calls {
					if !gotCalls[id] {
						t.Fatalf("%s: call %s of the transcript is not in the messages:\n%s", format, id, r.Out)
					}
					if !gotResults[id] {
						t.Fatalf("%s: call %s has no tool result in the messages", format, id)
					}
				}
				for id := range results {
					if !gotResults[id] {
						t.Fatalf("%s: result of %s missing", format, id)
					}
				}
			}
		})
	}
}

func checkOpenAI(t *testing.T, out []byte, calls, results map[string]bool) {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(out, &body); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	body["model"] = json.RawMessage(`"gpt-5"`)
	b, _ := json.Marshal(body)
	var p openai.ChatCompletionNewParams
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("openai.ChatCompletionNewParams rejects the list: %v\n%s", err, out)
	}
	if len(p.Messages) == 0 {
		t.Fatalf("no messages: %s", out)
	}
	sawUser := false
	for i, m := range p.Messages {
		switch {
		case m.OfSystem != nil:
			if i != 0 {
				t.Fatalf("system message at %d", i)
			}
		case m.OfUser != nil:
			sawUser = true
		case m.OfAssistant != nil:
			for _, c := range m.OfAssistant.ToolCalls {
				fn := c.OfFunction
				if fn == nil || fn.ID == "" || fn.Function.Name == "" || !json.Valid([]byte(fn.Function.Arguments)) {
					t.Fatalf("message %d: tool call not a function call with id, name and JSON arguments: %+v", i, c)
				}
				if calls[fn.ID] {
					t.Fatalf("message %d: tool call id %s repeats (the API refuses it)", i, fn.ID)
				}
				calls[fn.ID] = true
			}
		case m.OfTool != nil:
			if !calls[m.OfTool.ToolCallID] || results[m.OfTool.ToolCallID] {
				t.Fatalf("message %d: tool result for %s before its call, or a second one", i, m.OfTool.ToolCallID)
			}
			results[m.OfTool.ToolCallID] = true
		default:
			t.Fatalf("message %d decodes to no known variant", i)
		}
	}
	if !sawUser {
		t.Fatal("the prompt is not a user message")
	}
}

func checkAnthropic(t *testing.T, out []byte, calls, results map[string]bool) {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(out, &body); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	body["model"] = json.RawMessage(`"claude-sonnet-4-5"`)
	body["max_tokens"] = json.RawMessage(`1024`)
	b, _ := json.Marshal(body)
	var p anthropic.MessageNewParams
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("anthropic.MessageNewParams rejects the list: %v\n%s", err, out)
	}
	if len(p.System) == 0 || !strings.Contains(p.System[0].Text, "careful") {
		t.Fatalf("system prompt not in system: %+v", p.System)
	}
	for i, m := range p.Messages {
		if m.Role != anthropic.MessageParamRoleUser && m.Role != anthropic.MessageParamRoleAssistant {
			t.Fatalf("message %d: role %q", i, m.Role)
		}
		for _, c := range m.Content {
			switch {
			case c.OfText != nil, c.OfThinking != nil, c.OfRedactedThinking != nil:
			case c.OfToolUse != nil:
				if m.Role != anthropic.MessageParamRoleAssistant || c.OfToolUse.ID == "" || c.OfToolUse.Name == "" || calls[c.OfToolUse.ID] {
					t.Fatalf("message %d: bad tool_use (or its id repeats, which the API refuses) %+v", i, c.OfToolUse)
				}
				calls[c.OfToolUse.ID] = true
			case c.OfToolResult != nil:
				if m.Role != anthropic.MessageParamRoleUser || !calls[c.OfToolResult.ToolUseID] || results[c.OfToolResult.ToolUseID] {
					t.Fatalf("message %d: tool_result for %s not after its call, or a second one", i, c.OfToolResult.ToolUseID)
				}
				results[c.OfToolResult.ToolUseID] = true
			default:
				t.Fatalf("message %d: a content block of no known type", i)
			}
		}
	}
}

// TestExportMessagesReusedCallID: a Crush session whose model named both
// turns' calls call_1 (testdata/golden/crush/rows_call_id_reused: the
// transcript keeps both calls, each with its result) exports both calls
// and both results, the second under call_1-2, and each SDK accepts the
// list (no id repeats).
func TestExportMessagesReusedCallID(t *testing.T) {
	storage := t.TempDir()
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--provider", "crush", "--system-prompt", "You are careful.",
		"--input", filepath.Join(clitest.Root, "testdata/golden/crush/rows_call_id_reused.jsonl"))
	for _, format := range []string{"openai", "anthropic"} {
		r := clitest.RunOK(t, clitest.Plain(), "--storage", storage, "export", "messages", "--format", format, "latest")
		if !strings.Contains(r.ErrOut, "call_1 as call_1-2") {
			t.Errorf("%s: the renamed call is not reported: %q", format, r.ErrOut)
		}
		calls, results := map[string]bool{}, map[string]bool{}
		if format == "openai" {
			checkOpenAI(t, []byte(r.Out), calls, results)
		} else {
			checkAnthropic(t, []byte(r.Out), calls, results)
		}
		want := map[string]bool{"call_1": true, "call_1-2": true}
		if !maps.Equal(calls, want) || !maps.Equal(results, want) {
			t.Errorf("%s: calls %v, results %v, want call_1 and call_1-2 each\n%s", format, calls, results, r.Out)
		}
		for _, out := range []string{`go.mod`, `M main.go`} {
			if !strings.Contains(r.Out, out) {
				t.Errorf("%s: result %q missing\n%s", format, out, r.Out)
			}
		}
	}
}

func TestExportMessagesRefusesAndWritesNothing(t *testing.T) {
	storage := t.TempDir()
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--provider", "codex", "--input", filepath.Join(clitest.Root, "testdata/golden/codex/exec_command_dangling.jsonl"))
	out := filepath.Join(t.TempDir(), "m.json")
	r := clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "messages", "--format", "openai", "-o", out, "latest")
	if r.Code != 1 || !strings.Contains(r.ErrOut, "cannot export messages") {
		t.Fatalf("%v", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused export wrote %s", out)
	}
	if r := clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "messages", "latest"); r.Code != 2 {
		t.Fatalf("no --format is a usage error: %v", r)
	}
}
