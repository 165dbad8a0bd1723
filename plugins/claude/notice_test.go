//go:build !wasip1

package claude

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTaskNotice: in a session log, the end of a background task (an
// agent launched with run_in_background, a background shell) reaches
// the model as a <task-notification> user record (or a queued
// command), injected context; Claude Code 2.1.156 writes one with
// <status>killed</status> when the agent was stopped (Irrlicht's
// background-subagent recording). A task that did not complete is a
// warning of the step, naming the task and its summary; a completed one
// says nothing.
func TestTaskNotice(t *testing.T) {
	const sess = `"sessionId":"s","version":"2.1.156","cwd":"/w","isSidechain":false,"userType":"external"`
	notice := func(status, summary string) string {
		text := "<task-notification>\n<task-id>aecb65d9a054e5ed9</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n<output-file>/tmp/t/aecb65d9a054e5ed9.output</output-file>\n<status>" + status + "</status>\n<summary>" + summary + "</summary>\n<result>partial</result>\n</task-notification>"
		return `{"parentUuid":"a1",` + sess + `,"type":"user","message":{"role":"user","content":` + strconv.Quote(text) + `},"uuid":"n1","timestamp":"2026-05-29T17:50:00.000Z"}`
	}
	queued := func(status string) string {
		text := "<task-notification>\n<task-id>b2</task-id>\n<status>" + status + "</status>\n<summary>Background command \"npm test\" failed with exit code 1</summary>\n</task-notification>"
		return `{"parentUuid":"a1",` + sess + `,"type":"attachment","attachment":{"type":"queued_command","prompt":` + strconv.Quote(text) + `,"commandMode":"task-notification"},"uuid":"q1","timestamp":"2026-05-29T17:50:01.000Z"}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"an agent killed", []string{notice("killed", `Agent "Find session structs" was stopped`)},
			[]string{`claude: background task aecb65d9a054e5ed9 ended killed: Agent "Find session structs" was stopped`}},
		{"an agent completed", []string{notice("completed", `Agent "Find session structs" completed`)}, nil},
		{"a queued notice of a shell that failed", []string{queued("failed")},
			[]string{`claude: background task b2 ended failed: Background command "npm test" failed with exit code 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, strings.Join(tt.lines, "\n")+"\n")
			if !slices.Equal(out.Result.Warnings, tt.want) {
				t.Errorf("warnings %q, want %q", out.Result.Warnings, tt.want)
			}
			if len(out.Result.Errors) != 0 {
				t.Errorf("errors %v, want none: the notice is not the provider's error", out.Result.Errors)
			}
		})
	}
}
