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
// ok, and the step's tokens the sums the log states for the session's
// own model calls (the Kimi CLI's StatusUpdate outside sub-agents; Kimi
// Code's usage.record, else step.end for a step no record follows).
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := wireFacts(t, r.Raw)
	o.CheckCalls(t, fx.calls)
	o.CheckFailed(t, fx.failed)
	u := o.Usage()
	if got := [4]int64{u.UncachedInput, u.Output, u.CacheRead, u.CacheWrite}; got != fx.usage {
		t.Errorf("usage (uncached input, output, cache read, cache write) %v, the log states %v", got, fx.usage)
	}
}

type facts struct {
	calls  []string
	failed map[string]bool
	usage  [4]int64 // uncached input, output, cache read, cache write
}

type tokens struct {
	Other    int64 `json:"input_other"`
	Out      int64 `json:"output"`
	Read     int64 `json:"input_cache_read"`
	Creation int64 `json:"input_cache_creation"`
	COther   int64 `json:"inputOther"`
	CRead    int64 `json:"inputCacheRead"`
	CCreate  int64 `json:"inputCacheCreation"`
}

func (u *tokens) add(to *[4]int64) {
	to[0] += u.Other + u.COther
	to[1] += u.Out
	to[2] += u.Read + u.CRead
	to[3] += u.Creation + u.CCreate
}

func wireFacts(t *testing.T, raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	var pending *tokens // a step.end's usage no usage.record followed yet
	flush := func() {
		if pending != nil {
			pending.add(&fx.usage)
			pending = nil
		}
	}
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
			Usage *tokens `json:"token_usage"`
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
		case "StatusUpdate":
			if p.Usage != nil && !sub {
				p.Usage.add(&fx.usage)
			}
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
				Type       string  `json:"type"`
				ToolCallID string  `json:"toolCallId"`
				Usage      *tokens `json:"usage"`
				Result     struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			} `json:"event"`
			Usage *tokens `json:"usage"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if r.Message != nil && r.Message.Type != "" {
			visit(*r.Message, false)
			continue
		}
		switch r.Type {
		case "usage.record":
			pending = nil
			if r.Usage != nil {
				r.Usage.add(&fx.usage)
			}
		case "context.append_loop_event":
			switch r.Event.Type {
			case "tool.call":
				fx.calls = append(fx.calls, r.Event.ToolCallID)
			case "tool.result":
				fx.failed[r.Event.ToolCallID] = r.Event.Result.IsError
			case "step.begin":
				flush()
			case "step.end":
				flush()
				pending = r.Event.Usage
			}
		case "turn.prompt", "turn.ended":
			flush()
		}
	}
	flush()
	return fx
}
