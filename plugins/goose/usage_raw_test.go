//go:build !wasip1

package goose_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/transcript"
)

// gooseCounters are a Goose session record's token counters: the
// accumulated ones (the session's, over every call) or the plain ones.
type gooseCounters struct {
	Input, Output, CacheRead, CacheWrite, Total *int64
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Goose session (sessions.db rows, or an older session file)
// with the figures read here from the raw input: the session record
// (the sessions row, or the session file's metadata line) states the
// session's totals in its accumulated counters, so its last version
// stands; a record with neither accumulated input nor output (an older
// Goose kept only the plain counters, the last model call's) states
// none. Input counts the cache read and write.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: goose.Plugin, Provider: "goose",
		Inputs:       plugintest.UsageInputs(t, "goose", true, "*.jsonl"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "total_tokens"},
		AbsentIsZero: true,
		Raw:          rawGooseUsage,
	}.Test(t)
}

func rawGooseUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	type record struct {
		WorkingDir *string `json:"working_dir"`
		Input      *int64  `json:"input_tokens"`
		Output     *int64  `json:"output_tokens"`
		CacheRead  *int64  `json:"cache_read_tokens"`
		CacheWrite *int64  `json:"cache_write_tokens"`
		Total      *int64  `json:"total_tokens"`
		AccInput   *int64  `json:"accumulated_input_tokens"`
		AccOutput  *int64  `json:"accumulated_output_tokens"`
		AccRead    *int64  `json:"accumulated_cache_read_tokens"`
		AccWrite   *int64  `json:"accumulated_cache_write_tokens"`
		AccTotal   *int64  `json:"accumulated_total_tokens"`
		// goose run --output-format stream-json's complete event
		// states the session's counters under these names.
		Type        string `json:"type"`
		StreamRead  *int64 `json:"cache_read_input_tokens"`
		StreamWrite *int64 `json:"cache_write_input_tokens"`
	}
	var last *gooseCounters
	lines := plugintest.Lines(raw)
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		// goose session export --format json: the session record as one
		// (pretty-printed) document.
		lines = [][]byte{t}
	}
	for _, l := range lines {
		var line struct {
			Twasm string `json:"$twasm"`
			Table string `json:"table"`
			Row   record `json:"row"`
			record
		}
		if json.Unmarshal(l, &line) != nil {
			continue
		}
		rec := line.record // a session file's metadata line
		switch {
		case line.Type == "complete" && line.Twasm == "":
			// The end of a stream-json run: the session's counters,
			// input counting cached tokens.
			last = &gooseCounters{rec.Input, rec.Output, rec.StreamRead, rec.StreamWrite, rec.Total}
			if rec.Input == nil && rec.Output == nil {
				last = &gooseCounters{}
			}
			continue
		case line.Twasm == "row" && line.Table == "sessions":
			rec = line.Row
		case line.Twasm != "" || rec.WorkingDir == nil:
			continue
		}
		// The plain counters are the last model call's, not the
		// session's (update_session_metrics overwrites them each call):
		// a record with only those states no session usage.
		last = &gooseCounters{rec.AccInput, rec.AccOutput, rec.AccRead, rec.AccWrite, rec.AccTotal}
		if rec.AccInput == nil && rec.AccOutput == nil {
			last = &gooseCounters{}
		}
	}
	if last == nil || *last == (gooseCounters{}) {
		return plugintest.RawUsage{}
	}
	u := transcript.Usage{InputTokens: last.Input, CacheReadTokens: last.CacheRead, CacheWriteTokens: last.CacheWrite, OutputTokens: last.Output, TotalTokens: last.Total}
	if last.Input != nil {
		n := *last.Input
		for _, p := range []*int64{last.CacheRead, last.CacheWrite} {
			if p != nil {
				n -= *p
			}
		}
		u.UncachedInputTokens = &n
	}
	return plugintest.RawUsage{Stated: true, Want: u}
}
