//go:build !wasip1

package cline_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
)

// TestRooGrossInput: Roo Code 3.29.5 (released 2025-11-01,
// RooCodeInc/Roo-Code#8954) and Kilo Code 4.119.0 (2025-11-12) write an
// Anthropic-protocol request's tokensIn as calculateApiCostAnthropic's
// totalInputTokens: the input plus the cache written and read (Task.ts,
// "tokensIn: costResult.totalInputTokens"; src/shared/cost.ts). Before,
// the plugin added the cache to it again, as it must for older Roo and for
// Cline, which keep the three disjoint: a request of 4,200 input tokens,
// 3,000 of them read from the cache, counted 7,380. The record names no
// version: a tokensIn below the cache is the uncached rest, and so is a
// request made before the release; over the OpenAI protocol tokensIn was
// always the whole prompt. Figures as a real Roo task's requests state
// them (apiProtocol, tokensIn, tokensOut, cacheWrites, cacheReads, cost),
// written for the test.
func TestRooGrossInput(t *testing.T) {
	const (
		after  = 1767225600000 // 2026-01-01
		before = 1756684800000 // 2025-09-01
		gap    = 1762300800000 // 2025-11-05: after Roo's release, before Kilo's
	)
	tests := []struct {
		name, store, proto string
		ts, in, cw, cr     int64
		input              int64
	}{
		{"Roo, Anthropic protocol, current: the whole prompt", "Roo Code tasks (Code)", "anthropic", after, 4200, 180, 3000, 4200},
		{"Roo, Anthropic protocol, before the release: the uncached rest", "Roo Code tasks (Code)", "anthropic", before, 4200, 180, 3000, 7380},
		{"Roo, below its cache: the uncached rest whenever made", "Roo Code tasks (Code)", "anthropic", after, 10, 1729, 35617, 37356},
		{"Roo, OpenAI protocol: the whole prompt", "Roo Code tasks (Code)", "openai", before, 700, 40, 300, 700},
		{"Kilo, between Roo's release and its own: the uncached rest", "Kilo Code tasks (Code)", "anthropic", gap, 4200, 180, 3000, 7380},
		{"Roo, the same day: the whole prompt", "Roo Code tasks (Code)", "anthropic", gap, 4200, 180, 3000, 4200},
		{"Cline (no apiProtocol): disjoint", "Cline tasks", "", after, 4200, 180, 3000, 7380},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := `{\"tokensIn\":` + strconv.FormatInt(tt.in, 10) + `,\"tokensOut\":412,\"cacheWrites\":` + strconv.FormatInt(tt.cw, 10) +
				`,\"cacheReads\":` + strconv.FormatInt(tt.cr, 10) + `,\"cost\":0.0172`
			if tt.proto != "" {
				info = `{\"apiProtocol\":\"` + tt.proto + `\",` + info[1:]
			}
			info += "}"
			ts := strconv.FormatInt(tt.ts, 10)
			raw := `{"$twasm":"source","store":"` + tt.store + `","path":"` + ts + `","name":"` + ts + `","size":1,"mtime":"2026-01-01T00:05:00Z"}` + "\n" +
				`{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n" +
				`[{"ts":` + ts + `,"type":"say","say":"text","text":"Fix the build"},` +
				`{"ts":` + strconv.FormatInt(tt.ts+1000, 10) + `,"type":"say","say":"api_req_started","text":"` + info + `"},` +
				`{"ts":` + strconv.FormatInt(tt.ts+2000, 10) + `,"type":"say","say":"completion_result","text":"Fixed."}]` + "\n"
			r, err := sdktest.Run(context.Background(), cline.Plugin, "roo", []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			u := r.Step.Usage
			v := func(p *int64) int64 {
				if p == nil {
					return -1
				}
				return *p
			}
			if u == nil {
				t.Fatal("no usage")
			}
			if v(u.InputTokens) != tt.input || v(u.CacheReadTokens) != tt.cr || v(u.CacheWriteTokens) != tt.cw || v(u.OutputTokens) != 412 {
				t.Errorf("usage input %d, cache read %d, written %d, output %d; want %d, %d, %d, 412",
					v(u.InputTokens), v(u.CacheReadTokens), v(u.CacheWriteTokens), v(u.OutputTokens), tt.input, tt.cr, tt.cw)
			}
		})
	}
}

// TestClineGrossProviders: Cline's tokensIn is what its provider's
// handler yields as inputTokens. Most subtract the cache first (the
// disjoint buckets Cline's metrics expect); the OpenAI-compatible
// provider (src/core/api/providers/openai.ts: inputTokens
// usage.prompt_tokens, cacheReadTokens prompt_tokens_details.cached_tokens),
// xAI's and a few others pass the whole prompt, the cache read included.
// Before, a request of 1,000 prompt tokens, 600 of them cached, counted
// 1,600 over those providers. The request's modelInfo.providerId (Cline
// 3.x) says which; a tokensIn below its cache is the uncached rest
// whichever provider wrote it.
func TestClineGrossProviders(t *testing.T) {
	tests := []struct {
		name, provider string
		in, cr         int64
		input          int64
	}{
		{"OpenAI-compatible: the whole prompt", "openai", 1000, 600, 1000},
		{"xAI: the whole prompt", "xai", 1000, 600, 1000},
		{"Anthropic: disjoint", "anthropic", 1000, 600, 1600},
		{"Cline's own: disjoint", "cline", 1000, 600, 1600},
		{"OpenAI-compatible below its cache: disjoint", "openai", 10, 600, 610},
		{"no modelInfo: disjoint", "", 1000, 600, 1600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := ""
			if tt.provider != "" {
				info = `,"modelInfo":{"providerId":"` + tt.provider + `","modelId":"m","mode":"act"}`
			}
			raw := `{"$twasm":"source","store":"Cline tasks","path":"1767225600000","name":"1767225600000","size":1,"mtime":"2026-01-01T00:05:00Z"}` + "\n" +
				`{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}` + "\n" +
				`[{"ts":1767225600000,"type":"say","say":"task","text":"Fix the build"` + info + `},` +
				`{"ts":1767225601000,"type":"say","say":"api_req_started","text":"{\"tokensIn\":` + strconv.FormatInt(tt.in, 10) + `,\"tokensOut\":50,\"cacheWrites\":0,\"cacheReads\":` + strconv.FormatInt(tt.cr, 10) + `,\"cost\":0.001}"` + info + `},` +
				`{"ts":1767225602000,"type":"say","say":"completion_result","text":"Fixed."` + info + `}]` + "\n"
			r, err := sdktest.Run(context.Background(), cline.Plugin, "cline", []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			u := r.Step.Usage
			if u == nil || u.InputTokens == nil || u.CacheReadTokens == nil {
				t.Fatalf("usage %+v", u)
			}
			if *u.InputTokens != tt.input || *u.CacheReadTokens != tt.cr {
				t.Errorf("input %d, cache read %d; want %d, %d", *u.InputTokens, *u.CacheReadTokens, tt.input, tt.cr)
			}
		})
	}
}
