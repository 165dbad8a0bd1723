//go:build !wasip1

package qwen_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestRefusedCall: a call Qwen Code refused to run (a deny rule, the user
// declining, headless mode that cannot ask, the core tools allowlist,
// plan mode: coreToolScheduler's ToolErrorType.EXECUTION_DENIED, status
// error) is denied (spec §4), in the chats and in stream-json alike; a
// tool's own failure stays an error. Before, every one of them read as
// an error: the CLI writes a refusal with status error, which only its
// text (and, in the chats, its errorType) tells apart.
func TestRefusedCall(t *testing.T) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	chat := func(text, errorType string) string {
		head := func(i int) string {
			return fmt.Sprintf(`"uuid":"q%d","parentUuid":%s,"sessionId":"s1","timestamp":"2026-03-01T10:00:0%d.000Z","cwd":"/w","version":"0.24.0"`, i, map[bool]string{true: "null", false: fmt.Sprintf(`"q%d"`, i-1)}[i == 1], i)
		}
		et := ""
		if errorType != "" {
			et = `,"errorType":` + q(errorType)
		}
		return strings.Join([]string{
			`{` + head(1) + `,"type":"user","message":{"role":"user","parts":[{"text":"Write it"}]}}`,
			`{` + head(2) + `,"type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"write_file","args":{"file_path":"/w/a.txt","content":"x"}}}]}}`,
			`{` + head(3) + `,"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"write_file","response":{"error":` + q(text) + `}}}]},"toolCallResult":{"callId":"c1","status":"error","resultDisplay":` + q(text) + et + `}}`,
			`{` + head(4) + `,"type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"I could not write it."}]}}`,
		}, "\n")
	}
	stream := func(text string) string {
		const sid = `"session_id":"s1"`
		return strings.Join([]string{
			`{"type":"system","subtype":"init","uuid":"s1",` + sid + `,"cwd":"/w","tools":["write_file"],"model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.23.0"}`,
			`{"type":"assistant","uuid":"a1",` + sid + `,"parent_tool_use_id":null,"message":{"id":"a1","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"tool_use","id":"c1","name":"write_file","input":{"file_path":"/w/a.txt","content":"x"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}`,
			`{"type":"user","uuid":"u1",` + sid + `,"parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":` + q(text) + `}]}}`,
			`{"type":"result","subtype":"success","uuid":"r1",` + sid + `,"is_error":false,"duration_ms":9,"duration_api_ms":8,"num_turns":2,"result":"I could not write it.","usage":{"input_tokens":10,"output_tokens":5},"permission_denials":[]}`,
		}, "\n")
	}
	const (
		rule        = `Qwen Code requires permission to use "write_file", but that permission was declined. Matching deny rule: "edit".`
		headless    = `Qwen Code requires permission to use "write_file", but that permission was declined (non-interactive mode cannot prompt for confirmation).`
		allowlist   = `"write_file" is not listed in the active core tools allowlist.`
		plan        = `Tool "write_file" is blocked in plan mode.`
		toolFailure = `Permission denied: /w/a.txt is read-only`
	)
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"chat: a deny rule", chat(rule, ""), "denied"},
		{"chat: headless mode cannot ask", chat(headless, ""), "denied"},
		{"chat: the allowlist", chat(allowlist, ""), "denied"},
		{"chat: plan mode", chat(plan, ""), "denied"},
		{"chat: errorType execution_denied, another text", chat("Non-interactive deny: write_file", "execution_denied"), "denied"},
		{"chat: the tool's own failure", chat(toolFailure, "file_write_failure"), "error"},
		{"stream-json: a deny rule", stream(rule), "denied"},
		{"stream-json: headless mode cannot ask", stream(headless), "denied"},
		{"stream-json: the tool's own failure", stream(toolFailure), "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, qwen.Plugin, []byte(tc.raw+"\n"), normalize.Options{Provider: "qwen"})
			if st, _ := o.ResultStatus("c1"); st != tc.want {
				t.Errorf("c1's status %q, want %q", st, tc.want)
			}
			if o.Result.Status != "ok" || len(o.Result.Unmapped) != 0 {
				t.Errorf("status %q, unmapped %v: want ok, none", o.Result.Status, o.Result.Unmapped)
			}
		})
	}
}
