//go:build !wasip1

package cline_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Cline (and Roo Code) task with the figures read here from the
// raw input: in ui_messages.json, each say api_req_started (older
// versions: api_req_finished) holds one API request's figures in its
// text, a JSON object {tokensIn, tokensOut, cacheWrites, cacheReads}, the
// last version of the document standing (Cline rewrites it whole);
// tokensIn is the input neither read from nor written to the cache (Cline
// keeps the three apart), except when Roo Code states apiProtocol
// "openai" (then it is the whole prompt). The task's figures are the
// requests' sum; the API history's and a session file's metrics are not
// figures the plugin reads.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: cline.Plugin, Provider: "cline",
		Inputs:       plugintest.UsageInputs(t, "cline", true, "*.json", "*.jsonl"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"},
		AbsentIsZero: true,
		Raw:          rawClineUsage,
	}.Test(t)
}

type clineRequest struct {
	Protocol    string `json:"apiProtocol"`
	TokensIn    *int64 `json:"tokensIn"`
	TokensOut   *int64 `json:"tokensOut"`
	CacheWrites *int64 `json:"cacheWrites"`
	CacheReads  *int64 `json:"cacheReads"`
}

func rawClineUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	requests := map[string]clineRequest{}
	var order []string
	file := ""
	read := func(doc []byte) {
		var msgs []struct {
			Type string `json:"type"`
			Say  string `json:"say"`
			Text string `json:"text"`
		}
		if json.Unmarshal(doc, &msgs) != nil {
			return
		}
		for i, m := range msgs {
			if m.Type != "say" || m.Say != "api_req_started" && m.Say != "api_req_finished" {
				continue
			}
			var r clineRequest
			if json.Unmarshal([]byte(m.Text), &r) != nil || r.TokensIn == nil && r.TokensOut == nil && r.CacheWrites == nil && r.CacheReads == nil {
				continue // still running, or no figures
			}
			key := file + "#" + strconv.Itoa(i)
			if _, ok := requests[key]; !ok {
				order = append(order, key)
			}
			requests[key] = r
		}
	}
	if json.Valid(raw) {
		read(raw) // a ui_messages.json alone
	} else {
		for _, l := range plugintest.Lines(raw) {
			var marker struct {
				Twasm string `json:"$twasm"`
				Path  string `json:"path"`
			}
			if json.Unmarshal(l, &marker) == nil && marker.Twasm != "" {
				if marker.Twasm == "file" {
					file = marker.Path
				}
				continue
			}
			read(l)
		}
	}
	var sum transcript.Usage
	for _, key := range order {
		r := requests[key]
		var f transcript.Usage
		if r.Protocol == "openai" && r.TokensIn != nil {
			f = plugintest.Figures(plugintest.N(plugintest.Val(r.TokensIn)-plugintest.Val(r.CacheReads)-plugintest.Val(r.CacheWrites)), r.CacheReads, r.CacheWrites, r.TokensOut, nil)
		} else {
			f = plugintest.Figures(r.TokensIn, r.CacheReads, r.CacheWrites, r.TokensOut, nil)
		}
		sum.Add(&f)
	}
	return plugintest.RawUsage{Stated: len(order) > 0, Want: sum}
}
