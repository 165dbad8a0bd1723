//go:build !wasip1

package claude_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
)

// TestFork: /branch writes the conversation so far into the new session's
// file, each copied record keeping its uuid, timestamp and message, with
// the new sessionId and forkedFrom {sessionId, messageUuid}. Those turns,
// tool calls and tokens are the parent's: the fork's are what it did
// itself, and every copied line is declared ignored. A session log without
// forkedFrom is read whole, as before.
func TestFork(t *testing.T) {
	line := func(typ, uuid, parent, body string) string {
		return `{"type":"` + typ + `","sessionId":"f","uuid":"` + uuid + `","parentUuid":"` + parent + `","isSidechain":false,"cwd":"/w","version":"2.1.90","timestamp":"2026-11-20T10:00:00.000Z",` + body + `}`
	}
	from := func(l, uuid string) string {
		return strings.TrimSuffix(l, "}") + `,"forkedFrom":{"sessionId":"p","messageUuid":"` + uuid + `"}}`
	}
	user := func(text string) string { return `"message":{"role":"user","content":"` + text + `"}` }
	answer := func(id, text string, in, out string) string {
		return `"message":{"id":"` + id + `","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"` + text + `"}],"stop_reason":"end_turn","usage":{"input_tokens":` + in + `,"output_tokens":` + out + `}}`
	}
	call := `"message":{"id":"msg_c","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/w/a.go"}}],"stop_reason":"tool_use","usage":{"input_tokens":300,"output_tokens":20}}`
	result := `"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"package a"}]}`
	parent := []string{
		line("user", "u1", "", user("parent prompt")),
		line("assistant", "a1", "u1", call),
		line("user", "t1", "a1", result),
		line("assistant", "a2", "t1", answer("msg_p", "parent answer", "400", "30")),
	}
	var copied []string
	for _, l := range parent {
		uuid := l[strings.Index(l, `"uuid":"`)+8:]
		copied = append(copied, from(l, uuid[:strings.Index(uuid, `"`)]))
	}
	own := []string{
		line("user", "u2", "a2", user("fork prompt")),
		line("assistant", "a3", "u2", answer("msg_f", "fork answer", "500", "40")),
	}
	tests := []struct {
		name          string
		lines         []string
		texts         string // message texts in order, joined by "|"
		calls         int
		input, output int64
	}{
		{"fork: only its own turn", slices.Concat(copied, own), "fork prompt|fork answer", 0, 500, 40},
		{"fork not yet continued", copied, "", 0, -1, -1},
		{"the parent itself", slices.Concat(parent, own), "parent prompt|parent answer|fork prompt|fork answer", 1, 1200, 90},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), claude.Plugin, "claude", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			texts, calls, in, out := plugintest.FromResult(r).Summary(nil)
			if texts != tt.texts {
				t.Errorf("messages %q; want %q", texts, tt.texts)
			}
			if calls != tt.calls {
				t.Errorf("%d tool calls; want %d", calls, tt.calls)
			}
			if in != tt.input || out != tt.output {
				t.Errorf("usage in %d out %d; want %d, %d", in, out, tt.input, tt.output)
			}
			if r.Step.SessionID != "f" {
				t.Errorf("session %q; want f", r.Step.SessionID)
			}
			if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
			}
		})
	}
}
