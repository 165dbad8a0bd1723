//go:build !wasip1

package kimi_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a wire log among the golden inputs and the
// captures (TestGolden) against facts read from the raw lines apart from
// the plugin (with encoding/json): every tool call of the session a
// tool.call, every result the log marks an error not ok and every other
// ok. The step's tokens are TestSessionUsageMatchesRaw's, over the same
// inputs.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := wireFacts(t, r.Raw)
	o.CheckCalls(t, fx.calls)
	o.CheckFailed(t, fx.failed)
}

type facts struct {
	calls  []string
	failed map[string]bool
}

func wireFacts(t *testing.T, raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	type legacy struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	var visit func(m legacy, sub bool)
	visit = func(m legacy, sub bool) {
		var p struct {
			ID         string `json:"id"`
			ToolCallID string `json:"tool_call_id"`
			RV         struct {
				IsError bool `json:"is_error"`
			} `json:"return_value"`
			Event *legacy `json:"event"`
		}
		_ = json.Unmarshal(m.Payload, &p)
		switch m.Type {
		case "ToolCall":
			if !sub {
				fx.calls = append(fx.calls, p.ID)
			}
		case "ToolResult":
			fx.failed[p.ToolCallID] = p.RV.IsError
		case "SubagentEvent":
			if p.Event != nil {
				visit(*p.Event, true)
			}
		}
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var r struct {
			Type    string  `json:"type"`
			Message *legacy `json:"message"`
			Event   struct {
				Type       string `json:"type"`
				ToolCallID string `json:"toolCallId"`
				Result     struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			} `json:"event"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if r.Message != nil && r.Message.Type != "" {
			visit(*r.Message, false)
			continue
		}
		switch r.Type {
		case "context.append_loop_event":
			switch r.Event.Type {
			case "tool.call":
				fx.calls = append(fx.calls, r.Event.ToolCallID)
			case "tool.result":
				fx.failed[r.Event.ToolCallID] = r.Event.Result.IsError
			}
		}
	}
	return fx
}
