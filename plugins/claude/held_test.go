//go:build !wasip1

package claude

import (
	"slices"
	"strings"
	"testing"
)

// TestResultBeforeCall: Claude Code 2.1.9x can append a tool's result
// record before the assistant record that holds its call (real logs:
// the result's parentUuid names the assistant record after it, whose
// timestamp is earlier). The result is the call's, with its name, input
// and kind, and no warning says the call is missing; a result whose call
// never comes (a log that starts mid-session) still gets a synthesized
// call, at the first record that is not the assistant's or at the end.
func TestResultBeforeCall(t *testing.T) {
	const sess = `"sessionId":"s","version":"2.1.98","cwd":"/w","isSidechain":false,"userType":"external"`
	prompt := `{"parentUuid":null,` + sess + `,"type":"user","message":{"role":"user","content":"fix it"},"uuid":"u1","timestamp":"2026-04-09T20:59:50.000Z"}`
	think := `{"parentUuid":"u1",` + sess + `,"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"thinking","thinking":"","signature":"x"}],"usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a1","timestamp":"2026-04-09T20:59:56.479Z"}`
	text := `{"parentUuid":"a1",` + sess + `,"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"Editing."}],"usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a2","timestamp":"2026-04-09T20:59:57.000Z"}`
	edit := `{"parentUuid":"a2",` + sess + `,"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"toolu_E","name":"Edit","input":{"file_path":"/w/a.go","old_string":"a","new_string":"b"}}],"usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a3","timestamp":"2026-04-09T20:59:58.464Z"}`
	editResult := `{"parentUuid":"a3",` + sess + `,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_E","type":"tool_result","content":"The file /w/a.go has been updated successfully."}]},"uuid":"r1","timestamp":"2026-04-09T20:59:58.489Z","toolUseResult":{"filePath":"/w/a.go","oldString":"a","newString":"b","structuredPatch":[]}}`
	bash := `{"parentUuid":"a2",` + sess + `,"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"toolu_B","name":"Bash","input":{"command":"go test"}}],"usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a3","timestamp":"2026-04-09T20:59:58.464Z"}`
	bashResult := `{"parentUuid":"a3",` + sess + `,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_B","type":"tool_result","content":"Exit code 1\nFAIL","is_error":true}]},"uuid":"r1","timestamp":"2026-04-09T20:59:58.489Z","toolUseResult":"Error: Exit code 1\nFAIL"}`
	answer := `{"parentUuid":"r1",` + sess + `,"type":"assistant","message":{"id":"msg_2","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":7,"output_tokens":2}},"uuid":"a4","timestamp":"2026-04-09T21:00:03.000Z"}`
	orphan := `{"parentUuid":"gone",` + sess + `,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_O","type":"tool_result","content":"Command running in background with ID: b1"}]},"uuid":"r0","timestamp":"2026-04-09T20:59:40.000Z","toolUseResult":{"stdout":"","stderr":"","interrupted":false,"backgroundTaskId":"b1"}}`
	queue := `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-04-09T20:59:41.000Z","sessionId":"s","content":"next"}`
	type tool struct{ name, input, status, kind string }
	tests := []struct {
		name     string
		lines    []string
		tools    []tool
		warnings int // warnings saying a call was synthesized
	}{
		{"result right before its call", []string{prompt, think, editResult, edit, answer},
			[]tool{{"Edit", `{"file_path":"/w/a.go","old_string":"a","new_string":"b"}`, "ok", "edit"}}, 0},
		{"result before the message's other records and its call", []string{prompt, think, editResult, text, edit, answer},
			[]tool{{"Edit", `{"file_path":"/w/a.go","old_string":"a","new_string":"b"}`, "ok", "edit"}}, 0},
		{"a failed command's result before its call", []string{prompt, think, bashResult, bash, answer},
			[]tool{{"Bash", `{"command":"go test"}`, "error", "execute"}}, 0},
		{"in order, as before", []string{prompt, think, edit, editResult, answer},
			[]tool{{"Edit", `{"file_path":"/w/a.go","old_string":"a","new_string":"b"}`, "ok", "edit"}}, 0},
		{"a call that never comes: synthesized at the next record", []string{orphan, queue, prompt, think, text, answer},
			[]tool{{"execute", `{}`, "ok", "execute"}}, 1},
		{"a call that never comes: synthesized at the end", []string{prompt, think, text, orphan},
			[]tool{{"execute", `{}`, "ok", "execute"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, strings.Join(tt.lines, "\n")+"\n")
			calls, results := out.Tools()
			var got []tool
			for i, c := range calls {
				tl := tool{name: c.Name, input: string(c.Input), kind: string(c.Kind)}
				if i < len(results) && results[i].CallID == c.CallID {
					tl.status = results[i].Status
				}
				got = append(got, tl)
			}
			if !slices.Equal(got, tt.tools) || len(results) != len(tt.tools) {
				t.Errorf("tools %q (%d results), want %q", got, len(results), tt.tools)
			}
			synth := 0
			for _, w := range out.Result.Warnings {
				if strings.Contains(w, "has no tool call in the input") {
					synth++
				}
			}
			if synth != tt.warnings {
				t.Errorf("warnings %q, want %d saying a call was synthesized", out.Result.Warnings, tt.warnings)
			}
			if len(out.Result.Unmapped) != 0 || len(out.Result.Dangling) != 0 {
				t.Errorf("unmapped %v, dangling %v; want none", out.Result.Unmapped, out.Result.Dangling)
			}
		})
	}
}
