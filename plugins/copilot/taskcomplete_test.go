//go:build !wasip1

package copilot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestTaskComplete: autopilot's session.task_complete with success false
// is a completion the CLI did not accept (readers of events.jsonl: "invalid
// calls explicitly report success:false"; only success true ends
// autopilot), and autopilot goes on working. It is a warning, and the
// session's error only when no accepted completion follows it. Before, any
// success false was the session's error, even when the task completed
// right after it.
func TestTaskComplete(t *testing.T) {
	start := sessionStart("1.0.83")
	user := `{"type":"user.message","data":{"content":"Create loop1.txt"},"id":"e1","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"}`
	answer := `{"type":"assistant.message","data":{"messageId":"m1","content":"Creating it.","toolRequests":[]},"id":"e2","timestamp":"2026-11-01T10:00:02.000Z","parentId":"e1"}`
	done := func(id string, success bool, summary string) string {
		s := "false"
		if success {
			s = "true"
		}
		return `{"type":"session.task_complete","data":{"summary":"` + summary + `","success":` + s + `},"id":"` + id + `","timestamp":"2026-11-01T10:00:03.000Z","parentId":"e2"}`
	}
	tests := []struct {
		name     string
		lines    []string
		errors   int
		warnings []string
		status   string
	}{
		{"accepted", []string{start, user, answer, done("e3", true, "Created loop1.txt.")}, 0, nil, "ok"},
		{"refused, then accepted", []string{start, user, answer, done("e3", false, "Could not verify loop1.txt."), done("e4", true, "Created loop1.txt.")},
			0, []string{"copilot task not completed: Could not verify loop1.txt. (autopilot continues)"}, "ok"},
		{"refused, the stream ends", []string{start, user, answer, done("e3", false, "Could not verify loop1.txt.")},
			1, []string{"copilot task not completed: Could not verify loop1.txt. (autopilot continues)"}, "error"},
		{"accepted, then refused", []string{start, user, answer, done("e3", true, "Created loop1.txt."), done("e4", false, "")},
			1, []string{"copilot task not completed: success false (autopilot continues)"}, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), copilot.Plugin, "copilot", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Step.Status != tt.status || len(r.Step.Errors) != tt.errors || strings.Join(r.Step.Warnings, "|") != strings.Join(tt.warnings, "|") {
				t.Errorf("status %q, errors %+v, warnings %q; want %q, %d errors, warnings %q",
					r.Step.Status, r.Step.Errors, r.Step.Warnings, tt.status, tt.errors, tt.warnings)
			}
		})
	}
}
