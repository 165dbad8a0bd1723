//go:build !wasip1

package cline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestCommandOutcomes: an execute_command result states the command's
// outcome on its first line; "Command timed out after 30 seconds. Running
// in background." (Cline stopped waiting, the command goes on) states
// none yet: cancelled, never ok. Modelled on a real Cline task of 2026
// (api_conversation_history.json, native tool calls; five such results
// in one task), written for the test.
func TestCommandOutcomes(t *testing.T) {
	tests := []struct {
		name, output, status, err string
		exit                      int64
	}{
		{"ok", "Command executed successfully (exit code 0).\nOutput:\nok", "", "", 0}, // exit 0, no status word: read as ok
		{"failed", "Command failed with exit code 2.\nOutput:\nno such file", "error", "exit code 2", 2},
		{"timed out", "Command timed out after 30 seconds. Running in background.\nLog file: /tmp/cline/background-1.log\nOutput so far:\nstarting", "cancelled", "Command timed out after 30 seconds. Running in background.", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := `[{"role":"user","content":[{"type":"text","text":"<task>\nstart the proxy\n</task>"}],"ts":1777419500000},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"tooluse_1","name":"execute_command","input":{"command":"cloud-sql-proxy","requires_approval":false}}],"ts":1777419510000},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tooluse_1","content":[{"type":"text","text":` + jsonString(tt.output) + `}]}],"ts":1777419540000}]` + "\n"
			r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			var res *transcript.ToolPayload
			for _, e := range r.Events {
				if p := e.Event.Tool(); p != nil && e.Event.Type == transcript.ToolResult {
					res = p
				}
			}
			if res == nil {
				t.Fatal("no tool.result")
			}
			if res.Status != tt.status || res.Error != tt.err {
				t.Errorf("status %q error %q, want %q %q", res.Status, res.Error, tt.status, tt.err)
			}
			var exit int64 = -1
			if res.ExitCode != nil {
				exit = int64(*res.ExitCode)
			}
			if exit != tt.exit {
				t.Errorf("exit code %d, want %d", exit, tt.exit)
			}
		})
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
