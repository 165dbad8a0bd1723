//go:build !wasip1

package qwen_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestHeadless: qwen -p --output-format stream-json (and json, the same
// messages in one array; packages/cli/src/nonInteractive) is Qwen Code's
// own: its usage's input_tokens is the whole prompt, the cache read in it
// (createUsage, computeUsageFromMetrics), so the run's input is
// input_tokens, not input_tokens plus the cache as Claude Code's would
// be; calls and results with their status; the result message the run's
// end; a sub-agent's messages (parent_tool_use_id) a child scope. Before,
// the plugin read none of it (the assistant's message has no parts): no
// message, no usage, status ok.
func TestHeadless(t *testing.T) {
	const sid = `"session_id":"s1"`
	init := `{"type":"system","subtype":"init","uuid":"s1",` + sid + `,"cwd":"/p","tools":["run_shell_command"],"model":"qwen3-coder-plus","permission_mode":"yolo","qwen_code_version":"0.14.0"}`
	call := `{"type":"assistant","uuid":"a1",` + sid + `,"parent_tool_use_id":null,"message":{"id":"a1","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"tool_use","id":"c1","name":"run_shell_command","input":{"command":"npm test"}}],"stop_reason":"tool_use","usage":{"input_tokens":17297,"output_tokens":533,"cache_read_input_tokens":9000,"total_tokens":17830}}}`
	failed := `{"type":"user","uuid":"u1",` + sid + `,"parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":"Command was denied"}]}}`
	answer := `{"type":"assistant","uuid":"a2",` + sid + `,"parent_tool_use_id":null,"message":{"id":"a2","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"It was denied."}],"stop_reason":null,"usage":{"input_tokens":18000,"output_tokens":20,"cache_read_input_tokens":17000,"total_tokens":18020}}}`
	result := `{"type":"result","subtype":"success","uuid":"r1",` + sid + `,"is_error":false,"duration_ms":9,"duration_api_ms":8,"num_turns":2,"result":"It was denied.","usage":{"input_tokens":35297,"output_tokens":553,"cache_read_input_tokens":26000,"total_tokens":35850},"permission_denials":[]}`
	failure := `{"type":"result","subtype":"error_during_execution","uuid":"r2",` + sid + `,"is_error":true,"duration_ms":9,"duration_api_ms":8,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[],"error":{"message":"Connection error."}}`
	agentCall := `{"type":"assistant","uuid":"a3",` + sid + `,"parent_tool_use_id":null,"message":{"id":"a3","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"tool_use","id":"t1","name":"agent","input":{"description":"look","prompt":"List the files.","subagent_type":"general-purpose"}}],"stop_reason":"tool_use","usage":{"input_tokens":100,"output_tokens":10}}}`
	subText := `{"type":"assistant","uuid":"a4",` + sid + `,"parent_tool_use_id":"t1","message":{"id":"a4","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"Two files."}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}`
	agentDone := `{"type":"user","uuid":"u2",` + sid + `,"parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":false,"content":"Two files."}]}}`
	type want struct {
		status      string
		input, cred int64 // input and cache read (-1: no usage)
		call        string
		children    int
	}
	for _, tc := range []struct {
		name, raw string
		want      want
	}{
		{"stream-json: the cache read is inside input_tokens", strings.Join([]string{init, call, failed, answer, result}, "\n"),
			want{status: "ok", input: 35297, cred: 26000, call: "error"}},
		{"json: the same messages in one array", "[" + strings.Join([]string{init, call, failed, answer, result}, ",") + "]",
			want{status: "ok", input: 35297, cred: 26000, call: "error"}},
		{"a failed run: error", strings.Join([]string{init, failure}, "\n"),
			want{status: "error", input: -1}},
		{"cut before the result: incomplete, the messages' usage", strings.Join([]string{init, call, failed}, "\n"),
			want{status: "incomplete", input: 17297, cred: 9000, call: "error"}},
		{"a sub-agent's messages are a child run", strings.Join([]string{init, agentCall, subText, agentDone, result}, "\n"),
			want{status: "ok", input: 35297, cred: 26000, children: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, qwen.Plugin, []byte(tc.raw+"\n"), normalize.Options{Provider: "qwen"})
			if o.Result.Status != tc.want.status || o.Result.Format != "stream-json" || o.Result.Model != "qwen3-coder-plus" || o.Result.Cwd != "/p" {
				t.Errorf("status %q format %q model %q cwd %q, want %q stream-json qwen3-coder-plus /p", o.Result.Status, o.Result.Format, o.Result.Model, o.Result.Cwd, tc.want.status)
			}
			in, cr := int64(-1), int64(-1)
			if u := o.Result.Usage; u != nil && u.InputTokens != nil {
				in = *u.InputTokens
				if u.CacheReadTokens != nil {
					cr = *u.CacheReadTokens
				}
			}
			if in != tc.want.input || (in >= 0 && cr != tc.want.cred) {
				t.Errorf("input %d (cache read %d), want %d (%d)", in, cr, tc.want.input, tc.want.cred)
			}
			if st, _ := o.ResultStatus("c1"); st != tc.want.call {
				t.Errorf("c1's status %q, want %q", st, tc.want.call)
			}
			scopes := map[string]bool{}
			for _, it := range o.Sink.Items {
				if it.Scope != "" {
					scopes[it.Scope] = true
				}
			}
			if len(scopes) != tc.want.children {
				t.Errorf("%d sub-agent scopes %v, want %d", len(scopes), scopes, tc.want.children)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}
