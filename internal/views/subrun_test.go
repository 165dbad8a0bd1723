package views

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// TestSubRunTotals checks that a sub-agent's run, which has no agent step
// (the provider's sub-agent messages are not in the step that started
// it), carries the usage of its messages and its tool calls, and that its
// parent shows them apart and together: in the tree, the view's header
// and the statistics.
func TestSubRunTotals(t *testing.T) {
	const root, child = viewstest.Root, viewstest.Child
	usage := func(in, out int64) *transcript.Usage {
		return &transcript.Usage{InputTokens: new(in), OutputTokens: new(out)}
	}
	assistant := func(u *transcript.Usage) *transcript.Event {
		ev := viewstest.Msg(transcript.MessageAssistant, "", transcript.TextBlock("looking"))
		ev.Message().Usage = u
		return ev
	}
	call := func(id string) *transcript.Event {
		return viewstest.Tool(transcript.ToolCall, "", &transcript.ToolPayload{Name: "Read", CallID: id, Kind: transcript.ToolRead,
			Input: json.RawMessage(`{}`)})
	}
	parent := func(agentUsage *transcript.Usage) *viewstest.Builder {
		b := viewstest.NewBuilder(root, "").Add(viewstest.Started("record claude")).
			Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent})).
			Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "agent.subagent", ChildRunID: child,
				Payload: &transcript.StepPayload{Name: "subagent", Kind: transcript.KindCallWorkflow}}).
			Add(&transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: "agent.subagent", ChildRunID: child,
				Payload: &transcript.StepPayload{Name: "subagent", Kind: transcript.KindCallWorkflow, Status: transcript.StatusOK}})
		b.Add(viewstest.AgentDone(t, "agent", &transcript.AgentResult{Provider: "claude", Status: transcript.StatusOK, Usage: agentUsage}))
		return b.Add(viewstest.Completed("record claude", transcript.StatusOK, ""))
	}
	sub := viewstest.NewBuilder(child, root).Add(viewstest.Started("subagent")).
		Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("explore"))).
		Add(assistant(usage(100, 2))).Add(call("c1")).Add(call("c2")).
		Add(assistant(usage(300, 5))).Add(call("c3")).
		Add(viewstest.Completed("subagent", transcript.StatusOK, ""))
	tests := []struct {
		name       string
		agentUsage *transcript.Usage
		own        string // the root's own usage in the view, "none" when it has none
		allIn      int64
	}{
		{"a sub-agent file imported on its own", nil, "none", 400},
		{"a session with its own usage", usage(1000, 20), "tokens uncached in 1000 / out 20", 1400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir, parent(tt.agentUsage))
			writeRun(t, dir, sub)
			n := loadTree(t, dir, root)
			c := n.Steps[0].Steps[0].Child
			if c == nil {
				t.Fatalf("child not linked: %+v", n.Steps[0])
			}
			eq(t, c.Tools, 3, "child tool calls")
			if c.Usage == nil || *c.Usage.InputTokens != 400 || *c.Usage.OutputTokens != 7 {
				t.Fatalf("child usage %s, want in 400 out 7 (its messages')", usageString(c.Usage))
			}
			if n.SubRuns == nil {
				t.Fatal("no sub-run totals")
			}
			eq(t, n.SubRuns.Runs, 1, "sub-runs")
			eq(t, n.SubRuns.Tools, 3, "sub-run tool calls")
			eq(t, *n.SubRuns.Usage.InputTokens, int64(400), "sub-run input")
			all := n.Totals()
			eq(t, all.Tools, 3, "tool calls in all")
			eq(t, *all.Usage.InputTokens, tt.allIn, "input in all")

			var buf bytes.Buffer
			if err := WriteView(&buf, n, ViewOptions{}); err != nil {
				t.Fatal(err)
			}
			contains(t, buf.String(), "| Tool calls | 0 (sub-runs 3, in all 3) |",
				"this run: "+tt.own+"; sub-runs (1): tokens uncached in 400 / out 7; in all: tokens uncached in ")

			st := NewStats()
			for _, r := range n.Runs() {
				st.Add(r.Source())
			}
			if st.SubRunUsage == nil || *st.SubRunUsage.InputTokens != 400 {
				t.Fatalf("stats sub_run_usage %s, want in 400", usageString(st.SubRunUsage))
			}
			eq(t, st.Tools["Read"], 3, "stats tools")
		})
	}
}

// TestStatedCostSubAgentsIncluded: beside a step's stated cost, the view
// says when it counts the sub-agents' too (Claude Code's process cost,
// StatedCostCountsSubRuns) and the step links a child run; a cost stated
// by another provider, or a step with no child run, says nothing more.
func TestStatedCostSubAgentsIncluded(t *testing.T) {
	const root, child = viewstest.Root, viewstest.Child
	tests := []struct {
		provider string
		linked   bool
		want     bool
	}{
		{"claude", true, true},
		{"claude", false, false},
		{"opencode", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			dir := t.TempDir()
			b := viewstest.NewBuilder(root, "").Add(viewstest.Started("record")).
				Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
			if tt.linked {
				b.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "agent.subagent", ChildRunID: child,
					Payload: &transcript.StepPayload{Name: "subagent", Kind: transcript.KindCallWorkflow}}).
					Add(&transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: "agent.subagent", ChildRunID: child,
						Payload: &transcript.StepPayload{Name: "subagent", Kind: transcript.KindCallWorkflow, Status: transcript.StatusOK}})
			}
			b.Add(viewstest.AgentDone(t, "agent", &transcript.AgentResult{Provider: tt.provider, Status: transcript.StatusOK, CostUSD: new(0.0190)}))
			writeRun(t, dir, b.Add(viewstest.Completed("record", transcript.StatusOK, "")))
			writeRun(t, dir, viewstest.NewBuilder(child, root).Add(viewstest.Started("subagent")).Add(viewstest.Completed("subagent", transcript.StatusOK, "")))
			var buf bytes.Buffer
			if err := WriteView(&buf, loadTree(t, dir, root), ViewOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(buf.Bytes(), []byte("$0.0190, its sub-agents' included")); got != tt.want || !bytes.Contains(buf.Bytes(), []byte("$0.0190")) {
				t.Errorf("sub-agents' note %v, want %v:\n%s", got, tt.want, buf.String())
			}
		})
	}
}
