//go:build !wasip1

package codex_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// codexUsage is a Codex usage object; a figure it leaves out is nil.
type codexUsage struct {
	Input     *int64 `json:"input_tokens"`
	Cached    *int64 `json:"cached_input_tokens"`
	Output    *int64 `json:"output_tokens"`
	Reasoning *int64 `json:"reasoning_output_tokens"`
	Total     *int64 `json:"total_tokens"`
}

func (u *codexUsage) add(o *codexUsage) {
	add := func(dst **int64, v *int64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *v
	}
	add(&u.Input, o.Input)
	add(&u.Cached, o.Cached)
	add(&u.Output, o.Output)
	add(&u.Reasoning, o.Reasoning)
	add(&u.Total, o.Total)
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Codex exec --json output and rollout with the figures
// computed from the raw file here: an exec output's turn.completed usage
// (one per process, in these captures), or a rollout's running totals
// (token_count info.total_token_usage): the last one of each process,
// which covers every response of it, also those whose own token_count is
// not in the file, summed over the processes that wrote to the rollout
// (a resumed session: each starts with session_meta, its counter from 0;
// a total that goes down also says a new counter). Input counts the
// cache read; the uncached input is the difference (the step's usage
// agrees with itself, UsageSide.Test).
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: codex.Plugin, Provider: "codex",
		Inputs:   plugintest.UsageInputs(t, "codex", false, "*.jsonl"),
		Counters: []string{"input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens", "total_tokens"},
		Raw:      rawCodexUsage,
	}.Test(t)
}

func rawCodexUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	var want codexUsage
	turns := 0
	var last *codexUsage // the latest running total
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type    string      `json:"type"`
			Usage   *codexUsage `json:"usage"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total *codexUsage `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		case line.Type == "turn.completed" && line.Usage != nil:
			turns++
			want.add(line.Usage)
		case line.Type == "session_meta" && last != nil:
			want.add(last)
			last = nil
		case line.Type == "event_msg" && line.Payload.Type == "token_count" && line.Payload.Info != nil && line.Payload.Info.Total != nil:
			tot := line.Payload.Info.Total
			if last != nil && tot.Input != nil && last.Input != nil && *tot.Input < *last.Input {
				want.add(last)
			}
			last = tot
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if last != nil {
		want.add(last)
	}
	if turns > 1 {
		return plugintest.RawUsage{Skip: "several turn.completed: cumulative or not is the plugin's reading to judge"}
	}
	u := transcript.Usage{InputTokens: want.Input, CacheReadTokens: want.Cached, OutputTokens: want.Output, ReasoningTokens: want.Reasoning, TotalTokens: want.Total}
	return plugintest.RawUsage{Stated: !u.IsZero(), Want: u}
}
