//go:build !wasip1

package goose_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/transcript"
)

// TestResponseStoredBeforeRequest: Goose can store a tool's response
// before the assistant message that requested it (a real export,
// testdata/captures/goose/convergeai_export_2026-04_mcp_response_before_request:
// the response's user message, then the request's assistant message,
// created 8 s later). The response answers that call: one call, answered
// with its outcome and the request's tool name, nothing dangling and no
// call synthesized from the result. Before, the result came first, the
// host made a call named "unknown" of it, and the real request, an id
// already answered, was dropped: its tool's name lost.
func TestResponseStoredBeforeRequest(t *testing.T) {
	prompt := msgRow(1, "user", `[{"type":"text","text":"go"}]`, "")
	req := func(id int, call string) string {
		return msgRow(id, "assistant", `[{"type":"toolRequest","id":"`+call+`","toolCall":{"status":"success","value":{"name":"ext__distill","arguments":{"ref":"main"}}}}]`, "")
	}
	resp := func(id int, call, value string) string {
		return msgRow(id, "user", `[{"type":"toolResponse","id":"`+call+`","toolResult":`+value+`}]`, "")
	}
	okValue := `{"status":"success","value":{"content":[{"type":"text","text":"distilled"}],"isError":false}}`
	failValue := `{"status":"error","error":"Tool call failed: timeout"}`
	answer := msgRow(9, "assistant", `[{"type":"text","text":"done"}]`, "")
	for _, tc := range []struct {
		name     string
		lines    []string
		status   string // c1's result status
		output   string // c1's output, or its error when it failed
		calls    int    // tool.call events
		dangling []string
		warn     string // a warning that must be there ("" none about c1)
		tool     string // c1's name, on its call and its result
	}{
		{"in order", []string{prompt, req(2, "c1"), resp(3, "c1", okValue), answer}, "ok", "distilled", 1, nil, "", "ext__distill"},
		{"the response stored first", []string{prompt, resp(2, "c1", okValue), req(3, "c1"), answer}, "ok", "distilled", 1, nil, "", "ext__distill"},
		{"a failed response stored first", []string{prompt, resp(2, "c1", failValue), req(3, "c1"), answer}, "error", "Tool call failed: timeout", 1, nil, "", "ext__distill"},
		{"a response whose request never comes: kept, its call synthesized", []string{prompt, resp(2, "c1", okValue), answer}, "ok", "distilled", 1, nil, "had no tool call", "unknown"},
		{"one stored first, the other in order", []string{prompt, resp(2, "c1", okValue), req(3, "c1"), req(4, "c2"), resp(5, "c2", okValue), answer}, "ok", "distilled", 2, nil, "", "ext__distill"},
		{"a request answered by no response dangles", []string{prompt, resp(2, "c1", okValue), req(3, "c1"), req(4, "c2")}, "ok", "distilled", 2, []string{"c2"}, "", "ext__distill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			facts := `{"$twasm":"source","store":"Goose","path":"sessions.db","name":"sessions.db","size":1,"mtime":"2025-11-02T10:00:00Z","session":"20251102_1"}`
			session := `{"$twasm":"row","table":"sessions","key":"20251102_1","version":1,"row":{"version":1,"id":"20251102_1","working_dir":"/p","model_config_json":{"model_name":"claude-sonnet-4-5"},"parent_session_id":null}}`
			raw := strings.Join(append([]string{facts, session}, tc.lines...), "\n") + "\n"
			o := plugintest.Run(t, goose.Plugin, []byte(raw), normalize.Options{Provider: "goose"})
			var calls, results []*transcript.ToolPayload
			for _, it := range o.Sink.Items {
				switch {
				case it.Event == nil:
				case it.Event.Type == transcript.ToolCall:
					calls = append(calls, it.Event.Tool())
				case it.Event.Type == transcript.ToolResult && it.Event.Tool().CallID == "c1":
					results = append(results, it.Event.Tool())
				}
			}
			if len(calls) != tc.calls || calls[0].CallID != "c1" || calls[0].Name != tc.tool {
				var got []string
				for _, c := range calls {
					got = append(got, c.CallID+" "+c.Name)
				}
				t.Fatalf("calls %q, want %d, the first c1 %s", got, tc.calls, tc.tool)
			}
			if len(results) != 1 {
				t.Fatalf("%d results of c1, want 1", len(results))
			}
			r := results[0]
			got := r.Output
			if r.Status != "ok" {
				got = r.Error
			}
			if r.Status != tc.status || got != tc.output || r.Name != tc.tool {
				t.Errorf("c1's result: status %q, text %q, name %q; want %q, %q, %s", r.Status, got, r.Name, tc.status, tc.output, tc.tool)
			}
			if strings.Join(o.Result.Dangling, ",") != strings.Join(tc.dangling, ",") {
				t.Errorf("dangling %q, want %q", o.Result.Dangling, tc.dangling)
			}
			warned := false
			for _, w := range o.Result.Warnings {
				if strings.Contains(w, "c1") {
					warned = warned || tc.warn != "" && strings.Contains(w, tc.warn)
					if tc.warn == "" {
						t.Errorf("warning about c1: %s", w)
					}
				}
			}
			if tc.warn != "" && !warned {
				t.Errorf("warnings %q, want one saying %q", o.Result.Warnings, tc.warn)
			}
		})
	}
}
