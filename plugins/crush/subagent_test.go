//go:build !wasip1

package crush_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
)

// TestFailedSubAgentResult: Crush before 2025-11 wrote the result of a
// tool whose run returned an error (the agent tool's "error generating
// agent", a sub-agent's provider error) as an empty content without
// is_error (internal/llm/agent/agent.go, processGeneration's tool loop);
// an agent or agentic_fetch call answered so ran a sub-agent that failed
// (testdata/captures/crush/quay_*: its sub-agent ended on a 413) and is an
// error, not ok. The sub-agent's text, and another tool's empty output,
// stay ok; the result's name is empty in those versions (the call's is
// used).
func TestFailedSubAgentResult(t *testing.T) {
	tests := []struct {
		name, tool, resultName, content string
		isError                         bool
		status                          string
	}{
		{"agent, empty result, no name", "agent", "", "", false, "error"},
		{"agent, empty result, named", "agent", "agent", "", false, "error"},
		{"agent, blank result", "agent", "", " \n", false, "error"},
		{"agentic_fetch, empty result", "agentic_fetch", "agentic_fetch", "", false, "error"},
		{"agent, its answer", "agent", "", "The parameter is type.", false, "ok"},
		{"agent, no response", "agent", "", "no response", true, "error"},
		{"another tool, empty output", "mcp_x", "", "", false, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := json.Marshal(tt.content)
			raw := fmt.Sprintf(`{"$twasm":"row","table":"messages","key":"m1","version":1,"row":{"time_ms":1000,"id":"m1","session_id":"s","role":"assistant","parts":[{"type":"tool_call","data":{"id":"c1","name":%q,"input":"{\"prompt\":\"Find it\"}","type":"tool_use","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1}}],"model":"m","provider":"p","created_at":1,"updated_at":1,"finished_at":1}}
{"$twasm":"row","table":"messages","key":"m2","version":2,"row":{"time_ms":2000,"id":"m2","session_id":"s","role":"tool","parts":[{"type":"tool_result","data":{"tool_call_id":"c1","name":%q,"content":%s,"metadata":"","is_error":%t}},{"type":"finish","data":{"reason":"stop","time":0}}],"model":"","created_at":2,"updated_at":2,"finished_at":null}}
`, tt.tool, tt.resultName, text, tt.isError)
			o := plugintest.Run(t, crush.Plugin, []byte(raw), normalize.Options{Provider: "crush"})
			if st, ok := o.ResultStatus("c1"); st != tt.status {
				t.Errorf("status %q (a result: %v), want %q", st, ok, tt.status)
			}
		})
	}
}
