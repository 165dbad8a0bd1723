package viewstest

import (
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// ProjectRun is a session of the ProjectStorage: its run id, and the cwd
// and project its agent step's result states.
type ProjectRun struct {
	ID, Cwd, Project string
	// Child is the run id of a sub-agent's run whose result states no
	// place ("" for none); Output the session's output tokens (its
	// sub-agent's 1000 more).
	Child  string
	Output int64
}

// ProjectRuns are the sessions ProjectStorage writes: a repository root
// and a directory below it, one named like it (/src/apple), a session
// with a root of its own, one with a sub-agent, and one with no place.
func ProjectRuns() []ProjectRun {
	return []ProjectRun{
		{ID: RunID(101), Cwd: "/src/app/web", Project: "/src/app", Output: 1},
		{ID: RunID(102), Cwd: "/src/app/web", Output: 10},
		{ID: RunID(103), Cwd: "/src/apple", Output: 100},
		{ID: RunID(104), Cwd: "/src/app", Child: RunID(105), Output: 10000},
		{ID: RunID(106), Output: 100000},
	}
}

// ProjectStorage writes the ProjectRuns as Claude sessions under root, a
// day apart from start, each with the prompt "fix the flaky test" and
// one assistant message of their output tokens (a sub-agent's: 1000).
func ProjectStorage(t testing.TB, root string, start time.Time) []ProjectRun {
	t.Helper()
	runs := ProjectRuns()
	for i, r := range runs {
		at := start.Add(time.Duration(i) * 24 * time.Hour)
		b := NewBuilder(r.ID, "")
		add := func(b *Builder, ev *transcript.Event) {
			ev.Timestamp = at
			b.Add(ev)
		}
		add(b, Started("claude session"))
		add(b, Step(transcript.StepStarted, "session", 0, &transcript.StepPayload{Name: "session", Kind: transcript.KindAgent}))
		add(b, Msg(transcript.MessageUser, "session", transcript.TextBlock("fix the flaky test")))
		u := &transcript.Usage{OutputTokens: new(r.Output)}
		add(b, &transcript.Event{Type: transcript.MessageAssistant, Path: "session", Payload: &transcript.MessagePayload{Role: "assistant",
			Model: "claude-sonnet-4-5-20250929", Usage: u, Blocks: []transcript.Block{transcript.TextBlock("the flaky test passes now")}}})
		add(b, AgentDone(t, "session", &transcript.AgentResult{Provider: "claude", Model: "claude-sonnet-4-5-20250929", Status: transcript.StatusOK,
			Cwd: r.Cwd, Project: r.Project, Usage: u}))
		if r.Child != "" {
			add(b, &transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "task", ChildRunID: r.Child,
				Payload: &transcript.StepPayload{Name: "task", Kind: transcript.KindCallWorkflow}})
			add(b, &transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: "task", ChildRunID: r.Child,
				Payload: &transcript.StepPayload{Name: "task", Kind: transcript.KindCallWorkflow, Status: transcript.StatusOK}})
			c := NewBuilder(r.Child, r.ID)
			add(c, Started("sub-agent"))
			add(c, Msg(transcript.MessageUser, "task", transcript.TextBlock("find the flaky test")))
			add(c, &transcript.Event{Type: transcript.MessageAssistant, Path: "task", Payload: &transcript.MessagePayload{Role: "assistant",
				Model: "claude-haiku-4-5-20251001", Usage: &transcript.Usage{OutputTokens: new(int64(1000))},
				Blocks: []transcript.Block{transcript.TextBlock("the flaky test is in web")}}})
			add(c, Completed("sub-agent", transcript.StatusOK, ""))
			write(t, root, c)
		}
		add(b, Completed("claude session", transcript.StatusOK, ""))
		write(t, root, b)
	}
	return runs
}
