//go:build !wasip1

package copilot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestSecondSession: a log holding two sessions one after the other (a
// recorder that appended a second run's events.jsonl to the first, as a
// real 1.0.77 capture does with three) is read as one step, the first
// session's, and says so in a warning naming both ids: before, the second
// session.start was declared ignored and the merge was silent. A
// session.resume of the same session, or a start restating it, says
// nothing.
func TestSecondSession(t *testing.T) {
	ev := func(id, typ, data string) string {
		return `{"type":"` + typ + `","data":` + data + `,"id":"` + id + `","timestamp":"2026-08-03T10:31:52.302Z","parentId":null}`
	}
	start := func(id, sid string) string {
		return ev(id, "session.start", `{"sessionId":"`+sid+`","version":1,"producer":"copilot-agent","copilotVersion":"1.0.77"}`)
	}
	turn := func(n string) []string {
		return []string{
			ev("u"+n, "user.message", `{"content":"Reply with exactly the word: ok"}`),
			ev("a"+n, "assistant.message", `{"messageId":"m`+n+`","content":"ok","toolRequests":[]}`),
		}
	}
	join := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	tests := []struct {
		name     string
		lines    []string
		warnings []string
	}{
		{"one session", join([]string{start("e0", "s1")}, turn("1")), nil},
		{"the same session started again", join([]string{start("e0", "s1")}, turn("1"), []string{start("e3", "s1")}, turn("2")), nil},
		{"a resume of the same session", join([]string{start("e0", "s1")}, turn("1"),
			[]string{ev("e3", "session.resume", `{"sessionId":"s1","copilotVersion":"1.0.77"}`)}, turn("2")), nil},
		{"a second session", join([]string{start("e0", "s1")}, turn("1"), []string{start("e3", "s2")}, turn("2")),
			[]string{"copilot log holds a second session, s2: its events are read as part of session s1"}},
		{"three sessions", join([]string{start("e0", "s1")}, turn("1"), []string{start("e3", "s2")}, turn("2"), []string{start("e6", "s3")}, turn("3")),
			[]string{"copilot log holds a second session, s2: its events are read as part of session s1",
				"copilot log holds a second session, s3: its events are read as part of session s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), copilot.Plugin, "copilot", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(r.Step.Warnings, "|") != strings.Join(tt.warnings, "|") {
				t.Errorf("warnings %q, want %q", r.Step.Warnings, tt.warnings)
			}
			if r.Step.SessionID != "s1" {
				t.Errorf("session id %q, want s1", r.Step.SessionID)
			}
			if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
			}
		})
	}
}
