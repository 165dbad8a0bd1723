//go:build !wasip1

package opencode_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// openCodeTokens is OpenCode's tokens object (a step-finish part's, an
// assistant message's).
type openCodeTokens struct {
	Input     *int64 `json:"input"`
	Output    *int64 `json:"output"`
	Reasoning *int64 `json:"reasoning"`
	Total     *int64 `json:"total"`
	Cache     struct {
		Read  *int64 `json:"read"`
		Write *int64 `json:"write"`
	} `json:"cache"`
}

// figures reads the tokens as OpenCode writes them: input leaves the
// cache out; output leaves the reasoning out when the total says so
// (OpenCode on AI SDK 6 writes output less reasoning, the total the
// provider's, every token; earlier builds wrote the output with the
// reasoning in it), and twasm's output counts every output token.
func (t openCodeTokens) figures() transcript.Usage {
	out := t.Output
	if t.Total != nil && plugintest.Val(t.Reasoning) > 0 && *t.Total == plugintest.Val(t.Input)+plugintest.Val(t.Cache.Read)+plugintest.Val(t.Cache.Write)+plugintest.Val(t.Output)+plugintest.Val(t.Reasoning) {
		out = plugintest.N(plugintest.Val(t.Output) + plugintest.Val(t.Reasoning))
	}
	u := plugintest.Figures(t.Input, t.Cache.Read, t.Cache.Write, out, t.Reasoning)
	u.TotalTokens = t.Total
	return u
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every OpenCode session (the database's rows, the older file tree,
// `opencode run --format json`) with the figures read here from the raw
// input: every step-finish part (by its id: a part written again in
// place counts once, its last version), and every message of the v2
// runtime's session_message rows, states one model step's tokens;
// the session's figures are their sum (opencode export's document
// too). A message created before its
// session was (Session.fork's copy of the parent's) is the parent's:
// its parts count in the parent's run.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: opencode.Plugin, Provider: "opencode",
		Inputs:       plugintest.UsageInputs(t, "opencode", true, "*.jsonl", "*.json"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "total_tokens"},
		AbsentIsZero: true,
		Raw:          rawOpenCodeUsage,
	}.Test(t)
}

func rawOpenCodeUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	type part struct {
		ID     string          `json:"id"`
		Type   string          `json:"type"`
		Tokens *openCodeTokens `json:"tokens"`
	}
	steps := map[string]openCodeTokens{}
	var order []string
	keep := func(id string, p part) {
		if p.Type != "step-finish" || p.Tokens == nil {
			return
		}
		if id == "" {
			id = p.ID
		}
		if _, ok := steps[id]; !ok {
			order = append(order, id)
		}
		steps[id] = *p.Tokens
	}
	type created struct {
		Time struct {
			Created int64 `json:"created"`
		} `json:"time"`
	}
	// run --format json: the steps stating reasoning and no total, and
	// whether the output shows the v2 client (a tool's
	// metadata.providerResult, text deltas of one part id, an error
	// {type, message}), whose output leaves the reasoning out
	// (noninteractive.ts, core session/usage.ts).
	open, texts := map[string]bool{}, map[string]string{}
	v2 := false
	var session int64                    // when the session was created (0: not said)
	copied := map[string]bool{}          // messages created before it (the file tree's)
	if exp, ok := exportParts(raw); ok { // opencode export: one document
		for _, ep := range exp {
			var p part
			if json.Unmarshal(ep.raw, &p) == nil {
				keep("", p)
			}
		}
		raw = nil
	}
	for _, l := range plugintest.Lines(raw) {
		var line struct {
			part
			created
			MessageID string `json:"messageID"`
			Directory string `json:"directory"`
			Role      string `json:"role"`
			Twasm     string `json:"$twasm"`
			Table     string `json:"table"`
			Row       struct {
				ID          string  `json:"id"`
				Data        part    `json:"data"`
				TimeCreated int64   `json:"time_created"`
				Message     created `json:"message"`
			} `json:"row"`
			Part part `json:"part"`
		}
		if json.Unmarshal(l, &line) != nil {
			continue
		}
		switch {
		case line.Twasm == "row" && line.Table == "session":
			session = line.Row.TimeCreated
		case line.Twasm == "row" && line.Table == "part": // the database's rows
			if c := line.Row.Message.Time.Created; c > 0 && c < session {
				continue
			}
			keep(line.Row.ID, line.Row.Data)
		case line.Twasm == "row" && line.Table == "session_message": // the v2 runtime's messages
			// Its tokens: input the uncached input, output the visible
			// output, reasoning apart (publish-llm-event.ts).
			tk := line.Row.Data.Tokens
			if tk == nil || (line.Row.TimeCreated > 0 && line.Row.TimeCreated < session) {
				continue
			}
			v := *tk
			v.Output, v.Total = plugintest.N(plugintest.Val(v.Output)+plugintest.Val(v.Reasoning)), nil
			if _, ok := steps[line.Row.ID]; !ok {
				order = append(order, line.Row.ID)
			}
			steps[line.Row.ID] = v
		case line.Twasm != "":
		case line.Directory != "" && line.Time.Created > 0: // a session document
			session = line.Time.Created
		case line.Role != "": // a message document
			if line.Time.Created > 0 && line.Time.Created < session {
				copied[line.ID] = true
			}
		case copied[line.MessageID]:
		case line.Part.Type != "": // opencode run --format json
			keep("", line.Part)
			var j struct {
				Part struct {
					ID, Type, Text string
					State          struct {
						Metadata map[string]json.RawMessage `json:"metadata"`
					} `json:"state"`
				} `json:"part"`
			}
			if json.Unmarshal(l, &j) != nil {
				continue
			}
			p := j.Part
			if tk := line.Part.Tokens; tk != nil && tk.Total == nil && plugintest.Val(tk.Reasoning) > 0 {
				open[p.ID] = true
			}
			if _, ok := p.State.Metadata["providerResult"]; ok && p.Type == "tool" {
				v2 = true
			}
			if was, ok := texts[p.ID]; ok && p.Type == "text" && !strings.HasPrefix(p.Text, was) {
				v2 = true
			}
			texts[p.ID] = p.Text
		case line.Type == "error":
			var e struct {
				Error struct {
					Name *string `json:"name"`
					Type *string `json:"type"`
				} `json:"error"`
			}
			if json.Unmarshal(l, &e) == nil && e.Error.Name == nil && e.Error.Type != nil {
				v2 = true
			}
		default: // a part document of the file tree
			keep("", line.part)
		}
	}
	var sum transcript.Usage
	for _, id := range order {
		f := steps[id].figures()
		if v2 && open[id] {
			f.OutputTokens = plugintest.N(plugintest.Val(f.OutputTokens) + plugintest.Val(f.ReasoningTokens))
		}
		sum.Add(&f)
	}
	return plugintest.RawUsage{Stated: len(order) > 0, Want: sum}
}
