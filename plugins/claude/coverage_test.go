//go:build !wasip1

package claude

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/transcript"
)

// TestNewerRecords feeds the record types and fields of the newest Claude
// Code streams (Agent SDK 0.3.2xx types) and Messages API responses that
// say a call was refused or stopped, a command failed, a hook failed, a
// turn was paused, or that change what the run cost, and checks each
// comes out as what it says: a tool result's status and exit code, the
// step's status, warnings and cost, and every line accounted for with
// nothing unmapped.
func TestNewerRecords(t *testing.T) {
	const init = `{"type":"system","subtype":"init","session_id":"s","model":"claude-opus-4-7","cwd":"/w","tools":["Bash"]}` + "\n"
	call := func(id, name string) string {
		return `{"type":"assistant","message":{"id":"msg_` + id + `","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{"command":"git push"}}],"usage":{"input_tokens":3,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"s"}` + "\n"
	}
	result := func(id, content, meta string) string {
		m := ""
		if meta != "" {
			m = `,"tool_result_meta":` + meta
		}
		return `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + content + `,"is_error":true}]},"parent_tool_use_id":null,"session_id":"s","tool_use_result":"Error: x"` + m + "}\n"
	}
	ok := func(cost string) string {
		return `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","total_cost_usd":` + cost + `,"usage":{"input_tokens":1,"output_tokens":1}}` + "\n"
	}
	// An Anthropic Messages API response holding a server tool's call
	// and result (content: the result block's content).
	response := func(tool, resultType, content, stop string) string {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[` +
			`{"type":"server_tool_use","id":"srvtoolu_1","name":"` + tool + `","input":{"command":"python3 x.py"}},` +
			`{"type":"` + resultType + `","tool_use_id":"srvtoolu_1","content":` + content + `},` +
			`{"type":"text","text":"It failed."}],"stop_reason":"` + stop + `","usage":{"input_tokens":10,"output_tokens":20,"server_tool_use":{"web_search_requests":0}}}` + "\n"
	}
	tests := []struct {
		name     string
		input    string
		status   map[string]string // tool call id -> result status
		exit     map[string]int    // tool call id -> exit code
		step     string            // the step's status ("" not checked)
		warnings []string          // substrings of warnings, each in some warning
		cost     float64           // the step's cost (0: not checked)
		perr     int               // provider errors in the step
		stepErr  string            // a substring of the step's error text
	}{
		{name: "tool_result_meta permission-rule: a hook's own denial text is denied",
			input:  init + call("toolu_1", "Bash") + result("toolu_1", `"PERSONAHUB_DENY_MARKER: blocked by test hook"`, `[{"id":"toolu_1","non_execution_kind":"permission-rule"}]`) + ok("0.01"),
			status: map[string]string{"toolu_1": "denied"}},
		{name: "tool_result_meta user-rejected: a headless run's approval text is denied",
			input:  init + call("toolu_1", "Bash") + result("toolu_1", `"This command requires approval"`, `[{"id":"toolu_1","non_execution_kind":"user-rejected","user_feedback":"use the API"}]`) + ok("0.01"),
			status: map[string]string{"toolu_1": "denied"}},
		{name: "tool_result_meta interrupted is cancelled",
			input:  init + call("toolu_1", "Bash") + result("toolu_1", `"stopped"`, `[{"id":"toolu_1","non_execution_kind":"interrupted"}]`) + ok("0.01"),
			status: map[string]string{"toolu_1": "cancelled"}},
		{name: "tool_result_meta of another call, or of an unknown kind, leaves the error",
			input: init + call("toolu_1", "Bash") + result("toolu_1", `"Exit code 1\nfatal"`, `[{"id":"toolu_2","non_execution_kind":"permission-rule"}]`) +
				call("toolu_3", "Bash") + result("toolu_3", `"Exit code 2"`, `[{"id":"toolu_3","non_execution_kind":"brand-new"}]`) + ok("0.01"),
			status: map[string]string{"toolu_1": "error", "toolu_3": "error"}},
		{name: "permission_denied system record is accounted for",
			input: init + call("toolu_1", "Bash") +
				`{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"toolu_1","decision_reason_type":"rule","decision_reason":"git push is denied","message":"Denied","session_id":"s"}` + "\n" +
				result("toolu_1", `"Permission to use Bash with command git push has been denied."`, `[{"id":"toolu_1","non_execution_kind":"permission-rule"}]`) + ok("0.01"),
			status: map[string]string{"toolu_1": "denied"}},
		{name: "hook_response that failed or was cancelled is a warning; a success is not",
			input: init + `{"type":"system","subtype":"hook_response","hook_id":"h1","hook_name":"PostToolUse:Bash","hook_event":"PostToolUse","output":"","stdout":"","stderr":"lint failed","exit_code":1,"outcome":"error","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"hook_response","hook_id":"h2","hook_name":"PreToolUse:Bash","hook_event":"PreToolUse","output":"","stdout":"","stderr":"","exit_code":1,"outcome":"cancelled","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"hook_response","hook_id":"h3","hook_name":"Stop","hook_event":"Stop","output":"","stdout":"ok","stderr":"","exit_code":0,"outcome":"success","session_id":"s"}` + "\n" + ok("0.01"),
			step:     "ok",
			warnings: []string{"hook PostToolUse:Bash error (exit 1): lint failed", "hook PreToolUse:Bash cancelled (exit 1)"}},
		{name: "informational at warning level is a warning; at info level ignored",
			input: init + `{"type":"system","subtype":"informational","content":"Usage limit reached · continuing automatically at 9:50am","level":"warning","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"informational","content":"Remote Control disconnected","level":"info","session_id":"s"}` + "\n" + ok("0.01"),
			warnings: []string{"claude: Usage limit reached"}},
		{name: "conversation_reset: the cost before it is kept",
			input: init + ok("0.5") +
				`{"type":"conversation_reset","new_conversation_id":"c2","uuid":"u","session_id":"s"}` + "\n" +
				init + ok("0.25"),
			cost: 0.75},
		{name: "auth_status error is a warning; progress, summaries and suggestions ignored",
			input: init + `{"type":"auth_status","isAuthenticating":true,"output":["Opening browser"],"error":"login timed out","uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"tool_progress","tool_use_id":"toolu-1","tool_name":"Bash","parent_tool_use_id":null,"elapsed_time_seconds":42,"uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"tool_use_summary","summary":"Read 3 files","preceding_tool_use_ids":["toolu-1"],"uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"prompt_suggestion","suggestion":"run the tests","uuid":"u","session_id":"s"}` + "\n" + ok("0.01"),
			warnings: []string{"authentication failed: login timed out"}},
		{name: "code execution that returned 1 failed",
			input:  response("code_execution", "code_execution_tool_result", `{"type":"code_execution_result","stdout":"","stderr":"Traceback: ZeroDivisionError","return_code":1,"content":[]}`, "end_turn"),
			status: map[string]string{"srvtoolu_1": "error"}, exit: map[string]int{"srvtoolu_1": 1}, step: "ok"},
		{name: "bash code execution that returned 0 is ok, with its exit code",
			input:  response("bash_code_execution", "bash_code_execution_tool_result", `{"type":"bash_code_execution_result","stdout":"hi","stderr":"","return_code":0,"content":[]}`, "end_turn"),
			status: map[string]string{"srvtoolu_1": "ok"}, exit: map[string]int{"srvtoolu_1": 0}},
		{name: "a server tool's error content is an error",
			input:  response("web_fetch", "web_fetch_tool_result", `{"type":"web_fetch_tool_error","error_code":"url_not_accessible"}`, "end_turn"),
			status: map[string]string{"srvtoolu_1": "error"}},
		{name: "pause_turn is incomplete",
			input:  response("web_search", "web_search_tool_result", `[]`, "pause_turn"),
			status: map[string]string{"srvtoolu_1": "ok"}, step: "incomplete"},
		{name: "a fallback block is a warning, not an unmapped block",
			input: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[` +
				`{"type":"fallback","from":{"model":"claude-opus-4-7"},"to":{"model":"claude-sonnet-4-6"},"trigger":{"type":"refusal","category":"cyber"}},` +
				`{"type":"text","text":"Here is the port scanner."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20}}` + "\n",
			step:     "ok",
			warnings: []string{"anthropic fallback: claude-opus-4-7 declined (refusal, cyber); claude-sonnet-4-6 answered"}},
		{name: "a refused last turn is an error, whatever the result's subtype; the refusal a warning",
			input: init + `{"type":"system","subtype":"model_refusal_no_fallback","original_model":"claude-sonnet-5","request_id":"req_1","api_refusal_category":"cyber","api_refusal_explanation":null,"refused_user_message_uuid":"u-1","content":"","session_id":"s","uuid":"e-1"}` + "\n" +
				`{"type":"result","subtype":"success","is_error":false,"stop_reason":"refusal","terminal_reason":"completed","result":"","session_id":"s","usage":{"input_tokens":55965,"output_tokens":0}}` + "\n",
			step: "error", perr: 1,
			warnings: []string{"claude: claude-sonnet-5 refused the request (cyber); no fallback model"}},
		{name: "session log: a refusal retried on another model is a warning; bookkeeping is ignored",
			input: `{"parentUuid":"a","isSidechain":false,"type":"system","subtype":"model_refusal_fallback","originalModel":"claude-fable-5","fallbackModel":"claude-opus-4-8","apiRefusalCategory":"cyber","refusedUserMessageUuid":"u1","content":"Switched to Opus 4.8","level":"warning","uuid":"f1","timestamp":"2026-10-03T08:16:02Z","sessionId":"s","version":"2.1.281","cwd":"/w"}` + "\n" +
				`{"type":"continued-in","timestamp":"2026-09-04T17:17:50.149Z","sessionId":"s","continuedInSessionId":"s2"}` + "\n" +
				`{"type":"content-replacement","sessionId":"s","replacements":[{"kind":"tool-result","toolUseId":"toolu_1","replacement":"Stored result preview..."}]}` + "\n" +
				`{"type":"marble-origami-snapshot","sessionId":"s","staged":[]}` + "\n" +
				`{"type":"agent-color","sessionId":"s","agentColor":"blue"}` + "\n",
			warnings: []string{"claude: claude-fable-5 refused the request (cyber); retried on claude-opus-4-8: Switched to Opus 4.8"}},
		{name: "a failed compaction is a warning",
			input: init + `{"type":"system","subtype":"status","status":"compacting","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"status","status":null,"compact_result":"failed","compact_error":"Conversation too long to summarize","session_id":"s"}` + "\n" + ok("0.01"),
			step: "ok", warnings: []string{"claude: compaction failed: Conversation too long to summarize"}},
		{name: "a container upload block is no part of the answer",
			input: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"container_upload","file_id":"file_011"},{"type":"text","text":"Loaded."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2}}` + "\n",
			step:  "ok"},
		{name: "a refusal's stop_details name its category and explanation",
			input: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"stop_reason":"refusal","stop_details":{"type":"refusal","category":"cyber","explanation":"This request triggered restrictions on violative cyber content."},"usage":{"input_tokens":10,"output_tokens":0}}` + "\n",
			step:  "error", perr: 1, stepErr: "(stop_reason refusal), category cyber: This request triggered restrictions on violative cyber content."},
		{name: "an answer the user stopped mid-stream (aborted) leaves the turn incomplete, though the result says success",
			input: init + `{"type":"assistant","message":{"id":"msg_a","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"The three causes are: first, the cache is"}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":9}},"parent_tool_use_id":null,"aborted":true,"session_id":"s"}` + "\n" + ok("0.01"),
			step:  "incomplete", stepErr: "interrupted", warnings: []string{"stopped mid-stream (aborted)"}},
		{name: "terminal_reason aborted_tools is incomplete",
			input: init + `{"type":"result","subtype":"success","is_error":false,"terminal_reason":"aborted_tools","result":"","session_id":"s","usage":{"input_tokens":1,"output_tokens":1}}` + "\n",
			step:  "incomplete", stepErr: "terminal_reason aborted_tools"},
		{name: "an aborted turn, then a turn that completes: ok",
			input: init + `{"type":"assistant","message":{"id":"msg_a","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"Let me"}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":2}},"parent_tool_use_id":null,"aborted":true,"session_id":"s"}` + "\n" +
				`{"type":"result","subtype":"success","is_error":false,"terminal_reason":"aborted_streaming","result":"","session_id":"s"}` + "\n" + ok("0.01"),
			step: "ok"},
		{name: "a plugin that failed to install is a warning; install progress, scheduled task notices and thinking estimates are ignored",
			input: init + `{"type":"system","subtype":"plugin_install","status":"started","uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"plugin_install","status":"failed","name":"acme-tools","error":"marketplace unreachable","uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"plugin_install","status":"completed","uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"scheduled_task_fire","content":"Claude resuming /loop wakeup","uuid":"u","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"thinking_tokens","estimated_tokens":120,"estimated_tokens_delta":20,"uuid":"u","session_id":"s"}` + "\n" + ok("0.01"),
			step: "ok", warnings: []string{"claude: plugin acme-tools failed to install: marketplace unreachable"}},
		{name: "streamed: the last message's stop_details",
			input: `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}` + "\n" +
				`data: {"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"type":"refusal","category":"bio","explanation":null}},"usage":{"output_tokens":0}}` + "\n" +
				`data: {"type":"message_stop"}` + "\n",
			step: "error", perr: 1, stepErr: "(stop_reason refusal), category bio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), Plugin, "claude", []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			out, res := plugintest.FromResult(r), r.Step
			if len(res.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines (%v), want none", res.Unmapped, r.SilentN, r.Silent)
			}
			_, results := out.Tools()
			for id, want := range tt.status {
				if got, _ := out.ResultStatus(id); got != want {
					t.Errorf("call %s: status %q, want %q", id, got, want)
				}
			}
			for _, r := range results {
				want, ok := tt.exit[r.CallID]
				if !ok {
					continue
				}
				if r.ExitCode == nil || *r.ExitCode != want {
					t.Errorf("call %s: exit code %v, want %d", r.CallID, r.ExitCode, want)
				}
				if r.Status != "ok" && r.Error == "" {
					t.Errorf("call %s: status %q without error text", r.CallID, r.Status)
				}
			}
			if tt.step != "" && res.Status != tt.step {
				t.Errorf("step status %q (%s), want %q", res.Status, res.Error, tt.step)
			}
			if !strings.Contains(res.Error, tt.stepErr) {
				t.Errorf("step error %q, want it to hold %q", res.Error, tt.stepErr)
			}
			for _, w := range tt.warnings {
				if !strings.Contains(strings.Join(res.Warnings, "\n"), w) {
					t.Errorf("no warning holds %q: %q", w, res.Warnings)
				}
			}
			if tt.cost != 0 && (res.CostUSD == nil || *res.CostUSD != tt.cost) {
				t.Errorf("cost %v, want %v", costOf(res.CostUSD), tt.cost)
			}
			if len(res.Errors) != tt.perr {
				t.Errorf("provider errors %v, want %d", res.Errors, tt.perr)
			}
		})
	}
}

