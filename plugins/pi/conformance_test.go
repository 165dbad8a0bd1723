//go:build !wasip1

package pi_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input or real capture
// (TestGolden) against facts read from the raw input apart from the
// plugin (with encoding/json): every tool call a tool.call, every piece
// of model text in an assistant block, the step's cost the sum of the
// responses' own (the tokens are TestSessionUsageMatchesRaw's, over the
// same inputs). A real capture may leave nothing unmapped (sdktest: it has no
// expectation file).
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := piFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	if fx.costs > 0 && (o.Result.CostUSD == nil || abs(*o.Result.CostUSD-fx.cost) > 1e-9) {
		t.Errorf("cost %v, the responses state %v", show(o.Result.CostUSD), fx.cost)
	}
}

func show(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// facts are what a capture states, read apart from the plugin.
type facts struct {
	calls, texts []string
	cost         float64
	costs        int
}

// forkCopy tells the entries a fork copied from the session it was
// forked from: after a header naming that session (parentSession, v1
// branchedFrom), the entries dated before the header, up to the first
// dated entry that is not (pi-mono's SessionManager.createBranchedSession
// and forkFrom copy the entries as they were after a new header dated
// when the fork was made). They are the parent's, not the fork's.
type forkCopy struct {
	started string
	open    bool
}

func (c *forkCopy) copied(line []byte) bool {
	var e struct{ Type, Timestamp, ParentSession, BranchedFrom string }
	if json.Unmarshal(line, &e) != nil {
		return false
	}
	switch {
	case e.Type == "session":
		c.started, c.open = e.Timestamp, e.ParentSession != "" || e.BranchedFrom != ""
		return false
	case !c.open || c.started == "" || e.Timestamp == "":
		return false
	case e.Timestamp < c.started:
		return true
	}
	c.open = false
	return false
}

// piFacts reads the step's own messages (entries and message_end events;
// not a sub-agent's, which stay in its child run, nor the entries a fork
// copied from its parent, forkCopy).
// An entry id seen before is the same entry again (a file copied after
// itself).
func piFacts(raw []byte) facts {
	var fx facts
	seen := map[string]bool{}
	var fork forkCopy
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if fork.copied(l) {
			continue
		}
		var e struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Message struct {
				Role    string `json:"role"`
				Content json.RawMessage
				Usage   *struct {
					Cost *struct{ Total *float64 }
				}
			} `json:"message"`
		}
		if json.Unmarshal(l, &e) != nil || (e.Type != "message" && e.Type != "message_end") || e.Message.Role != "assistant" || seen[e.ID] {
			continue
		}
		if e.ID != "" {
			seen[e.ID] = true
		}
		var parts []struct{ Type, Text, Thinking, ID string }
		_ = json.Unmarshal(e.Message.Content, &parts)
		for _, p := range parts {
			switch p.Type {
			case "toolCall":
				fx.calls = append(fx.calls, p.ID)
			case "text":
				fx.texts = append(fx.texts, p.Text)
			case "thinking":
				fx.texts = append(fx.texts, p.Thinking)
			}
		}
		if u := e.Message.Usage; u != nil {
			if u.Cost != nil && u.Cost.Total != nil {
				fx.cost += *u.Cost.Total
				fx.costs++
			}
		}
	}
	return fx
}
