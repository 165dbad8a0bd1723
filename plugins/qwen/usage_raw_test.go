//go:build !wasip1

package qwen_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Qwen Code session with the figures computed from the raw
// file here: each assistant record of the session (not a background
// sub-agent's, isSidechain) states its API call's usageMetadata once:
// promptTokenCount every input token, cachedContentTokenCount the part
// read from the cache, candidatesTokenCount the output, which holds
// thoughtsTokenCount when the stated total is prompt plus candidates
// (an OpenAI-compatible API) and does not when the total also adds the
// thoughts (Gemini's API, which bills them as output); the session's
// figures are their sum. A record /branch copied from another session
// (forkedFrom) is that session's call, counted in its run, not here.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: qwen.Plugin, Provider: "qwen",
		Inputs:       plugintest.UsageInputs(t, "qwen", true, "*.jsonl"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"},
		AbsentIsZero: true, // a figure not stated is none
		Raw:          rawQwenUsage,
	}.Test(t)
}

func rawQwenUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	var r plugintest.RawUsage
	var in, cached, out, thoughts int64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	// qwen -p --output-format stream-json: the result message states
	// the run's usage (every model call's); input_tokens is the prompt,
	// the cache read in it; a total above input and output holds thoughts
	// beside the candidates.
	var result *headlessUsage
	for sc.Scan() {
		var h struct {
			Type      string         `json:"type"`
			SessionID string         `json:"session_id"`
			Usage     *headlessUsage `json:"usage"`
		}
		if json.Unmarshal(sc.Bytes(), &h) == nil && h.SessionID != "" && h.Type == "result" && h.Usage != nil && (h.Usage.Input > 0 || h.Usage.Output > 0) {
			result = h.Usage
		}
		var e struct {
			Type        string `json:"type"`
			IsSidechain bool   `json:"isSidechain"`
			ForkedFrom  any    `json:"forkedFrom"`
			Usage       *struct {
				Prompt     int64  `json:"promptTokenCount"`
				ToolPrompt int64  `json:"toolUsePromptTokenCount"`
				Cached     int64  `json:"cachedContentTokenCount"`
				Candidates int64  `json:"candidatesTokenCount"`
				Thoughts   int64  `json:"thoughtsTokenCount"`
				Total      *int64 `json:"totalTokenCount"`
			} `json:"usageMetadata"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "assistant" || e.IsSidechain || e.ForkedFrom != nil || e.Usage == nil {
			continue
		}
		u := e.Usage
		r.Stated = true
		prompt := u.Prompt + u.ToolPrompt
		o := u.Candidates
		if u.Total != nil && *u.Total == prompt+u.Candidates+u.Thoughts && u.Thoughts > 0 {
			o += u.Thoughts // beside the candidates: output all the same
		}
		in, cached, out, thoughts = in+prompt, cached+u.Cached, out+o, thoughts+u.Thoughts
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if u := result; u != nil {
		r.Stated = true
		in, cached, out, thoughts = u.Input, u.Cached, u.Output, 0
		if u.Total != nil && *u.Total > u.Input+u.Output {
			thoughts = *u.Total - u.Input - u.Output
			out += thoughts
		}
	}
	uncached := in - cached
	r.Want.InputTokens, r.Want.UncachedInputTokens, r.Want.CacheReadTokens, r.Want.OutputTokens, r.Want.ReasoningTokens = &in, &uncached, &cached, &out, &thoughts
	return r
}

// headlessUsage is the usage of a message of Qwen Code's headless output.
type headlessUsage struct {
	Input  int64  `json:"input_tokens"`
	Output int64  `json:"output_tokens"`
	Cached int64  `json:"cache_read_input_tokens"`
	Total  *int64 `json:"total_tokens"`
}
