//go:build !wasip1

package qwen_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestBranch: /branch writes the conversation so far into a new chat file,
// each copied record with the new session id and forkedFrom naming the
// session and record it came from (SessionService.forkSession,
// QwenLM/qwen-code 011133cd). Those turns and tokens are the parent's: the
// branch's messages, tool calls and usage are what it added itself, and
// every copied line is declared ignored. A chat without forkedFrom is read
// whole, as before.
func TestBranch(t *testing.T) {
	rec := func(uuid, parent, typ, extra string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"b","timestamp":"2026-11-20T10:00:00Z","type":"` + typ + `","cwd":"/w","version":"0.24.4"` + extra + "}"
	}
	from := func(uuid string) string { return `,"forkedFrom":{"sessionId":"p","messageUuid":"` + uuid + `"}` }
	user := func(text string) string { return `,"message":{"role":"user","parts":[{"text":"` + text + `"}]}` }
	answer := func(text string, in, out int) string {
		return `,"model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"` + text + `"}]},"usageMetadata":{"promptTokenCount":` + strconv.Itoa(in) + `,"candidatesTokenCount":` + strconv.Itoa(out) + `,"totalTokenCount":` + strconv.Itoa(in+out) + `}`
	}
	call := `,"model":"qwen3-coder-plus","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"path":"a.go"}}}]},"usageMetadata":{"promptTokenCount":300,"candidatesTokenCount":20,"totalTokenCount":320}`
	result := `,"message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"package a"}}}]},"toolCallResult":{"callId":"c1","status":"success","resultDisplay":"package a"}`
	copied := []string{
		rec("u1", "", "user", user("parent prompt")+from("u1")),
		rec("a1", "u1", "assistant", call+from("a1")),
		rec("t1", "a1", "tool_result", result+from("t1")),
		rec("a2", "t1", "assistant", answer("parent answer", 400, 30)+from("a2")),
	}
	own := []string{
		rec("u2", "a2", "user", user("branch prompt")),
		rec("a3", "u2", "assistant", answer("branch answer", 500, 40)),
	}
	title := rec("x1", "a2", "system", `,"subtype":"custom_title","systemPayload":{"customTitle":"try b","titleSource":"manual"}`)
	tests := []struct {
		name         string
		lines        []string
		texts        string // message texts in order, joined by "|"
		calls, input int
		output       int
	}{
		{"branch: only its own turn", append(append(append([]string{}, copied...), title), own...), "branch prompt|branch answer", 0, 500, 40},
		{"branch not yet continued", append(append([]string{}, copied...), title), "", 0, -1, -1},
		{"the parent itself", unfork(append(append([]string{}, copied...), own...)), "parent prompt|parent answer|branch prompt|branch answer", 1, 1200, 90},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), qwen.Plugin, "qwen", []byte(strings.Join(tt.lines, "\n")+"\n"))
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
			if in != int64(tt.input) || out != int64(tt.output) {
				t.Errorf("usage in %d out %d; want %d, %d", in, out, tt.input, tt.output)
			}
			if r.Step.SessionID != "b" {
				t.Errorf("session %q; want b", r.Step.SessionID)
			}
			if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
			}
		})
	}
}

// unfork drops the forkedFrom members: the parent's own records.
func unfork(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if j := strings.Index(l, `,"forkedFrom":`); j >= 0 {
			k := strings.Index(l[j:], "}") + j + 1
			l = l[:j] + l[k:]
		}
		out[i] = l
	}
	return out
}
