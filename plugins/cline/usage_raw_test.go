//go:build !wasip1

package cline_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Cline (and Roo Code) task with the figures read here from the
// raw input: in ui_messages.json, each say api_req_started (older
// versions: api_req_finished) holds one API request's figures in its
// text, a JSON object {tokensIn, tokensOut, cacheWrites, cacheReads}, its
// last version standing (Cline rewrites the document whole), a request
// told by its ts (a request a checkpoint restore cut from the document
// was made: it counts);
// tokensIn is the input neither read from nor written to the cache (Cline
// keeps the three apart), except where it is the whole prompt (see
// grossProvider and the release dates below). The task's figures are the
// requests' sum, with, in one version, the sums of the requests a
// checkpoint restore cut away (deleted_api_reqs) and of the sub-agents a
// use_subagents call ran (subagent_usage), as Cline's getApiMetrics adds
// them; the API history's metrics are not figures the plugin reads,
// a sessions folder's (the Cline SDK's) are its requests'
// (rawSessionUsage). The Cline CLI's --json output of the SDK's
// agent events states the session's usage in run_result (rawAgentEventsUsage);
// Roo Code's CLI stream-json states only the last request's, which is not
// the task's: no usage.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: cline.Plugin, Provider: "cline",
		Inputs:       append(plugintest.UsageInputs(t, "cline", true, "*.json", "*.jsonl"), plugintest.UsageInputs(t, "roo", false, "*.json", "*.jsonl")...),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"},
		AbsentIsZero: true,
		Raw:          rawClineUsage,
	}.Test(t)
}

// grossProvider are Cline's providers whose tokensIn is prompt_tokens,
// the cache read included (their handlers in src/core/api/providers).
var grossProvider = map[string]bool{"openai": true, "xai": true, "litellm": true, "lmstudio": true, "qwen": true, "doubao": true, "fireworks": true, "hicap": true, "zai": true}

type clineRequest struct {
	ts          int64
	provider    string
	rooDeleted  bool   // Roo Code's api_req_deleted: a sum of requests' own figures
	Protocol    string `json:"apiProtocol"`
	TokensIn    *int64 `json:"tokensIn"`
	TokensOut   *int64 `json:"tokensOut"`
	CacheWrites *int64 `json:"cacheWrites"`
	CacheReads  *int64 `json:"cacheReads"`
}

// sdkUsage is a usage as the Cline SDK states it: inputTokens the whole
// prompt, the cache read and written included.
type sdkUsage struct {
	In    *int64 `json:"inputTokens"`
	Out   *int64 `json:"outputTokens"`
	Read  *int64 `json:"cacheReadTokens"`
	Write *int64 `json:"cacheWriteTokens"`
}

// rawAgentEventsUsage reads the SDK CLI's --json output: the session's
// usage is run_result's (its aggregateUsage, the sub-agents' included,
// when there is one); the uncached input is the prompt less the cache.
func rawAgentEventsUsage(raw []byte) (plugintest.RawUsage, bool) {
	var got *sdkUsage
	agent := false
	for _, l := range plugintest.Lines(raw) {
		var line struct {
			TS        *string   `json:"ts"`
			Type      string    `json:"type"`
			Usage     *sdkUsage `json:"usage"`
			Aggregate *sdkUsage `json:"aggregateUsage"`
		}
		if json.Unmarshal(l, &line) != nil || line.TS == nil {
			continue
		}
		if line.Type == "agent_event" || line.Type == "run_result" {
			agent = true
		}
		if bytes.Contains(l, []byte(`"toolName":"spawn_agent"`)) {
			// run_result's figure holds the sub-agents' too, which are
			// not the step's: TestGolden's case pins the split.
			return plugintest.RawUsage{Skip: "a sub-agent's usage is in run_result's figure"}, true
		}
		if line.Type == "run_result" {
			got = line.Usage
			if line.Aggregate != nil {
				got = line.Aggregate
			}
		}
	}
	if !agent {
		return plugintest.RawUsage{}, false
	}
	if got == nil {
		return plugintest.RawUsage{}, true
	}
	uncached := plugintest.N(plugintest.Val(got.In) - plugintest.Val(got.Read) - plugintest.Val(got.Write))
	return plugintest.RawUsage{Stated: true, Want: plugintest.Figures(uncached, got.Read, got.Write, got.Out, nil)}, true
}

