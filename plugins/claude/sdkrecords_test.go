//go:build !wasip1

package claude

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSDKRecords28: records of `claude -p --output-format stream-json`
// as the Agent SDK 0.3.332 declares them (sdk.d.ts: SDKResultError,
// SDKSessionWritesLostMessage, SDKControlRequestProgressMessage,
// SDKWorkerShuttingDownMessage). Before: an error result's errors list
// (error_max_turns, error_during_execution: result absent) was the step's
// error as its JSON (`["Reached maximum number of turns (2)"]`); a
// session_writes_lost (the CLI could not write its session log: the disk
// was full) was only an unmapped line; a side request's API retry
// (control_request_progress, status api_retry) was unmapped, not an
// error; worker_shutting_down was unmapped.
func TestSDKRecords28(t *testing.T) {
	const (
		ids  = `"uuid":"u1","session_id":"s1"`
		init = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","model":"claude-sonnet-4-5","claude_code_version":"2.1.340","uuid":"u0"}`
	)
	result := func(subtype, errs string) string {
		return `{"type":"result","subtype":"` + subtype + `","duration_ms":10,"duration_api_ms":9,"is_error":false,"num_turns":2,"stop_reason":null,"total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5},"modelUsage":{},"permission_denials":[],"errors":` + errs + `,` + ids + `}`
	}
	ok := `{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":10,"output_tokens":5},` + ids + `}`
	tests := []struct {
		name     string
		lines    []string
		status   string
		err      string
		warnings []string
		errors   []string
	}{
		{"error_max_turns, is_error false", []string{init, result("error_max_turns", `["Reached maximum number of turns (2)"]`)},
			"error", "Reached maximum number of turns (2)", nil, []string{"Reached maximum number of turns (2)"}},
		{"error_during_execution, two errors", []string{init, result("error_during_execution", `["first failure","second failure"]`)},
			"error", "first failure; second failure", nil, []string{"first failure; second failure"}},
		{"error without errors", []string{init, result("error_max_budget_usd", `[]`)},
			"error", "error_max_budget_usd", nil, []string{"error_max_budget_usd"}},
		{"session writes lost after the result", []string{init, ok,
			`{"type":"system","subtype":"session_writes_lost","error_code":"ENOSPC","lost":["transcript","global_config"],"transcript_session_ids":["s1"],` + ids + `}`},
			"ok", "", []string{"claude: session writes lost (ENOSPC): transcript, global_config not written to disk"}, nil},
		{"a side request retried", []string{init,
			`{"type":"system","subtype":"control_request_progress","request_id":"r1","status":"started",` + ids + `}`,
			`{"type":"system","subtype":"control_request_progress","request_id":"r1","status":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":529,` + ids + `}`, ok},
			"ok", "", nil, []string{"API request failed with status 529; retry 1 of 10"}},
		{"worker shutting down", []string{init, ok, `{"type":"system","subtype":"worker_shutting_down","reason":"update",` + ids + `}`},
			"ok", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, strings.Join(tt.lines, "\n")+"\n")
			r := out.Result
			if r.Status != tt.status || r.Error != tt.err {
				t.Errorf("status %s (%q), want %s (%q)", r.Status, r.Error, tt.status, tt.err)
			}
			if !slices.Equal(r.Warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", r.Warnings, tt.warnings)
			}
			var errs []string
			for _, e := range r.Errors {
				errs = append(errs, e.Message)
			}
			if !slices.Equal(errs, tt.errors) {
				t.Errorf("errors %q, want %q", errs, tt.errors)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v, want none", fmt.Sprint(r.Unmapped))
			}
		})
	}
}

// TestServerToolErrorText: a server tool's error object (the Messages
// API's web_search_tool_result_error, web_fetch_tool_result_error,
// code_execution_tool_result_error, text_editor_code_execution_
// tool_result_error with its error_message) is the result's error as its
// type and code, not the object's JSON (before:
// `{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}`).
// The output keeps the object as the API sent it.
func TestServerToolErrorText(t *testing.T) {
	body := func(tool, result, content string) string {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"` + tool + `","input":{}},{"type":"` + result + `","tool_use_id":"srvtoolu_1","content":` + content + `},{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}` + "\n"
	}
	tests := []struct {
		name, in, err string
	}{
		{"web search", body("web_search", "web_search_tool_result", `{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}`),
			"web_search_tool_result_error: max_uses_exceeded"},
		{"web fetch", body("web_fetch", "web_fetch_tool_result", `{"type":"web_fetch_tool_result_error","error_code":"url_not_accessible"}`),
			"web_fetch_tool_result_error: url_not_accessible"},
		{"text editor, with its message", body("text_editor_code_execution", "text_editor_code_execution_tool_result", `{"type":"text_editor_code_execution_tool_result_error","error_code":"invalid_tool_input","error_message":"path must be absolute"}`),
			"text_editor_code_execution_tool_result_error: invalid_tool_input: path must be absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, tt.in)
			_, results := out.Tools()
			if len(results) != 1 {
				t.Fatalf("%d results, want 1", len(results))
			}
			if r := results[0]; r.Status != "error" || r.Error != tt.err {
				t.Errorf("result %s (%q), want error (%q)", r.Status, r.Error, tt.err)
			}
		})
	}
}
