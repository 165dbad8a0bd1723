//go:build !wasip1

package crush_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input or real capture
// (TestGolden) against facts read from the raw rows apart from the
// plugin (with encoding/json): every tool_call part a tool.call, every
// assistant text in an assistant block, every result Crush marked
// is_error not ok, and the step's cost the session's cost less its
// children's.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := crushFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	o.CheckFailed(t, fx.failed)
	if fx.cost != nil {
		got := o.Result.CostUSD
		if got == nil || math.Abs(*got-*fx.cost) > 1e-9 {
			t.Errorf("cost: %v, the session states %v", got, *fx.cost)
		}
	}
}

// facts are what a session's rows state, read apart from the plugin.
type facts struct {
	calls, texts []string
	failed       map[string]bool // call id -> is_error
	cost         *float64
}

func crushFacts(raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Twasm string `json:"$twasm"`
			Table string `json:"table"`
			Row   struct {
				Role  string `json:"role"`
				Parts []struct {
					Type string `json:"type"`
					Data struct {
						Text       string `json:"text"`
						ID         string `json:"id"`
						ToolCallID string `json:"tool_call_id"`
						IsError    bool   `json:"is_error"`
					} `json:"data"`
				} `json:"parts"`
				Cost         *float64 `json:"cost"`
				ChildrenCost *float64 `json:"children_cost"`
			} `json:"row"`
		}
		if json.Unmarshal(l, &e) != nil || e.Twasm != "row" {
			continue
		}
		if e.Table == "sessions" && e.Row.Cost != nil {
			c := *e.Row.Cost
			if e.Row.ChildrenCost != nil {
				c = math.Max(0, c-*e.Row.ChildrenCost)
			}
			fx.cost = &c
		}
		if e.Table != "messages" {
			continue
		}
		for _, p := range e.Row.Parts {
			switch p.Type {
			case "text":
				if e.Row.Role == "assistant" {
					fx.texts = append(fx.texts, p.Data.Text)
				}
			case "tool_call":
				fx.calls = append(fx.calls, p.Data.ID)
			case "tool_result":
				if p.Data.IsError {
					fx.failed[p.Data.ToolCallID] = true
				}
			}
		}
	}
	return fx
}
