//go:build !wasip1

package opencode_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks a golden input's run (TestGolden) against facts
// read from the raw input apart from the plugin (with encoding/json), the
// last version of each part by its id: every tool part past pending a
// tool.call, every assistant text (not ignored) in an assistant block, the step's
// cost the sum of the step-finish parts' (none without one), and nothing unmapped. The
// step's tokens are checked by TestSessionUsageMatchesRaw, over the
// same inputs. A message created before its session was (Session.fork's
// copy of the parent's) is the parent's: none of its parts is a fact of
// this run.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := openCodeFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	switch {
	case fx.steps == 0 && o.Result.CostUSD != nil:
		t.Errorf("cost %v, no step states one", *o.Result.CostUSD)
	case fx.steps > 0 && (o.Result.CostUSD == nil || math.Abs(*o.Result.CostUSD-fx.cost) > 1e-12):
		t.Errorf("cost %v, the steps state %v", o.Result.CostUSD, fx.cost)
	}
	if len(o.Result.Unmapped) != 0 {
		t.Errorf("unmapped %v", o.Result.Unmapped)
	}
}

type facts struct {
	calls, texts []string
	cost         float64
	steps        int // step-finish parts: none states no cost
}

type ocPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Ignored bool   `json:"ignored"`
	CallID  string `json:"callID"`
	State   struct {
		Status string `json:"status"`
	} `json:"state"`
	Cost float64 `json:"cost"`
}

// exportPart is a part of an opencode export document, with its
// message's role.
type exportPart struct {
	user bool
	raw  json.RawMessage
}

// exportParts reads raw as the output of opencode export ({info,
// messages: [{info, parts}]}, one document): the parts of the messages
// not created before the session was (a fork's copies of its parent's),
// in order. ok is false when raw is no such document.
func exportParts(raw []byte) (parts []exportPart, ok bool) {
	type created struct {
		Time struct{ Created int64 } `json:"time"`
	}
	var doc struct {
		Info     *created `json:"info"`
		Messages []struct {
			Info struct {
				created
				Role string `json:"role"`
			} `json:"info"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"messages"`
	}
	if json.Unmarshal(bytes.TrimSpace(raw), &doc) != nil || doc.Info == nil || doc.Messages == nil {
		return nil, false
	}
	for _, m := range doc.Messages {
		if c := m.Info.Time.Created; c > 0 && c < doc.Info.Time.Created {
			continue
		}
		for _, p := range m.Parts {
			parts = append(parts, exportPart{user: m.Info.Role == "user", raw: p})
		}
	}
	return parts, true
}

func openCodeFacts(raw []byte) facts {
	parts := map[string]ocPart{}
	user := map[string]bool{}
	var order []string
	if exp, ok := exportParts(raw); ok {
		for i, ep := range exp {
			var p ocPart
			if json.Unmarshal(ep.raw, &p) != nil {
				continue
			}
			id := strconv.Itoa(i)
			order = append(order, id)
			parts[id], user[id] = p, ep.user
		}
		raw = nil
	}
	v2 := map[string]json.RawMessage{} // the v2 runtime's assistant messages, by id
	var v2order []string
	roles := map[string]string{} // the older file tree: a message's role by its id
	file := ""                   // the older file tree: the path of the document that follows
	var session int64            // when the session was created
	copied := map[string]bool{}  // the file tree's messages created before it
	type created struct {
		Time struct{ Created int64 } `json:"time"`
	}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var doc struct {
			created
			Twasm     string `json:"$twasm"`
			Path      string `json:"path"`
			ID        string `json:"id"`
			MessageID string `json:"messageID"`
			Role      string `json:"role"`
		}
		if json.Unmarshal(l, &doc) != nil {
			continue
		}
		if doc.Twasm == "file" {
			file = doc.Path
			continue
		}
		if f := file; f != "" {
			file = ""
			switch {
			case strings.HasPrefix(f, "session/"):
				session = doc.Time.Created
			case strings.HasPrefix(f, "message/"):
				roles[doc.ID] = doc.Role
				copied[doc.ID] = doc.Time.Created > 0 && doc.Time.Created < session
			case strings.HasPrefix(f, "part/") && copied[doc.MessageID]:
			case strings.HasPrefix(f, "part/"):
				var p ocPart
				if doc.ID != "" && json.Unmarshal(l, &p) == nil {
					if _, ok := parts[doc.ID]; !ok {
						order = append(order, doc.ID)
					}
					parts[doc.ID] = p
					user[doc.ID] = roles[doc.MessageID] == "user"
				}
			}
			continue
		}
		var e struct {
			Twasm string `json:"$twasm"`
			Table string `json:"table"`
			Row   struct {
				ID          string `json:"id"`
				Type        string `json:"type"`
				MessageID   string `json:"message_id"`
				TimeCreated int64  `json:"time_created"`
				Message     struct {
					created
					Role string
				} `json:"message"`
				Data json.RawMessage `json:"data"`
			} `json:"row"`
			Part json.RawMessage `json:"part"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		if e.Twasm == "row" && e.Table == "session" {
			session = e.Row.TimeCreated
			continue
		}
		if c := e.Row.Message.Time.Created; e.Twasm == "row" && c > 0 && c < session {
			continue
		}
		if e.Twasm == "row" && e.Table == "session_message" {
			// The v2 runtime's messages, each row a message whole (its
			// last version stands), created after the session.
			if e.Row.Type == "assistant" && (e.Row.TimeCreated == 0 || e.Row.TimeCreated >= session) {
				if _, ok := v2[e.Row.ID]; !ok {
					v2order = append(v2order, e.Row.ID)
				}
				v2[e.Row.ID] = e.Row.Data
			}
			continue
		}
		id, data := e.Row.ID, e.Row.Data
		if e.Twasm == "" {
			var p struct{ ID string }
			_ = json.Unmarshal(e.Part, &p)
			id, data = p.ID, e.Part
		}
		var p ocPart
		if id == "" || json.Unmarshal(data, &p) != nil {
			continue
		}
		if _, ok := parts[id]; !ok {
			order = append(order, id)
		}
		parts[id] = p
		user[id] = e.Row.Message.Role == "user"
	}
	var fx facts
	for _, id := range v2order {
		var m struct {
			Content []struct {
				Type    string `json:"type"`
				ID      string `json:"id"`
				CallID  string `json:"callID"`
				Text    string `json:"text"`
				Ignored bool   `json:"ignored"`
				State   struct {
					Status string `json:"status"`
				} `json:"state"`
			} `json:"content"`
			Cost   float64         `json:"cost"`
			Tokens json.RawMessage `json:"tokens"`
		}
		if json.Unmarshal(v2[id], &m) != nil {
			continue
		}
		for _, c := range m.Content {
			switch {
			case c.Type == "text" && !c.Ignored:
				fx.texts = append(fx.texts, c.Text)
			case c.Type == "tool" && c.State.Status != "pending":
				fx.calls = append(fx.calls, cmp.Or(c.CallID, c.ID))
			}
		}
		if len(m.Tokens) > 0 {
			fx.cost += m.Cost
			fx.steps++
		}
	}
	for _, id := range order {
		p := parts[id]
		switch p.Type {
		case "text":
			// An ignored text is a note OpenCode never sends to the
			// model (message-v2.ts), the assistant's in no format.
			if !user[id] && !p.Ignored {
				fx.texts = append(fx.texts, p.Text)
			}
		case "tool":
			if p.State.Status != "pending" {
				fx.calls = append(fx.calls, p.CallID)
			}
		case "step-finish":
			fx.cost += p.Cost
			fx.steps++
		}
	}
	return fx
}
