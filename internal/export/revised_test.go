package export

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// revisedRun writes a run of two parts of an archived session whose
// agent changed two tool events in place (package archive marks the new
// versions revised): call_1 was read while its input still streamed
// ("l"), and its finished version ("ls") comes in the next part with its
// result; call_2 failed, and its result was later rewritten as passed.
// want is the outcome of each call by the second it started.
func revisedRun(t *testing.T) (run Run, want map[int]string) {
	t.Helper()
	call, result, started, completed := transcript.ToolCall, transcript.ToolResult, transcript.StepStarted, transcript.StepCompleted
	return agentRun(t, 11,
		agentStepEvent(started, 1, 0),
		bashEvent(call, 2, 0, "call_1", "l", "", false),
		agentStepEvent(completed, 3, 0),
		agentStepEvent(started, 4, 1),
		bashEvent(call, 5, 1, "call_1", "ls", "", true),
		bashEvent(result, 6, 1, "call_1", "", transcript.StatusOK, false),
		bashEvent(call, 7, 1, "call_2", "pwd", "", false),
		bashEvent(result, 8, 1, "call_2", "", transcript.StatusError, false),
		bashEvent(result, 9, 1, "call_2", "", transcript.StatusOK, true),
		agentStepEvent(completed, 10, 1),
	), map[int]string{2: "ok", 7: "ok"}
}

// TestExportsRevised: every export counts a revised call once and keeps
// the latest outcome of a revised result: the run folder's tool log has
// one line per call (the latest input, the latest outcome, no error left
// of the first), OTLP one span per call, the HTML page one slot per call,
// the message list one call per call with its latest result.
func TestExportsRevised(t *testing.T) {
	ctx := context.Background()
	t.Run("dir", func(t *testing.T) {
		run, want := revisedRun(t)
		out := t.TempDir()
		if _, err := ExportDir(ctx, out, run); err != nil {
			t.Fatal(err)
		}
		got, commands := map[int]string{}, map[int]string{}
		for _, l := range readLines(t, filepath.Join(out, "runs", rootID, "logs", "tools.jsonl")) {
			started, err := time.Parse(time.RFC3339, l["started"].(string))
			if err != nil {
				t.Fatal(err)
			}
			s := int(started.Sub(t0) / time.Second)
			if _, dup := got[s]; dup {
				t.Fatalf("two tool lines for the call at %d s", s)
			}
			got[s], _ = l["status"].(string)
			commands[s], _ = l["command"].(string)
		}
		if !maps.Equal(got, want) || commands[2] != "ls" {
			t.Errorf("tool lines by start: %v (commands %v), want %v, call_1's command ls", got, commands, want)
		}
		for _, l := range readLines(t, filepath.Join(out, "runs", rootID, "logs", "errors.jsonl")) {
			t.Errorf("errors.jsonl: %v, want none (the failure was revised to ok, the call answered)", l)
		}
	})
	t.Run("otlp", func(t *testing.T) {
		run, want := revisedRun(t)
		got := map[int]string{}
		n := 0
		for _, s := range exportSpans(t, run, OTLPOptions{Content: true}) {
			if !strings.HasPrefix(s.Name, "execute_tool") {
				continue
			}
			n++
			status, _ := attr(s, "twasm.status")
			if d, _ := attr(s, "twasm.tool.dangling"); d == "true" {
				status = "dangling"
			}
			got[int(s.StartTime.Sub(t0)/time.Second)] = status
			if cmd, _ := attr(s, "twasm.tool.command"); s.StartTime.Equal(at(2)) && cmd != "ls" {
				t.Errorf("call_1's span: command %q, want the latest, ls", cmd)
			}
		}
		if n != len(want) || !maps.Equal(got, want) {
			t.Errorf("%d tool spans, outcomes by start %v, want %v", n, got, want)
		}
	})
	t.Run("html", func(t *testing.T) {
		run, _ := revisedRun(t)
		var buf bytes.Buffer
		if err := ExportHTML(ctx, &buf, []Run{run}, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		if n := strings.Count(page, `data-slot="`); n != 2 {
			t.Errorf("%d call slots, want 2", n)
		}
		for _, s := range []string{"a later version of this call follows", "replaced by a later version"} {
			if !strings.Contains(page, s) {
				t.Errorf("the page does not say %q", s)
			}
		}
	})
	t.Run("messages", func(t *testing.T) {
		run, _ := revisedRun(t)
		var buf bytes.Buffer
		rep, err := ExportMessages(ctx, &buf, run, MessagesOptions{Format: FormatAnthropic})
		if err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if n := strings.Count(out, `"type":"tool_use"`); n != 2 || len(rep.Renamed) != 0 {
			t.Errorf("%d tool_use, renamed %v, want 2, none: %s", n, rep.Renamed, out)
		}
		if n := strings.Count(out, `"type":"tool_result"`); n != 2 || strings.Contains(out, `"is_error"`) {
			t.Errorf("%d tool_result (want 2), an error kept (want the latest outcome, ok): %s", n, out)
		}
		if !strings.Contains(out, `"command":"ls"`) {
			t.Errorf("call_1 not written with its latest input: %s", out)
		}
	})
}