// rawSessionUsage reads a sessions folder's document (the Cline SDK's
// <id>.messages.json): the session's usage is the sum of its own
// messages' metrics (each a request's), each message's last version (by
// its id), the messages a /fork copied left out (ownMessages).
func rawSessionUsage(raw []byte) (plugintest.RawUsage, bool) {
	metrics := map[string]sdkUsage{}
	var order []string
	session := false
	for _, l := range plugintest.Lines(raw) {
		var doc struct {
			SessionID string            `json:"sessionId"`
			Messages  []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(l, &doc) != nil || doc.Messages == nil {
			continue
		}
		session = true
		for i, m := range ownMessages(doc.SessionID, doc.Messages) {
			var msg struct {
				ID      string    `json:"id"`
				Metrics *sdkUsage `json:"metrics"`
			}
			if json.Unmarshal(m, &msg) != nil || msg.Metrics == nil {
				continue
			}
			key := msg.ID
			if key == "" {
				key = "#" + strconv.Itoa(i)
			}
			if _, ok := metrics[key]; !ok {
				order = append(order, key)
			}
			metrics[key] = *msg.Metrics
		}
	}
	if !session {
		return plugintest.RawUsage{}, false
	}
	var sum transcript.Usage
	for _, key := range order {
		u := metrics[key]
		f := plugintest.Figures(plugintest.N(plugintest.Val(u.In)-plugintest.Val(u.Read)-plugintest.Val(u.Write)), u.Read, u.Write, u.Out, nil)
		sum.Add(&f)
	}
	return plugintest.RawUsage{Stated: len(order) > 0, Want: sum}, true
}

func rawClineUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	if u, ok := rawAgentEventsUsage(raw); ok {
		return u
	}
	if u, ok := rawSessionUsage(raw); ok {
		return u
	}
	if (bytes.Contains(raw, []byte(`"say":"deleted_api_reqs"`)) || bytes.Contains(raw, []byte(`"say":"api_req_deleted"`))) && (!json.Valid(raw) && bytes.Count(raw, []byte(`"path":"ui_messages.json"`)) != 1) {
		// A checkpoint restore's sum of the requests it cut away, over
		// several versions of the UI or in the CLI's stream: which of
		// them were read before is TestDeletedRequests' (and the
		// golden cli_json_restored's). In one version, Cline's own
		// total (getApiMetrics) is below: its requests and the sums.
		return plugintest.RawUsage{Skip: "deleted_api_reqs across versions: TestDeletedRequests"}
	}
	requests := map[string]clineRequest{}
	var order []string
	file := ""
	kilo := false
	read := func(doc []byte) {
		var msgs []struct {
			Ts        int64  `json:"ts"`
			Type      string `json:"type"`
			Say       string `json:"say"`
			Text      string `json:"text"`
			ModelInfo struct {
				ProviderID string `json:"providerId"`
			} `json:"modelInfo"`
		}
		if json.Unmarshal(doc, &msgs) != nil {
			return
		}
		for i, m := range msgs {
			if m.Type != "say" || m.Say != "api_req_started" && m.Say != "api_req_finished" && m.Say != "deleted_api_reqs" && m.Say != "api_req_deleted" && m.Say != "subagent_usage" {
				continue
			}
			var r clineRequest
			if json.Unmarshal([]byte(m.Text), &r) != nil || r.TokensIn == nil && r.TokensOut == nil && r.CacheWrites == nil && r.CacheReads == nil {
				continue // still running, or no figures
			}
			// A request is its element while it keeps its ts: a
			// checkpoint restore cuts the UI's messages back, and a
			// later request at the same index is another.
			key := file + "#" + strconv.Itoa(i)
			if m.Ts > 0 {
				key = file + "@" + strconv.FormatInt(m.Ts, 10)
			}
			if _, ok := requests[key]; !ok {
				order = append(order, key)
			}
			r.ts, r.provider, r.rooDeleted = m.Ts, m.ModelInfo.ProviderID, m.Say == "api_req_deleted"
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
				Store string `json:"store"`
			}
			if json.Unmarshal(l, &marker) == nil && marker.Twasm != "" {
				if marker.Twasm == "file" {
					file = marker.Path
				}
				if marker.Twasm == "source" {
					kilo = strings.HasPrefix(marker.Store, "Kilo Code")
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
		// tokensIn is the whole prompt over the OpenAI protocol (Roo
		// Code, Kilo Code), over the Anthropic protocol from Roo Code
		// 3.29.5 (2025-11-01) and Kilo Code 4.119.0 (2025-11-12), and
		// for Cline's providers that pass prompt_tokens on; never
		// below the cache it holds.
		released := int64(1761955200000)
		if kilo {
			released = 1762905600000
		}
		cache := plugintest.Val(r.CacheReads) + plugintest.Val(r.CacheWrites)
		gross := r.Protocol == "openai" || (r.Protocol != "" || r.rooDeleted) && r.ts >= released || r.Protocol == "" && grossProvider[r.provider]
		if gross && r.TokensIn != nil && *r.TokensIn >= cache {
			f = plugintest.Figures(plugintest.N(plugintest.Val(r.TokensIn)-plugintest.Val(r.CacheReads)-plugintest.Val(r.CacheWrites)), r.CacheReads, r.CacheWrites, r.TokensOut, nil)
		} else {
			f = plugintest.Figures(r.TokensIn, r.CacheReads, r.CacheWrites, r.TokensOut, nil)
		}
		sum.Add(&f)
	}
	return plugintest.RawUsage{Stated: len(order) > 0, Want: sum}
}