// costOf is *c, or -1 when the cost is unset.
func costOf(c *float64) float64 {
	if c == nil {
		return -1
	}
	return *c
}

// TestBackgroundAgentEnd checks how a background agent's
// task_notification closes its child run: completed is ok, failed an
// error, stopped (TaskStop, the user) cancelled, each with its summary;
// and that a task_updated saying it was killed or failed closes it when
// no notification follows, once.
func TestBackgroundAgentEnd(t *testing.T) {
	const head = `{"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/w"}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_A","name":"Agent","input":{"description":"scan","prompt":"scan it","subagent_type":"general-purpose","run_in_background":true}}],"usage":{"input_tokens":3,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"s"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"Async agent launched"}]},"parent_tool_use_id":null,"session_id":"s","tool_use_result":{"isAsync":true,"status":"async_launched"}}
{"type":"system","subtype":"task_started","task_id":"t1","tool_use_id":"toolu_A","description":"scan","task_type":"local_agent","uuid":"u","session_id":"s"}
`
	notification := func(status string) string {
		return `{"type":"system","subtype":"task_notification","task_id":"t1","tool_use_id":"toolu_A","status":"` + status + `","output_file":"","summary":"Agent \"scan\" ` + status + `","uuid":"u","session_id":"s"}` + "\n"
	}
	updated := func(status string) string {
		return `{"type":"system","subtype":"task_updated","task_id":"t1","patch":{"status":"` + status + `","end_time":1790000000000},"uuid":"u","session_id":"s"}` + "\n"
	}
	for _, tt := range []struct{ name, lines, want, err string }{
		{"completed", notification("completed"), "ok", ""},
		{"failed", notification("failed"), "error", `Agent "scan" failed`},
		{"stopped", notification("stopped"), "cancelled", `Agent "scan" stopped`},
		// TaskStop: the notification may never come.
		{"killed without a notification", updated("running") + updated("killed"), "cancelled", "sub-agent killed"},
		{"failed without a notification", updated("failed"), "error", "sub-agent failed"},
		{"killed, then its notification", updated("killed") + notification("stopped"), "cancelled", "sub-agent killed"},
		{"completed patch waits for the notification", updated("completed") + notification("completed"), "ok", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := head + tt.lines +
				`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","total_cost_usd":0.1}` + "\n"
			out, _ := runState(t, in)
			closes := 0
			for _, it := range out.Sink.Items {
				if !it.Close {
					continue
				}
				closes++
				if it.Scope != "toolu_A" || it.CloseStatus != tt.want || it.CloseError != tt.err {
					t.Errorf("closed %q with %q %q, want toolu_A with %q %q", it.Scope, it.CloseStatus, it.CloseError, tt.want, tt.err)
				}
			}
			if closes != 1 {
				t.Errorf("%d scope closes, want 1", closes)
			}
		})
	}
}

