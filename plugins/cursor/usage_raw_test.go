//go:build !wasip1

package cursor_test

import (
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Cursor input with the figures read here from the raw input.
// The Cursor CLI's agent transcripts state no usage at all: the step must
// state none (unknown, not 0). The IDE's rows state it per assistant
// bubble (type 2), tokenCount {inputTokens, outputTokens}, where {0, 0}
// is no count (Cursor wrote zeros where it did not count); a bubble's
// latest counted version stands, and only the bubbles a composer's
// fullConversationHeadersOnly names are the conversation's. The step's
// figures are their sum.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: cursor.Plugin, Provider: "cursor",
		Inputs:       plugintest.UsageInputs(t, "cursor", true, "*.jsonl"),
		Counters:     []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"},
		AbsentIsZero: true,
		Raw:          rawCursorUsage,
	}.Test(t)
}

func rawCursorUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	type count struct{ in, out int64 }
	named := map[string]bool{}
	counts := map[string]count{}
	for _, l := range plugintest.Lines(raw) {
		var row struct {
			Twasm string `json:"$twasm"`
			Table string `json:"table"`
			Row   struct {
				Value struct {
					Headers []struct {
						BubbleID string `json:"bubbleId"`
					} `json:"fullConversationHeadersOnly"`
					BubbleID   string `json:"bubbleId"`
					Type       int    `json:"type"`
					TokenCount *struct {
						Input  int64 `json:"inputTokens"`
						Output int64 `json:"outputTokens"`
					} `json:"tokenCount"`
				} `json:"value"`
			} `json:"row"`
		}
		if json.Unmarshal(l, &row) != nil || row.Twasm != "row" {
			continue
		}
		v := row.Row.Value
		switch row.Table {
		case "composer":
			for _, h := range v.Headers {
				named[h.BubbleID] = true
			}
		case "bubble":
			if v.Type == 2 && v.TokenCount != nil && (v.TokenCount.Input > 0 || v.TokenCount.Output > 0) {
				counts[v.BubbleID] = count{v.TokenCount.Input, v.TokenCount.Output}
			}
		}
	}
	var r plugintest.RawUsage
	if streamRawUsage(raw, &r) {
		return r
	}
	var in, out int64
	for id, c := range counts {
		if named[id] {
			r.Stated = true
			in, out = in+c.in, out+c.out
		}
	}
	r.Want.InputTokens, r.Want.OutputTokens = &in, &out
	return r
}

// streamRawUsage reads the usage of a stream-json output's last result
// line into r, and reports whether the input is such an output.
func streamRawUsage(raw []byte, r *plugintest.RawUsage) bool {
	stream := false
	for _, l := range plugintest.Lines(raw) {
		var line struct {
			Type  string `json:"type"`
			Usage *struct {
				Input  int64 `json:"inputTokens"`
				Output int64 `json:"outputTokens"`
				Read   int64 `json:"cacheReadTokens"`
				Write  int64 `json:"cacheWriteTokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(l, &line) != nil {
			continue
		}
		switch line.Type {
		case "system", "tool_call", "result":
			stream = true
		}
		if line.Type == "result" && line.Usage != nil {
			u := line.Usage
			in, read, write, out := u.Input+u.Read+u.Write, u.Read, u.Write, u.Output
			r.Stated = true
			r.Want.InputTokens, r.Want.OutputTokens, r.Want.CacheReadTokens = &in, &out, &read
			if write > 0 {
				r.Want.CacheWriteTokens = &write
			}
		}
	}
	return stream
}
