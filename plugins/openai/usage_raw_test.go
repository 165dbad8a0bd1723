//go:build !wasip1

package openai_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// rawUsage is an OpenAI usage object, Chat Completions' or the Responses
// API's names.
type rawUsage struct {
	PromptTokens        *int64 `json:"prompt_tokens"`
	CompletionTokens    *int64 `json:"completion_tokens"`
	InputTokens         *int64 `json:"input_tokens"`
	OutputTokens        *int64 `json:"output_tokens"`
	TotalTokens         *int64 `json:"total_tokens"`
	PromptCacheHit      *int64 `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens *int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// figures are all input, cache read, output, reasoning and the stated
// total.
func (u rawUsage) figures() [5]int64 {
	v := func(ps ...*int64) int64 {
		for _, p := range ps {
			if p != nil {
				return *p
			}
		}
		return 0
	}
	var cached, reasoning *int64
	if d := u.PromptTokensDetails; d != nil {
		cached = d.CachedTokens
	}
	if d := u.InputTokensDetails; d != nil && cached == nil {
		cached = d.CachedTokens
	}
	if cached == nil {
		cached = u.PromptCacheHit
	}
	if d := u.CompletionTokensDetails; d != nil {
		reasoning = d.ReasoningTokens
	}
	if d := u.OutputTokensDetails; d != nil && reasoning == nil {
		reasoning = d.ReasoningTokens
	}
	return [5]int64{v(u.PromptTokens, u.InputTokens), v(cached), v(u.CompletionTokens, u.OutputTokens), v(reasoning), v(u.TotalTokens)}
}

// TestUsageMatchesRaw compares the step usage the plugin reports for
// every real OpenAI capture (a response object, an SSE or JSON Lines
// stream, Chat Completions or Responses) with the figures computed from
// the raw bytes here: every response states its usage (a chat
// completion or chunk by its id, a Responses response by its id, in the
// object or in a response.* event); a stream that states it more than
// once sends running totals, so a response's last figures stand; the
// responses' figures are summed. The input counts the cache read. The
// step's service tier is the one the responses stating usage state (a
// chat stream's in its chunks, a Responses response in the object
// carrying its usage), "mixed" when they differ, absent when none does.
func TestUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: openai.Plugin, Provider: "openai",
		Inputs:       plugintest.UsageInputs(t, "openai", false, "*.json", "*.jsonl", "*.sse"),
		Counters:     []string{"input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "uncached_input_tokens", "service_tier"},
		AbsentIsZero: true,
		Raw:          rawOpenAIUsage,
	}.Test(t)
}

func rawOpenAIUsage(t *testing.T, f string, raw []byte) plugintest.RawUsage {
	var docs [][]byte
	if strings.HasSuffix(f, ".json") {
		docs = append(docs, raw)
	} else {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			l := bytes.TrimSpace(sc.Bytes())
			l = bytes.TrimSpace(bytes.TrimPrefix(l, []byte("data:")))
			if len(l) > 0 && l[0] == '{' {
				docs = append(docs, append([]byte(nil), l...))
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	last := map[string][5]int64{}
	tiers := map[string]string{} // by response, the last tier stated
	var order []string
	note := func(id string, u *rawUsage) {
		if u == nil {
			return
		}
		if _, ok := last[id]; !ok {
			order = append(order, id)
		}
		last[id] = u.figures()
	}
	noteTier := func(id, tier string) {
		if tier != "" {
			tiers[id] = tier
		}
	}
	for _, d := range docs {
		var o struct {
			ID       string          `json:"id"`
			Object   string          `json:"object"`
			Type     string          `json:"type"`
			Usage    *rawUsage       `json:"usage"`
			Tier     string          `json:"service_tier"`
			Response json.RawMessage `json:"response"`
			XGroq    *struct {
				Usage *rawUsage `json:"usage"`
			} `json:"x_groq"` // Groq's streams state their usage here
		}
		if json.Unmarshal(d, &o) != nil {
			continue
		}
		if o.Usage == nil && o.XGroq != nil {
			o.Usage = o.XGroq.Usage
		}
		if strings.HasPrefix(o.Type, "response.") && len(o.Response) > 0 {
			var r struct {
				ID    string    `json:"id"`
				Usage *rawUsage `json:"usage"`
				Tier  string    `json:"service_tier"`
			}
			if json.Unmarshal(o.Response, &r) == nil && r.Usage != nil {
				note("response "+r.ID, r.Usage)
				tiers["response "+r.ID] = r.Tier
			}
			continue
		}
		if o.Object == "response" && o.Usage != nil {
			tiers[o.Object+" "+o.ID] = o.Tier
		} else {
			noteTier(o.Object+" "+o.ID, o.Tier)
		}
		note(o.Object+" "+o.ID, o.Usage)
	}
	var want [5]int64 // all input, cache read, output, reasoning, stated total
	for _, id := range order {
		for i, v := range last[id] {
			want[i] += v
		}
	}
	u := transcript.Usage{InputTokens: &want[0], CacheReadTokens: &want[1], OutputTokens: &want[2], ReasoningTokens: &want[3], TotalTokens: &want[4]}
	if len(order) > 0 {
		uncached := want[0] - want[1]
		u.UncachedInputTokens = &uncached
		u.ServiceTier = tiers[order[0]]
		for _, id := range order[1:] {
			if tiers[id] != u.ServiceTier {
				u.ServiceTier = transcript.ServiceTierMixed
			}
		}
	}
	return plugintest.RawUsage{Stated: true, Want: u}
}
