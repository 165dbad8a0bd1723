//go:build !wasip1

package cline_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
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

// clineFacts reads the last version of the conversation and of the UI's
// messages in a stream.
func clineFacts(raw []byte) facts {
	var api, ui []json.RawMessage
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
			var obj struct{ Messages []json.RawMessage }
			if json.Unmarshal(l, &obj) == nil && obj.Messages != nil {
				api = obj.Messages
			}
			continue
		}
		switch {
		case kind == "ui_messages.json":
			ui = doc
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
	for _, m := range ui {
		var e struct{ Say, Text string }
		if json.Unmarshal(m, &e) != nil || e.Say != "api_req_started" && e.Say != "api_req_finished" {
			continue
		}
		var r struct{ Cost *float64 }
		if json.Unmarshal([]byte(e.Text), &r) != nil {
			continue
		}
		if r.Cost != nil {
			fx.cost += *r.Cost
			fx.costs++
		}
	}
	return fx
}
