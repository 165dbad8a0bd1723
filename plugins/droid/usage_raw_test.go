//go:build !wasip1

package droid_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/droid"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Droid session with the figures read here from the raw input:
// the session's settings document (<id>.settings.json, handed again
// whole each time Droid rewrote it) holds tokenUsage, the session's
// totals so far, so its last version stands: inputTokens the uncached
// input, cacheReadTokens and cacheCreationTokens the cache read and
// write, outputTokens the output less the thinking (thinkingTokens,
// counted apart), totalTokens as stated. The messages state no usage: a
// session file alone states none. droid exec's output states the run's
// usage in its completion (or json result): input_tokens the uncached
// input, cache_read_input_tokens and cache_creation_input_tokens the
// cache's, output_tokens the output less thinking_tokens; the last one
// stands.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: droid.Plugin, Provider: "droid",
		Inputs:       plugintest.UsageInputs(t, "droid", true, "*.jsonl", "*.json"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "total_tokens"},
		AbsentIsZero: true,
		Raw:          rawDroidUsage,
	}.Test(t)
}

func rawDroidUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	type tokenUsage struct {
		Input         *int64 `json:"inputTokens"`
		Output        *int64 `json:"outputTokens"`
		CacheCreation *int64 `json:"cacheCreationTokens"`
		CacheRead     *int64 `json:"cacheReadTokens"`
		Thinking      *int64 `json:"thinkingTokens"`
		Total         *int64 `json:"totalTokens"`
	}
	type execUsage struct {
		Input         *int64 `json:"input_tokens"`
		Output        *int64 `json:"output_tokens"`
		CacheCreation *int64 `json:"cache_creation_input_tokens"`
		CacheRead     *int64 `json:"cache_read_input_tokens"`
		Thinking      *int64 `json:"thinking_tokens"`
	}
	var last *tokenUsage
	for _, l := range plugintest.Lines(raw) {
		var doc struct {
			Type       string      `json:"type"`
			TokenUsage *tokenUsage `json:"tokenUsage"`
			Usage      *execUsage  `json:"usage"`
		}
		if json.Unmarshal(l, &doc) != nil {
			continue
		}
		switch {
		case doc.Type == "" && doc.TokenUsage != nil:
			last = doc.TokenUsage
		case (doc.Type == "completion" || doc.Type == "result") && doc.Usage != nil:
			last = &tokenUsage{Input: doc.Usage.Input, Output: doc.Usage.Output, CacheCreation: doc.Usage.CacheCreation,
				CacheRead: doc.Usage.CacheRead, Thinking: doc.Usage.Thinking}
		}
	}
	if last == nil {
		return plugintest.RawUsage{}
	}
	var out *int64
	if last.Output != nil || last.Thinking != nil {
		n := int64(0)
		for _, p := range []*int64{last.Output, last.Thinking} {
			if p != nil {
				n += *p
			}
		}
		out = &n
	}
	u := plugintest.Figures(last.Input, last.CacheRead, last.CacheCreation, out, last.Thinking)
	u.TotalTokens = last.Total
	return plugintest.RawUsage{Stated: true, Want: u}
}

// TestSettingsUsageOwnCalls: a session's settings document holds its
// own calls' usage in tokenUsage (Droid adds each call's there,
// commitTurnTokenUsage) and its Task sub-sessions' apart
// (childInclusiveTokenUsageBySessionId, and inclusiveTokenUsage, the
// two summed; @factory/cli 0.225). The sub-sessions are child runs with
// their own tokenUsage, so the parent's usage is tokenUsage alone, never
// the inclusive figure: each token is counted once.
func TestSettingsUsageOwnCalls(t *testing.T) {
	const head = `{"type":"session_start","id":"p1","title":"t","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"u1","timestamp":"2026-11-28T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"go"}]}}` + "\n" +
		`{"type":"message","id":"a1","timestamp":"2026-11-28T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}` + "\n"
	for _, tc := range []struct {
		name, settings string
		input, output  int64
	}{
		{"own usage only", `{"model":"claude-sonnet-4-5","tokenUsage":{"inputTokens":100,"outputTokens":20,"cacheCreationTokens":0,"cacheReadTokens":900,"thinkingTokens":5}}`,
			1000, 25},
		{"sub-sessions' usage beside it", `{"model":"claude-sonnet-4-5","tokenUsage":{"inputTokens":100,"outputTokens":20,"cacheCreationTokens":0,"cacheReadTokens":900,"thinkingTokens":5},` +
			`"childInclusiveTokenUsageBySessionId":{"c1":{"inputTokens":50,"outputTokens":10,"cacheCreationTokens":0,"cacheReadTokens":450,"thinkingTokens":0}},` +
			`"inclusiveTokenUsage":{"inputTokens":150,"outputTokens":30,"cacheCreationTokens":0,"cacheReadTokens":1350,"thinkingTokens":5}}`,
			1000, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := plugintest.Run(t, droid.Plugin, []byte(head+tc.settings+"\n"), normalize.Options{Provider: "droid", Now: func() time.Time { return time.Unix(0, 0) }}).Result
			u := res.Usage
			if u == nil || u.InputTokens == nil || u.OutputTokens == nil || *u.InputTokens != tc.input || *u.OutputTokens != tc.output {
				t.Fatalf("usage %+v; want input %d, output %d", u, tc.input, tc.output)
			}
		})
	}
}