// TestIterationModels checks that a request's model calls run on another
// model than its message's (an advisor_message; the message entry of a
// hop a server-side fallback declined) are written as usage-only
// messages of their own model, and are no part of the message's usage:
// each is priced at its own model, and the step's total is unchanged.
func TestIterationModels(t *testing.T) {
	it := func(typ, model string, in, out int) string {
		return `{"type":"` + typ + `","model":"` + model + `","input_tokens":` + strconv.Itoa(in) + `,"output_tokens":` + strconv.Itoa(out) + `,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}`
	}
	response := func(model string, iterations ...string) string {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1,"iterations":[` + strings.Join(iterations, ",") + `],"service_tier":"standard"}}` + "\n"
	}
	type mu struct {
		model   string
		in, out int64
	}
	for _, tt := range []struct {
		name  string
		input string
		want  []mu // each assistant message's model and usage, in order
	}{
		{"advisor", response("claude-sonnet-4-6", it("message", "claude-sonnet-4-6", 100, 10), it("advisor_message", "claude-opus-4-7", 120, 50), it("message", "claude-sonnet-4-6", 150, 20)),
			[]mu{{"claude-sonnet-4-6", 250, 30}, {"claude-opus-4-7", 120, 50}}},
		{"declined hop of a server-side fallback", response("claude-sonnet-4-6", it("message", "claude-opus-4-7", 300, 9), it("fallback_message", "claude-sonnet-4-6", 300, 24)),
			[]mu{{"claude-sonnet-4-6", 300, 24}, {"claude-opus-4-7", 300, 9}}},
		{"compaction on the message's model stays in its usage", response("claude-opus-4-7", it("compaction", "claude-opus-4-7", 6000, 500), it("message", "claude-opus-4-7", 700, 80)),
			[]mu{{"claude-opus-4-7", 6700, 580}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, tt.input)
			var got []mu
			var in, outTok int64
			for _, x := range out.Sink.Items {
				if x.Event == nil || x.Event.Type != transcript.MessageAssistant {
					continue
				}
				m := x.Event.Message()
				if m.Usage == nil || m.Usage.InputTokens == nil || m.Usage.OutputTokens == nil {
					t.Fatalf("message of %s without usage", m.Model)
				}
				got = append(got, mu{m.Model, *m.Usage.InputTokens, *m.Usage.OutputTokens})
				in, outTok = in+*m.Usage.InputTokens, outTok+*m.Usage.OutputTokens
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("messages %v, want %v", got, tt.want)
			}
			u := out.Result.Usage
			if u == nil || *u.InputTokens != in || *u.OutputTokens != outTok || u.ServiceTier != "standard" {
				t.Errorf("step usage %+v, want the messages' sum %d in, %d out, tier standard", u, in, outTok)
			}
		})
	}
}
