//go:build !wasip1

package droid_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/droid"
	"github.com/twasm/twasm/transcript"
)

// TestExecCallNotRun: droid exec answers a call it did not run with the
// error "Error: tool execution cancelled". When the run lacked the
// permission the call needed (droid exec fails fast: "Exec ended early:
// insufficient permission to proceed. Re-run with --auto medium or --auto
// high.", Factory's documentation of droid exec and its autonomy levels;
// the error the vibe-kanban droid executor's test data shows, "Insufficient
// permission to proceed"), the call was refused: denied. Otherwise it was
// stopped before it finished: cancelled. Neither ran and failed: before,
// it read as an error.
func TestExecCallNotRun(t *testing.T) {
	events := func(lines ...string) (raw string) {
		for _, l := range lines {
			raw += l + "\n"
		}
		return raw
	}
	const (
		initL     = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":["Read","Execute"],"model":"claude-sonnet-4-5-20250929"}`
		user      = `{"type":"message","role":"user","id":"m1","text":"delete the build","timestamp":1762517060816,"session_id":"s1"}`
		call      = `{"type":"tool_call","id":"call_1","messageId":"m2","toolId":"Execute","toolName":"Execute","parameters":{"command":"rm -rf build","riskLevel":"high"},"timestamp":1762517062500,"session_id":"s1"}`
		cancelled = `{"type":"tool_result","id":"call_1","messageId":"m3","toolId":"Execute","isError":true,"error":{"type":"tool_error","message":"Error: tool execution cancelled"},"timestamp":1762517063000,"session_id":"s1"}`
		asValue   = `{"type":"tool_result","id":"call_1","messageId":"m3","toolId":"Execute","isError":true,"value":"Error: tool execution cancelled","timestamp":1762517063000,"session_id":"s1"}`
		failed    = `{"type":"tool_result","id":"call_1","messageId":"m3","toolId":"Execute","isError":true,"error":{"type":"tool_error","message":"Error: Command failed (exit code: 1)"},"timestamp":1762517063000,"session_id":"s1"}`
		endedPerm = `{"type":"result","subtype":"failure","is_error":true,"duration_ms":900,"num_turns":1,"result":"Exec ended early: insufficient permission to proceed. Re-run with --auto medium or --auto high.","session_id":"s1"}`
		errPerm   = `{"type":"error","source":"cli","message":"Exec ended early: insufficient permission to proceed. Re-run with --auto high.","timestamp":1762517063500}`
		answer    = `{"type":"message","role":"assistant","id":"m4","text":"Stopped.","timestamp":1762517064000,"session_id":"s1"}`
		done      = `{"type":"completion","finalText":"Stopped.","numTurns":2,"durationMs":3200,"session_id":"s1","timestamp":1762517064100}`
		earlier   = `{"type":"tool_result","id":"call_0","messageId":"m1b","toolId":"Create","isError":true,"error":{"type":"tool_error","message":"Insufficient permission to proceed"},"timestamp":1762517061000,"session_id":"s1"}`
		call0     = `{"type":"tool_call","id":"call_0","messageId":"m1a","toolId":"Create","toolName":"Create","parameters":{"file_path":"/w/a.txt","content":"x"},"timestamp":1762517060900,"session_id":"s1"}`
	)
	tests := []struct {
		name, raw, status string
	}{
		{"the run ended for want of permission", events(initL, user, call, cancelled, endedPerm), "denied"},
		{"an error event says so", events(initL, user, call, cancelled, errPerm), "denied"},
		{"said in the value", events(initL, user, call, asValue, endedPerm), "denied"},
		{"a permission failure before it", events(initL, user, call0, earlier, call, cancelled, answer, done), "denied"},
		{"stopped, the run went on", events(initL, user, call, cancelled, answer, done), "cancelled"},
		{"stopped, the output ends there", events(initL, user, call, cancelled), "cancelled"},
		{"a command that ran and failed", events(initL, user, call, failed, answer, done), "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), droid.Plugin, "droid", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			var got *transcript.ToolPayload
			for _, e := range r.Events {
				if p := e.Tool(); p != nil && e.Type == transcript.ToolResult && p.CallID == "call_1" {
					if got != nil {
						t.Errorf("call_1 has two results")
					}
					got = p
				}
			}
			if got == nil {
				t.Fatal("no result for call_1")
			}
			if got.Status != tt.status {
				t.Errorf("status %q (error %q), want %q", got.Status, got.Error, tt.status)
			}
			if got.Status != "error" && got.Error != "Error: tool execution cancelled" {
				t.Errorf("error %q, want the tool's words", got.Error)
			}
			if r.SilentN > 0 {
				t.Errorf("lines unaccounted for: %v", r.Silent)
			}
		})
	}
}
