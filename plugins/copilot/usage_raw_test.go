//go:build !wasip1

package copilot_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// copilotUsage is a session.shutdown modelMetrics entry's usage.
type copilotUsage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens, ReasoningTokens int64
}

func (u copilotUsage) list() [5]int64 {
	return [5]int64{u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens, u.ReasoningTokens}
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Copilot CLI events.jsonl with the figures computed from
// the raw file here: each session.shutdown states, per model, the
// session's totals so far (a resumed process restores them and repeats
// them plus its own), so a model's latest figures stand, unless one of
// its counters went down (a count that started again: the figures before
// are added); the models' figures are summed. inputTokens holds the cache
// reads and writes. A log with no shutdown states only its messages'
// outputTokens. The sub-agents' messages (agentId on the line, or
// parentToolCallId) are their child runs', whose tokens the shutdown
// counts too: their outputTokens are not the step's.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: copilot.Plugin, Provider: "copilot",
		Inputs:       plugintest.UsageInputs(t, "copilot", false, "*.jsonl"),
		Counters:     []string{"input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "uncached_input_tokens"},
		AbsentIsZero: true,
		Raw:          rawCopilotUsage,
	}.Test(t)
}

func rawCopilotUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	type model struct{ base, cur [5]int64 }
	models := map[string]*model{}
	shutdowns := 0
	var msgOutput, subOutput int64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e struct {
			Type    string `json:"type"`
			AgentID string `json:"agentId"`
			Data    struct {
				ParentToolCallID string `json:"parentToolCallId"`
				ModelMetrics     map[string]struct {
					Usage copilotUsage `json:"usage"`
				} `json:"modelMetrics"`
				OutputTokens int64 `json:"outputTokens"`
			} `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Type {
		case "assistant.usage":
			t.Fatal("a capture with per-call usage: count it here as the plugin's doc says")
		case "assistant.message":
			if e.AgentID != "" || e.Data.ParentToolCallID != "" {
				subOutput += e.Data.OutputTokens
			} else {
				msgOutput += e.Data.OutputTokens
			}
		case "session.shutdown":
			shutdowns++
			for name, mm := range e.Data.ModelMetrics {
				m := models[name]
				if m == nil {
					m = &model{}
					models[name] = m
				}
				next := mm.Usage.list()
				for i := range next {
					if next[i] < m.cur[i] {
						for j := range m.base {
							m.base[j] += m.cur[j]
						}
						break
					}
				}
				m.cur = next
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if shutdowns == 0 {
		// No shutdown: only the messages' output is stated.
		return plugintest.RawUsage{Stated: true, Want: transcript.Usage{OutputTokens: &msgOutput}}
	}
	var want [5]int64 // all input, cache read, cache write, output, reasoning
	for _, m := range models {
		for i := range want {
			want[i] += m.base[i] + m.cur[i]
		}
	}
	want[3] -= subOutput
	uncached := want[0] - want[1] - want[2]
	return plugintest.RawUsage{Stated: true, Want: transcript.Usage{
		InputTokens: &want[0], CacheReadTokens: &want[1], CacheWriteTokens: &want[2], OutputTokens: &want[3], ReasoningTokens: &want[4], UncachedInputTokens: &uncached,
	}}
}
