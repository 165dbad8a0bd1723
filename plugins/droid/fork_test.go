//go:build !wasip1

package droid_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/droid"
)

// TestFork: a session Droid forked (forkSession: the parent's
// session_start under the fork's id with forkedAtMessageId, then the
// parent's lines up to that message, and the outcome of the turn that
// ended there) holds, in its run, only what it did after the fork: the
// copied prompts, answers and calls are declared ignored, so that they
// count in the parent's run alone, and a copied turn's failure is not the
// fork's. Its settings start from zero tokens (Droid resets tokenUsage),
// so its usage is its own as stated. A session without the mark, or with
// a null one (a fork made before any message), is read whole.
func TestFork(t *testing.T) {
	const set = `{"$twasm":"file","path":"-w/f.settings.json","size":200,"mtime":"2026-07-28T10:10:00.000Z","document":true}` + "\n" +
		`{"model":"claude-sonnet-4-5","tokenUsage":{"inputTokens":300,"outputTokens":20,"cacheCreationTokens":0,"cacheReadTokens":0,"thinkingTokens":0}}`
	line := func(id, sec, role, content string) string {
		return `{"type":"message","id":"` + id + `","timestamp":"2026-07-28T10:00:0` + sec + `.000Z","message":{"role":"` + role + `","content":[` + content + `]}}`
	}
	text := func(s string) string { return `{"type":"text","text":"` + s + `"}` }
	start := func(mark string) string {
		return `{"type":"session_start","id":"f","title":"fork","cwd":"/w","parent":"p"` + mark + `}`
	}
	copied := []string{
		line("u1", "1", "user", text("list files")),
		line("a1", "2", "assistant", `{"type":"tool_use","id":"toolu_1","name":"LS","input":{}}`),
		line("r1", "3", "user", `{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go"}`),
		line("a2", "4", "assistant", text("one file")),
		`{"type":"agent_turn_outcome","turnId":"u1","reason":"error","resultKind":"provider_error"}`,
	}
	own := []string{
		line("u2", "5", "user", text("and tests?")),
		line("a3", "6", "assistant", text("none")),
	}
	tests := []struct {
		name, in, texts string
		calls           int
		errors          int
		input           int64 // -1: none stated
	}{
		{"a fork", strings.Join(append(append([]string{start(`,"forkedAtMessageId":"a2"`)}, copied...), own...), "\n") + "\n" + set + "\n",
			"none", 0, 0, 300},
		{"a fork with nothing of its own yet", strings.Join(append([]string{start(`,"forkedAtMessageId":"a2"`)}, copied...), "\n") + "\n",
			"", 0, 0, -1},
		{"not a fork", strings.Join(append(append([]string{start("")}, copied...), own...), "\n") + "\n",
			"one file|none", 1, 1, -1},
		{"a fork made before any message", strings.Join(append([]string{start(`,"forkedAtMessageId":null`)}, own...), "\n") + "\n",
			"none", 0, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, texts, calls, input := plugintest.Turns(t, droid.Plugin, "droid", []byte(tt.in))
			if texts != tt.texts || calls != tt.calls || input != tt.input {
				t.Errorf("answers %q, %d calls, input %d; want %q, %d, %d", texts, calls, input, tt.texts, tt.calls, tt.input)
			}
			if len(r.Step.Errors) != tt.errors {
				t.Errorf("errors %v, want %d", r.Step.Errors, tt.errors)
			}
		})
	}
}
