package export

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/twasm/twasm/transcript"
)

// reusedRun writes a run whose agent reuses call ids: call_1 once
// answered (ls fails, pwd passes, date gets no result), and call_2 while
// its first call is open (a passes, b fails: the n-th result answers the
// n-th call). Each call starts at its own second, so want lists the
// outcome of each call by its second.
func reusedRun(t *testing.T) (run Run, want map[int]string) {
	t.Helper()
	tool := func(typ transcript.EventType, s int, id, cmd, status string) *transcript.Event {
		return bashEvent(typ, s, 0, id, cmd, status, false)
	}
	return agentRun(t, 12,
		agentStepEvent(transcript.StepStarted, 1, 0),
		tool(transcript.ToolCall, 2, "call_1", "ls", ""), tool(transcript.ToolResult, 3, "call_1", "", transcript.StatusError),
		tool(transcript.ToolCall, 4, "call_1", "pwd", ""), tool(transcript.ToolResult, 5, "call_1", "", transcript.StatusOK),
		tool(transcript.ToolCall, 6, "call_2", "a", ""), tool(transcript.ToolCall, 7, "call_2", "b", ""),
		tool(transcript.ToolResult, 8, "call_2", "", transcript.StatusOK), tool(transcript.ToolResult, 9, "call_2", "", transcript.StatusError),
		tool(transcript.ToolCall, 10, "call_1", "date", ""),
		agentStepEvent(transcript.StepCompleted, 11, 0),
	), map[int]string{2: "error", 4: "ok", 6: "ok", 7: "error", 10: "dangling"}
}

// TestDirReusedCallID: the run folder's tool log has one line per call,
// each with the outcome of its own result (transcript.Pairer's rule, as
// `twasm tools` pairs them), none for a result taken for a call of its
// own.
func TestDirReusedCallID(t *testing.T) {
	run, want := reusedRun(t)
	out := t.TempDir()
	if _, err := ExportDir(context.Background(), out, run); err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, l := range readLines(t, filepath.Join(out, "runs", rootID, "logs", "tools.jsonl")) {
		started, err := time.Parse(time.RFC3339, l["started"].(string))
		if err != nil {
			t.Fatal(err)
		}
		s := int(started.Sub(t0) / time.Second)
		if _, dup := got[s]; dup {
			t.Fatalf("two tool lines for the call at %d s", s)
		}
		got[s] = l["status"].(string)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("tool lines by start: %v, want %v", got, want)
	}
}

// TestOTLPReusedCallID: each call of a reused id is a span of its own,
// ended by its own result (transcript.Pairer's rule), the unanswered one
// marked dangling, and no result makes a span of its own.
func TestOTLPReusedCallID(t *testing.T) {
	run, want := reusedRun(t)
	got := map[int]string{}
	var tools tracetest.SpanStubs
	for _, s := range exportSpans(t, run, OTLPOptions{}) {
		if strings.HasPrefix(s.Name, "execute_tool") {
			tools = append(tools, s)
		}
	}
	for _, s := range tools {
		status, _ := attr(s, "twasm.status")
		if d, _ := attr(s, "twasm.tool.dangling"); d == "true" {
			status = "dangling"
		}
		got[int(s.StartTime.Sub(t0)/time.Second)] = status
	}
	if len(tools) != len(want) || !maps.Equal(got, want) {
		t.Fatalf("%d tool spans, outcomes by start %v, want %v", len(tools), got, want)
	}
}
