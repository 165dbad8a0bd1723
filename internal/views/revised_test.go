package views

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// revisedTranscript is a run of two parts of an archived session whose
// agent changed tool events in place (package archive marks the new
// versions revised): call_1 read while its input streamed ("l"),
// finished in the next part ("ls") and answered there; call_2 failed,
// its result rewritten as passed; call_3 answered, then its input
// rewritten ("date -u").
func revisedTranscript(t *testing.T) []byte {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	revised := map[string]json.RawMessage{transcript.RevisedField: json.RawMessage("true")}
	var evs []*transcript.Event
	add := func(typ transcript.EventType, iter int, p transcript.Payload) {
		evs = append(evs, &transcript.Event{Type: typ, Path: "agent", Iteration: iter, Payload: p})
	}
	tool := func(typ transcript.EventType, iter int, id, cmd, status string, again bool) {
		p := &transcript.ToolPayload{Name: "bash", CallID: id, Command: cmd, Status: status, Fidelity: transcript.FidelityAgentEmitted}
		if typ == transcript.ToolResult {
			p.Output, p.HasOutput = "out of "+cmd, true
		}
		if again {
			p.Extra = revised
		}
		add(typ, iter, p)
	}
	step := func(typ transcript.EventType, iter int) {
		p := &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}
		if typ == transcript.StepCompleted {
			p.Status = transcript.StatusOK
		}
		add(typ, iter, p)
	}
	evs = append(evs, &transcript.Event{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}})
	step(transcript.StepStarted, 0)
	tool(transcript.ToolCall, 0, "call_1", "l", "", false)
	tool(transcript.ToolCall, 0, "call_3", "date", "", false)
	tool(transcript.ToolResult, 0, "call_3", "date", transcript.StatusOK, false)
	step(transcript.StepCompleted, 0)
	step(transcript.StepStarted, 1)
	tool(transcript.ToolCall, 1, "call_1", "ls", "", true)
	tool(transcript.ToolResult, 1, "call_1", "ls", transcript.StatusOK, false)
	tool(transcript.ToolCall, 1, "call_2", "pwd", "", false)
	tool(transcript.ToolResult, 1, "call_2", "pwd", transcript.StatusError, false)
	tool(transcript.ToolResult, 1, "call_2", "pwd", transcript.StatusOK, true)
	tool(transcript.ToolCall, 1, "call_3", "date -u", "", true)
	step(transcript.StepCompleted, 1)
	evs = append(evs, &transcript.Event{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Status: transcript.StatusOK}})
	var buf bytes.Buffer
	for i, ev := range evs {
		ev.Seq, ev.RunID, ev.Timestamp = uint64(i+1), "11111111-1111-4111-8111-111111111111", t0.Add(time.Duration(i)*time.Second)
		line, err := transcript.AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	return buf.Bytes()
}

// TestReadersRevisedCall: every reader takes a revised call or result
// for a new version of the earlier one (transcript.Pairer), not one
// more: three calls, none dangling, each with its latest outcome and
// input, in the stats, the tree, the tool ledger, the view and the
// validator's report.
func TestReadersRevisedCall(t *testing.T) {
	b := revisedTranscript(t)
	run, err := ReadRun(bytes.NewReader(b), "run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("stats", func(t *testing.T) {
		c := CountRun(run)
		if c.Tools["bash"] != 3 || c.Dangling != 0 || !maps.Equal(c.ToolResults, map[string]int{transcript.StatusOK: 3}) ||
			c.Fidelity[string(transcript.FidelityAgentEmitted)] != 3 {
			t.Errorf("tools %v, dangling %d, results %v, fidelity %v; want 3 bash calls, none dangling, 3 ok", c.Tools, c.Dangling, c.ToolResults, c.Fidelity)
		}
	})
	n := BuildRun(run)
	t.Run("tree", func(t *testing.T) {
		tools := 0
		for _, s := range n.Steps {
			tools += s.Tools
		}
		if n.Tools != 3 || n.Dangling != 0 || tools != 3 {
			t.Errorf("tree: %d tools (steps %d), %d dangling; want 3, 0", n.Tools, tools, n.Dangling)
		}
	})
	t.Run("ledger", func(t *testing.T) {
		got := map[string]string{}
		for _, r := range Ledger(n) {
			if _, dup := got[r.CallID]; dup || r.Orphan || r.Dangling {
				t.Errorf("ledger row %+v: a second row of its call, an orphan or dangling", r)
			}
			got[r.CallID] = r.Status + " " + r.Command
		}
		want := map[string]string{"call_1": "ok ls", "call_2": "ok pwd", "call_3": "ok date -u"}
		if !maps.Equal(got, want) {
			t.Errorf("ledger %v, want %v", got, want)
		}
	})
	t.Run("view", func(t *testing.T) {
		var out bytes.Buffer
		if err := WriteView(&out, n, ViewOptions{Format: FormatText}); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, c := range []struct {
			text string
			n    int
		}{{"out of ls", 1}, {"out of pwd", 1}, {"out of date", 1}, {"$ ls", 1}, {"$ l\n", 0}, {"$ date -u", 1}} {
			if got := strings.Count(s, c.text); got != c.n {
				t.Errorf("the view shows %q %d times, want %d:\n%s", c.text, got, c.n, s)
			}
		}
		if strings.Contains(s, string(transcript.StatusError)) {
			t.Errorf("the view shows the replaced failure:\n%s", s)
		}
	})
	t.Run("validate", func(t *testing.T) {
		rep := transcript.Validate(bytes.NewReader(b), transcript.ValidateOptions{})
		if len(rep.Errors) != 0 || len(rep.Dangling) != 0 {
			t.Errorf("errors %v, dangling %v; want none", rep.Errors, rep.Dangling)
		}
		for _, w := range rep.Warnings {
			if strings.Contains(w.Code, "tool") {
				t.Errorf("warning %v", w)
			}
		}
	})
}
