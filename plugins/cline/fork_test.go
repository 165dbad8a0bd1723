//go:build !wasip1

package cline_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

// TestForkCopiedMessages: the Cline CLI's /fork (forkCurrentSession,
// apps/cli/src/runtime/interactive/session-runtime.ts, cline/cline
// 21cb8d2) starts a new session, its id Date.now() in milliseconds and a
// random suffix (createSessionId), with the forked session's messages as
// they were, each with its ts (sdk/packages/core/fixtures/session: a
// fork's <id>.messages.json whose every message is dated before its id).
// A message dated before its session started is that session's, which
// its own run holds: the fork's run holds only what was said after the
// fork, and a warning counts the copied messages. A session whose id
// states no start (another shape), a message without ts, and a task
// folder's api_conversation_history.json (an array: the extension has no
// /fork) are read whole.
func TestForkCopiedMessages(t *testing.T) {
	copied := []string{
		`{"id":"msg_mr9sjimy_1","role":"user","content":[{"type":"text","text":"Move the filter icon."}],"ts":1783376868634}`,
		`{"id":"msg_7mYEbh8N","role":"assistant","content":[{"type":"text","text":"I'll read the sidebar."},{"type":"tool_use","id":"toolu_01","name":"read_files","input":{"paths":["agent-sidebar.tsx"]}}],"ts":1783376873493,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":34334,"outputTokens":741,"cacheReadTokens":0,"cacheWriteTokens":0,"cost":0.489531}}`,
		`{"id":"msg_qkyA1yfW_tool_toolu_01","role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"export function AgentSidebar() {}"}],"ts":1783376873501}`,
		`{"id":"msg_SUqLoZ6R","role":"assistant","content":[{"type":"text","text":"The icon now comes after the Sessions button."}],"ts":1783376880004,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":36673,"outputTokens":290,"cacheReadTokens":35910,"cacheWriteTokens":0,"cost":0.062939625}}`,
	}
	own := []string{
		`{"id":"msg_mra1b2c3_1","role":"user","content":[{"type":"text","text":"Now make it blue."}],"ts":1784094130000}`,
		`{"id":"msg_Xy12Ab34","role":"assistant","content":[{"type":"text","text":"It is blue now."}],"ts":1784094134000,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":37000,"outputTokens":80,"cacheReadTokens":36600,"cacheWriteTokens":0,"cost":0.05}}`,
	}
	doc := func(id string, msgs []string) []byte {
		return []byte(`{"version":1,"updated_at":"2026-07-15T05:42:20.000Z","agent":"lead","sessionId":"` + id + `","messages":[` + strings.Join(msgs, ",") + `],"system_prompt":"You are Cline."}` + "\n")
	}
	all := append(append([]string{}, copied...), own...)
	const whole = "I'll read the sidebar.|The icon now comes after the Sessions button.|It is blue now."
	tests := []struct {
		name  string
		in    []byte
		texts string // assistant texts, joined by "|"
		calls int
		fork  bool // a warning says messages were copied
	}{
		{"the fork: only what followed it", doc("1784094124598_rruoq", all), "It is blue now.", 0, true},
		{"a fork not continued", doc("1784094124598_rruoq", copied), "", 0, true},
		{"the CLI's own id", doc("1784094124598_rruoq_cli", all), "It is blue now.", 0, true},
		{"a session started before its messages", doc("1783376860000_a1b2c", all), whole, 1, false},
		{"an id that states no start", doc("sess_01", all), whole, 1, false},
		{"messages without ts", doc("1784094124598_rruoq", []string{strings.Replace(copied[1], `,"ts":1783376873493`, "", 1), own[0], own[1]}), "I'll read the sidebar.|It is blue now.", 1, false},
		{"a task folder's conversation (an array)", []byte("[" + strings.Join(all, ",") + "]\n"), whole, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, texts, calls, _ := plugintest.Turns(t, cline.Plugin, "cline", tt.in)
			if texts != tt.texts || calls != tt.calls {
				t.Errorf("assistant texts %q, %d tool calls; want %q, %d", texts, calls, tt.texts, tt.calls)
			}
			warned := false
			for _, w := range r.Step.Warnings {
				warned = warned || strings.Contains(w, "copied from the session it was forked from")
			}
			if warned != tt.fork {
				t.Errorf("fork warning %v; want %v (warnings %q)", warned, tt.fork, r.Step.Warnings)
			}
		})
	}
}
