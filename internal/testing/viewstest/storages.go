package viewstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// Storage is a storage layout for tests that read the same runs two ways
// (the listing and the statistics from the transcripts, and from the
// index) and compare.
type Storage struct {
	Name  string
	Write func(t testing.TB, root string)
}

// RunID returns the canonical run id number n of a layout.
func RunID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n) }

func write(t testing.TB, root string, b *Builder) {
	t.Helper()
	dir := filepath.Join(root, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, b.RunID+".jsonl"), b.Bytes(t))
}

// caller is a run whose steps call the child runs given (call_workflow),
// each step with an agent result of provider and cost.
func caller(t testing.TB, id, parent, name string, start time.Time, cost float64, children ...string) *Builder {
	b := NewBuilder(id, parent)
	ev := Started(name)
	ev.Timestamp = start
	b.Add(ev)
	for i, c := range children {
		path := fmt.Sprintf("call%d", i)
		b.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: path, ChildRunID: c, Timestamp: start,
			Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow}})
		b.Add(&transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: path, ChildRunID: c, Timestamp: start,
			Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow, Status: transcript.StatusOK}})
	}
	b.Add(Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	b.Add(Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: "Bash", CallID: id + "-c", Kind: transcript.ToolExecute, Command: "true"}))
	b.Add(AgentDone(t, "agent", &transcript.AgentResult{Provider: []string{"claude", "codex", "gemini"}[len(name)%3], Status: transcript.StatusOK,
		CostUSD: new(cost), Usage: &transcript.Usage{OutputTokens: new(int64(len(name)))}}))
	return b
}

// archivedRun is a synced agent session: run.started names its source,
// one agent step per part with the statuses given, no run.completed
// unless ended.
func archivedRun(t testing.TB, id string, start time.Time, ended bool, statuses ...string) *Builder {
	t.Helper()
	b := NewBuilder(id, "")
	ev := Started("claude session " + id[:8])
	ev.Step().Extra = map[string]json.RawMessage{"source": json.RawMessage(`{"provider":"claude","path":"/home/me/.claude/projects/p/s.jsonl","head_sha256":"00"}`)}
	ev.Timestamp = start
	b.Add(ev)
	for i, st := range statuses {
		b.Add(Step(transcript.StepStarted, "agent", i, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
		b.Add(Msg(transcript.MessageUser, "agent", transcript.TextBlock(fmt.Sprintf("prompt %d", i))))
		raw, _ := json.Marshal(&transcript.AgentResult{Provider: "claude", Status: st, CostUSD: new(0.1 * float64(i+1))})
		// The step records the agent's status, as capture writes it.
		b.Add(Step(transcript.StepCompleted, "agent", i, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: st, Result: raw}))
	}
	if ended {
		b.Add(Completed("", transcript.StatusOK, ""))
	}
	return b
}

// Storages are the layouts: the fixture, none, synced sessions (open,
// ended, a part still being written), child links (shared, missing,
// cyclic, deeper than runtree.MaxDepth), costs whose float sum depends on the
// order, and files that are not transcripts.
func Storages() []Storage {
	t0 := T0
	return []Storage{
		{"fixture", func(t testing.TB, root string) { WriteStore(t, root) }},
		{"empty", func(t testing.TB, root string) {
			if err := os.MkdirAll(filepath.Join(root, "transcripts"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"synced sessions", func(t testing.TB, root string) {
			write(t, root, archivedRun(t, RunID(1), t0, false, transcript.StatusOK))
			write(t, root, archivedRun(t, RunID(2), t0.Add(time.Hour), false, transcript.StatusOK, transcript.StatusIncomplete))
			write(t, root, archivedRun(t, RunID(3), t0.Add(2*time.Hour), false, transcript.StatusIncomplete, transcript.StatusError))
			write(t, root, archivedRun(t, RunID(4), t0.Add(3*time.Hour), true, transcript.StatusOK, transcript.StatusError))
			// A part being written: its step is open.
			b := archivedRun(t, RunID(5), t0.Add(4*time.Hour), false, transcript.StatusOK)
			b.Add(Step(transcript.StepStarted, "agent", 1, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
			write(t, root, b)
		}},
		{"links", func(t testing.TB, root string) {
			// 1 calls 2 and 3; 2 calls 3 (shared); 3 calls 1 (a cycle);
			// 4 calls a run with no file; 10..79 a chain deeper than
			// runtree.MaxDepth.
			write(t, root, caller(t, RunID(1), "", "top", t0, 0.1, RunID(2), RunID(3)))
			write(t, root, caller(t, RunID(2), RunID(1), "mid", t0.Add(time.Second), 0.2, RunID(3)))
			write(t, root, caller(t, RunID(3), RunID(1), "leaf", t0.Add(2*time.Second), 0.7, RunID(1)))
			write(t, root, caller(t, RunID(4), "", "orphan caller", t0.Add(3*time.Second), 0.3, RunID(99)))
			for i := 10; i < 80; i++ {
				parent := ""
				if i > 10 {
					parent = RunID(i - 1)
				}
				write(t, root, caller(t, RunID(i), parent, fmt.Sprintf("chain %d", i), t0.Add(time.Duration(i)*time.Minute), 0.1*float64(i%7), RunID(i+1)))
			}
		}},
		{"costs", func(t testing.TB, root string) {
			for i := 1; i <= 30; i++ {
				write(t, root, caller(t, RunID(i), "", fmt.Sprintf("run %d", i), t0.Add(time.Duration(i%5)*time.Hour), 0.1+float64(i)*0.01))
			}
		}},
		{"not transcripts", func(t testing.TB, root string) {
			WriteStore(t, root)
			dir := filepath.Join(root, "transcripts")
			WriteFile(t, filepath.Join(dir, RunID(7)+".jsonl"), []byte("just some text\n"))
			WriteFile(t, filepath.Join(dir, RunID(8)+".jsonl"), nil)
			WriteFile(t, filepath.Join(dir, "notes.jsonl"), []byte("{}\n"))
			// A torn tail: the last line cut short.
			b := caller(t, RunID(9), "", "torn", t0, 0.5).Bytes(t)
			WriteFile(t, filepath.Join(dir, RunID(9)+".jsonl"), b[:len(b)-20])
		}},
	}
}
