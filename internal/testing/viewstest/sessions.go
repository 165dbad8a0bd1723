package viewstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// BenchSessions is how many sessions the archive benchmarks generate:
// TWASM_BENCH_SESSIONS (make bench sets it), else 10,000.
func BenchSessions() int {
	if v, err := strconv.Atoi(os.Getenv("TWASM_BENCH_SESSIONS")); err == nil && v > 0 {
		return v
	}
	return 10000
}

// ClaudeSessions writes n sessions made by ClaudeSession under
// root/transcripts, spread evenly over the year from 2026-01-01 09:00
// UTC (session i the i-th, run ids RunID(2i+1) and RunID(2i+2) for its
// sub-agent).
func ClaudeSessions(tb testing.TB, root string, n int) {
	tb.Helper()
	dir := filepath.Join(root, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		ClaudeSession(tb, dir, i, t0.Add(time.Duration(i)*365*24*time.Hour/time.Duration(n)))
	}
}

// ClaudeSession writes into dir a Claude Code session as the claude
// plugin archives it, started at at: a prompt ("fix test I"), 20
// assistant messages (a sonnet or an opus model), each with the usage
// of one API request, an agent step whose usage is their sum, in one of
// 20 projects; every tenth session has a sub-agent's run of 5 haiku
// messages.
func ClaudeSession(tb testing.TB, dir string, i int, at time.Time) {
	tb.Helper()
	id, sub := RunID(2*i+1), RunID(2*i+2)
	model := []string{"claude-sonnet-4-5-20250929", "claude-opus-4-6"}[i%2]
	b := NewBuilder(id, "")
	add := func(b *Builder, ev *transcript.Event) {
		ev.Timestamp = at
		b.Add(ev)
		at = at.Add(20 * time.Second)
	}
	add(b, Started("claude session"))
	add(b, Step(transcript.StepStarted, "session", 0, &transcript.StepPayload{Name: "session", Kind: transcript.KindAgent}))
	add(b, Msg(transcript.MessageUser, "session", transcript.TextBlock(fmt.Sprintf("fix test %d", i))))
	var sum transcript.Usage
	for j := range 20 {
		u := &transcript.Usage{UncachedInputTokens: new(int64(100 + j)), CacheReadTokens: new(int64(20000 + 1000*j)),
			CacheWriteTokens: new(int64(500)), OutputTokens: new(int64(300 + j))}
		sum.Add(u)
		add(b, &transcript.Event{Type: transcript.MessageAssistant, Path: "session", Payload: &transcript.MessagePayload{Role: "assistant", Model: model,
			Usage: u, Blocks: []transcript.Block{transcript.TextBlock("done, the tests pass now")}}})
	}
	add(b, AgentDone(tb, "session", &transcript.AgentResult{Provider: "claude", Model: model, Status: "ok", Usage: &sum,
		Project: fmt.Sprintf("/work/project%02d", i%20)}))
	if i%10 == 0 {
		add(b, &transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "subagent", ChildRunID: sub,
			Payload: &transcript.StepPayload{Name: "subagent", Kind: transcript.KindCallWorkflow}})
		c := NewBuilder(sub, id)
		add(c, Started("sub-agent"))
		for range 5 {
			add(c, &transcript.Event{Type: transcript.MessageAssistant, Path: "task", Payload: &transcript.MessagePayload{Role: "assistant",
				Model: "claude-haiku-4-5-20251001", Usage: &transcript.Usage{UncachedInputTokens: new(int64(2000)), OutputTokens: new(int64(200))},
				Blocks: []transcript.Block{transcript.TextBlock("found it")}}})
		}
		WriteFile(tb, filepath.Join(dir, sub+".jsonl"), c.Bytes(tb))
	}
	WriteFile(tb, filepath.Join(dir, id+".jsonl"), b.Bytes(tb))
}
