//go:build !wasip1

package kimi_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/transcript"
)

// TestContextFile: the Kimi CLI before 0.59 kept only the model's
// context, sessions/<work dir hash>/<uuid4>.jsonl (MoonshotAI/kimi-cli
// 0.58: soul/context.py writes each kosong Message as a line and the
// markers {"role": "_checkpoint", "id"} and {"role": "_usage",
// "token_count"}; soul/message.py's tool_result_to_message writes a
// failed call's result as "<system>ERROR: <message></system>" and its
// output; kimisoul.py's D-Mail checkpoints add "<system>CHECKPOINT
// N</system>" in the user's role; compaction.py leaves one assistant
// message, "<system>Previous context has been compacted. ...</system>"
// and the summary). Each line is accounted for: prompts, injected text,
// answers, calls with their results (an error its message, a rejected
// call denied), the markers ignored (token_count is the context's size,
// no usage), the compaction a warning and injected context.
func TestContextFile(t *testing.T) {
	call := `{"role":"assistant","content":[{"type":"text","text":"Running it."}],"tool_calls":[{"type":"function","id":"Shell:0","function":{"name":"Shell","arguments":"{\"command\": \"make\"}"}}]}`
	tests := []struct {
		name  string
		lines []string
		want  []string // role/origin: text of each message, "status exit" of Shell:0's result
		warn  string
	}{
		{"a prompt, an answer, the markers",
			[]string{`{"role": "_checkpoint", "id": 0}`, `{"role":"user","content":"Build it."}`, `{"role": "_checkpoint", "id": 1}`, `{"role":"assistant","content":"Built."}`, `{"role": "_usage", "token_count": 5120}`},
			[]string{"user/prompt: Build it.", "assistant: Built."}, ""},
		{"a failed command: an error with its exit code",
			[]string{`{"role":"user","content":[{"type":"text","text":"Build it."}]}`, call,
				`{"role":"tool","content":[{"type":"text","text":"<system>ERROR: Command failed with exit code: 2.</system>"},{"type":"text","text":"make: *** [all] Error 2"}],"tool_call_id":"Shell:0"}`},
			[]string{"user/prompt: Build it.", "assistant: Running it.", "error 2"}, ""},
		{"a rejected call: denied",
			[]string{`{"role":"user","content":"Build it."}`, call,
				`{"role":"tool","content":[{"type":"text","text":"<system>ERROR: The tool call is rejected by the user. Please follow the new instructions from the user.</system>"}],"tool_call_id":"Shell:0"}`},
			[]string{"user/prompt: Build it.", "assistant: Running it.", "denied"}, ""},
		{"a D-Mail checkpoint in the user's role: injected",
			[]string{`{"role":"user","content":"Build it."}`, `{"role":"user","content":[{"type":"text","text":"<system>CHECKPOINT 1</system>"}]}`, `{"role":"assistant","content":"Built."}`},
			[]string{"user/prompt: Build it.", "user/injected_context: <system>CHECKPOINT 1</system>", "assistant: Built."}, ""},
		{"a compacted context: injected summary, a warning",
			[]string{`{"role": "_checkpoint", "id": 0}`, `{"role":"assistant","content":[{"type":"text","text":"<system>Previous context has been compacted. Here is the compaction output:</system>"},{"type":"text","text":"The user asked for a build; it passed."}]}`, `{"role":"user","content":"Now the docs."}`},
			[]string{"user/injected_context: <system>Previous context has been compacted. Here is the compaction output:</system>", "user/injected_context: The user asked for a build; it passed.", "user/prompt: Now the docs."}, "kimi: the context was compacted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, kimi.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "kimi"})
			var got []string
			for _, it := range o.Sink.Items {
				if it.Event == nil {
					continue
				}
				if m := it.Event.Message(); m != nil {
					for _, b := range m.Blocks {
						if b.Type != transcript.BlockText {
							continue
						}
						if m.Role == "user" {
							got = append(got, "user/"+string(b.Origin)+": "+b.Text)
						} else {
							got = append(got, "assistant: "+b.Text)
						}
					}
				}
				if it.Event.Type == transcript.ToolResult {
					tp := it.Event.Tool()
					st := tp.Status
					if tp.ExitCode != nil {
						st += " " + string(rune('0'+*tp.ExitCode))
					}
					got = append(got, st)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
			if o.Result.Format != "context" || len(o.Result.Unmapped) != 0 || o.Result.Usage != nil {
				t.Errorf("format %q, unmapped %v, usage %+v: want context, none, none", o.Result.Format, o.Result.Unmapped, o.Result.Usage)
			}
			if w := strings.Join(o.Result.Warnings, "|"); !strings.Contains(w, tt.warn) {
				t.Errorf("warnings %q, want %q", w, tt.warn)
			}
		})
	}
}
