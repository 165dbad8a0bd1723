//go:build !wasip1

package pi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Pi session (captures, golden inputs, shared fixtures) with
// the figures computed from the raw file here: every assistant message
// entry states its response's usage once (input is the uncached input;
// an entry id seen before is the same entry, a file copied after
// itself), on every branch of the session tree (a response on an
// abandoned branch was billed all the same), as does every assistant
// message_end event of the json mode's output; the session's are their
// sum. The entries a fork copied from its parent (forkCopy) are the
// parent's responses, counted in its run.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: pi.Plugin, Provider: "pi",
		Inputs:   plugintest.UsageInputs(t, "pi", true, "*.jsonl"),
		Counters: []string{"uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "total_tokens", "input_tokens"},
		Raw:      rawPiUsage,
	}.Test(t)
}

func rawPiUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	var r plugintest.RawUsage
	var in, read, write, out, total int64
	seen := map[string]bool{} // an entry id seen before: the same entry again (a file copied after itself)
	var fork forkCopy
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if fork.copied(sc.Bytes()) {
			continue // the parent session's response, counted in its run
		}
		var e struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Message struct {
				Role  string `json:"role"`
				Usage *struct {
					Input, Output, CacheRead, CacheWrite, TotalTokens int64
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "message" && e.Type != "message_end" || e.Message.Role != "assistant" || e.Message.Usage == nil || seen[e.ID] {
			continue
		}
		if e.ID != "" {
			seen[e.ID] = true
		}
		u := e.Message.Usage
		r.Stated = true
		in, read, write, out, total = in+u.Input, read+u.CacheRead, write+u.CacheWrite, out+u.Output, total+u.TotalTokens
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	all := in + read + write
	r.Want.UncachedInputTokens, r.Want.CacheReadTokens, r.Want.CacheWriteTokens, r.Want.OutputTokens, r.Want.TotalTokens, r.Want.InputTokens = &in, &read, &write, &out, &total, &all
	return r
}
