//go:build !wasip1

package kimi_test

import (
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/transcript"
)

// kimiUsage is a token usage, the Kimi CLI's names or Kimi Code's.
type kimiUsage struct {
	Other  *int64 `json:"input_other"`
	Read   *int64 `json:"input_cache_read"`
	Write  *int64 `json:"input_cache_creation"`
	Output *int64 `json:"output"`
	OtherC *int64 `json:"inputOther"`
	ReadC  *int64 `json:"inputCacheRead"`
	WriteC *int64 `json:"inputCacheCreation"`
}

func (u *kimiUsage) figures() transcript.Usage {
	if u.Other == nil && u.Read == nil && u.Write == nil {
		u.Other, u.Read, u.Write = u.OtherC, u.ReadC, u.WriteC
	}
	return plugintest.Figures(u.Other, u.Read, u.Write, u.Output, nil)
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Kimi session with the figures read here from the raw input.
// The Kimi CLI's wire log states each step's usage once, in the
// StatusUpdate after it (token_usage); those inside a SubagentEvent are a
// sub-agent's (its own scope, not the session's step). Kimi Code's states
// each model call's usage in its step.end and again in the usage.record
// that follows it (the same call: counted once, the record's figures); a
// usage.record that follows no step.end (a compaction's request) is a
// call of its own. input_other is the input neither read from nor
// written to the cache. The session's figures are the sum of those
// after the last fork marker ({"type":"forked"}: what came before is the
// history Kimi Code's /fork copied from the parent session), or after the
// lines the facts line of the stream's first part says another run holds
// ("copied": a Kimi CLI fork the host found, ABI 1.10).
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: kimi.Plugin, Provider: "kimi",
		Inputs:       plugintest.UsageInputs(t, "kimi", true, "*.jsonl"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"},
		AbsentIsZero: true,
		Raw:          rawKimiUsage,
	}.Test(t)
}

func rawKimiUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	var sum transcript.Usage
	stated := false
	add := func(u *kimiUsage) {
		f := u.figures()
		if f.IsZero() {
			return
		}
		stated = true
		sum.Add(&f)
	}
	var pending *kimiUsage // a step.end's usage, until the line after it
	var fileLine, copied int64
	for _, l := range plugintest.Lines(raw) {
		var line struct {
			Twasm  string `json:"$twasm"`
			Copied *struct {
				Lines int64 `json:"lines"`
			} `json:"copied"`
			Type  string     `json:"type"`
			Usage *kimiUsage `json:"usage"`
			Event struct {
				Type  string     `json:"type"`
				Usage *kimiUsage `json:"usage"`
			} `json:"event"`
			Message struct {
				Type    string `json:"type"`
				Payload struct {
					TokenUsage *kimiUsage `json:"token_usage"`
				} `json:"payload"`
			} `json:"message"`
		}
		if json.Unmarshal(l, &line) != nil {
			fileLine++
			continue
		}
		if line.Twasm != "" {
			if line.Copied != nil && fileLine == 0 {
				copied = line.Copied.Lines
			}
			continue
		}
		if fileLine++; copied > 0 && fileLine > copied {
			// The first line after the copy: what came before is not
			// counted.
			pending, sum, copied = nil, transcript.Usage{}, 0
		}
		if line.Type == "forked" {
			if pending != nil {
				add(pending)
				pending = nil
			}
			sum = transcript.Usage{}
			continue
		}
		if line.Type == "usage.record" {
			if line.Usage != nil {
				add(line.Usage) // the step.end before it, if any, is this call
			} else if pending != nil {
				add(pending)
			}
			pending = nil
			continue
		}
		if pending != nil {
			add(pending)
			pending = nil
		}
		switch {
		case line.Type == "context.append_loop_event" && line.Event.Type == "step.end":
			pending = line.Event.Usage
		case line.Message.Type == "StatusUpdate" && line.Message.Payload.TokenUsage != nil:
			add(line.Message.Payload.TokenUsage)
		}
	}
	if pending != nil {
		add(pending)
	}
	return plugintest.RawUsage{Stated: stated, Want: sum}
}
