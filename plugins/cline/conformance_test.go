//go:build !wasip1

package cline_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input or real capture
// (TestGolden) against facts read from the raw input apart from the
// plugin (with encoding/json, from the last version of each document):
// every native tool_use a tool.call, the step's cost the sum of the UI's
// requests', each once (the tokens are TestSessionUsageMatchesRaw's, over
// the same inputs). A real capture may leave nothing unmapped (sdktest:
// it has no expectation file).
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := clineFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	if fx.costs > 0 && (o.Result.CostUSD == nil || math.Abs(*o.Result.CostUSD-fx.cost) > 1e-9) {
		t.Errorf("cost %v, the requests state %v", o.Result.CostUSD, fx.cost)
	}
}

type facts struct {
	calls []string
	cost  float64
	costs int
}

// ownMessages are the messages of a sessions folder's document that its
// session said itself: a message dated before the session started (its
// id is Date.now() in milliseconds, "_", a suffix) was copied by /fork
// from the session it was forked from.
func ownMessages(id string, msgs []json.RawMessage) []json.RawMessage {
	ms, _, _ := strings.Cut(id, "_")
	start, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || len(ms) != 13 || !strings.Contains(id, "_") {
		return msgs
	}
	var own []json.RawMessage
	for _, m := range msgs {
		var msg struct{ Ts int64 }
		if json.Unmarshal(m, &msg) == nil && msg.Ts > 0 && msg.Ts < start {
			continue
		}
		own = append(own, m)
	}
	return own
}

// clineFacts reads the last version of the conversation and every version
// of the UI's messages in a stream.
func clineFacts(raw []byte) facts {
	var api []json.RawMessage
	var ui [][]json.RawMessage // the UI's messages, each version
	kind := ""
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var f struct {
			Type string `json:"$twasm"`
			Path string `json:"path"`
		}
		if json.Unmarshal(l, &f) == nil && f.Type != "" {
			kind = filepath.Base(f.Path)
			continue
		}
		var doc []json.RawMessage
		if json.Unmarshal(l, &doc) != nil {
			var obj struct {
				SessionID string `json:"sessionId"`
				Messages  []json.RawMessage
			}
			if json.Unmarshal(l, &obj) == nil && obj.Messages != nil {
				api = ownMessages(obj.SessionID, obj.Messages)
			}
			continue
		}
		switch {
		case kind == "ui_messages.json":
			ui = append(ui, doc) // every version: a request is told by its ts below
		case kind == "api_conversation_history.json" || kind == "" && bytes.Contains(l, []byte(`"role"`)):
			api = doc
		}
	}
	var fx facts
	for _, m := range api {
		var msg struct {
			Role    string
			Content json.RawMessage
		}
		_ = json.Unmarshal(m, &msg)
		var parts []struct{ Type, ID string }
		_ = json.Unmarshal(msg.Content, &parts)
		for _, p := range parts {
			if msg.Role == "assistant" && p.Type == "tool_use" && p.ID != "" {
				fx.calls = append(fx.calls, p.ID)
			}
		}
	}
	// A request's cost is its element's last version (the element keeps
	// its ts); one a checkpoint restore cut from the document was made,
	// and counts. Cline's deleted_api_reqs sums the requests a restore
	// cut away (Roo Code's api_req_deleted the same; Roo's
	// condense_context states its condensing request's cost): counted as
	// Cline's getApiMetrics does (the golden
	// holding one has one version of the UI; TestDeletedRequests checks
	// the sum against the requests read before), as is subagent_usage,
	// the sub-agents' requests a use_subagents call ran.
	costs := map[string]float64{}
	for _, version := range ui {
		for i, m := range version {
			var e struct {
				Ts              int64
				Say, Text       string
				ContextCondense struct{ Cost *float64 }
			}
			if json.Unmarshal(m, &e) != nil {
				continue
			}
			var r struct{ Cost *float64 }
			switch e.Say {
			case "api_req_started", "api_req_finished", "deleted_api_reqs", "api_req_deleted", "subagent_usage":
				if json.Unmarshal([]byte(e.Text), &r) != nil {
					continue
				}
			case "condense_context":
				// Roo Code's condensing request: its cost, which Roo's
				// task total adds.
				r.Cost = e.ContextCondense.Cost
			}
			if r.Cost == nil {
				continue
			}
			key := "#" + strconv.Itoa(i)
			if e.Ts > 0 {
				key = strconv.FormatInt(e.Ts, 10)
			}
			costs[key] = *r.Cost
		}
	}
	for _, c := range costs {
		fx.cost += c
		fx.costs++
	}
	return fx
}
