//go:build !wasip1

package claude_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/transcript"
)

// rawSessionUsage computes a session log's token figures from the raw
// file, independently of the plugin: every main-thread assistant line
// (not a sidechain) states its message's usage so far, so the last line
// of each message.id holds the message's figures; the session's are
// their sum. input is the uncached input as Anthropic states it. tiers
// are the messages' service tiers (usage.service_tier, the last a
// message's lines state, "" where none does), by message id.
func rawSessionUsage(t testing.TB, raw []byte) (in, write, write1h, read, out int64, tiers map[string]string, any bool) {
	t.Helper()
	type figures struct{ in, write, write1h, read, out int64 }
	last := map[string]figures{}
	tiers = map[string]string{}
	write1h = -1 // stated by no message
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type        string          `json:"type"`
			IsSidechain bool            `json:"isSidechain"`
			ForkedFrom  json.RawMessage `json:"forkedFrom"`
			Message     struct {
				ID    string `json:"id"`
				Usage *struct {
					Input         int64 `json:"input_tokens"`
					CacheCreation int64 `json:"cache_creation_input_tokens"`
					CacheRead     int64 `json:"cache_read_input_tokens"`
					Output        int64 `json:"output_tokens"`
					Split         *struct {
						H1 int64 `json:"ephemeral_1h_input_tokens"`
					} `json:"cache_creation"`
					Tier string `json:"service_tier"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "assistant" || line.IsSidechain || line.ForkedFrom != nil {
			continue // a record a fork copied (forkedFrom) is its parent's call
		}
		u := line.Message.Usage
		if u == nil || line.Message.ID == "" {
			continue
		}
		if _, ok := last[line.Message.ID]; !ok {
			order = append(order, line.Message.ID)
		}
		f := figures{u.Input, u.CacheCreation, -1, u.CacheRead, u.Output}
		if u.Split != nil {
			f.write1h = u.Split.H1
		}
		last[line.Message.ID] = f
		if u.Tier != "" || tiers[line.Message.ID] == "" {
			tiers[line.Message.ID] = u.Tier
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range order {
		f := last[id]
		in, write, read, out = in+f.in, write+f.write, read+f.read, out+f.out
		if f.write1h >= 0 {
			write1h = max(write1h, 0) + f.write1h
		}
	}
	return in, write, write1h, read, out, tiers, len(order) > 0
}

// stepTier is the tier of a step whose messages state tiers: theirs when
// every message states the same one, "mixed" when they differ.
func stepTier(tiers map[string]string, ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	tier := tiers[ids[0]]
	for _, id := range ids[1:] {
		if tiers[id] != tier {
			return transcript.ServiceTierMixed
		}
	}
	return tier
}

// rawSubAgentUsage computes what a session log's sub-agents used from the
// raw file: a sub-agent's assistant messages come as sidechain lines
// (isSidechain) or inside agent_progress records (data.message, Claude
// Code 2.1.x); each message counts once, by the last figure stated for
// its id in its sub-agent. [in, write, read, out].
func rawSubAgentUsage(t testing.TB, raw []byte) (sum [4]int64, any bool) {
	t.Helper()
	type usage struct {
		Input         int64 `json:"input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		Output        int64 `json:"output_tokens"`
	}
	type message struct {
		ID    string `json:"id"`
		Usage *usage `json:"usage"`
	}
	last := map[[2]string]usage{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type        string  `json:"type"`
			IsSidechain bool    `json:"isSidechain"`
			Message     message `json:"message"`
			Data        struct {
				Type     string `json:"type"`
				ParentID string `json:"parentToolUseID"`
				Message  struct {
					Type    string  `json:"type"`
					Message message `json:"message"`
				} `json:"message"`
			} `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		case line.Type == "assistant" && line.IsSidechain && line.Message.Usage != nil && line.Message.ID != "":
			last[[2]string{"sidechain", line.Message.ID}] = *line.Message.Usage
		case line.Type == "progress" && line.Data.Type == "agent_progress" && line.Data.Message.Type == "assistant":
			m := line.Data.Message.Message
			if m.Usage != nil && m.ID != "" {
				last[[2]string{line.Data.ParentID, m.ID}] = *m.Usage
			}
		}
	}
	for _, u := range last {
		sum[0] += u.Input
		sum[1] += u.CacheCreation
		sum[2] += u.CacheRead
		sum[3] += u.Output
	}
	return sum, len(last) > 0
}

// sessionLogs lists the Claude session logs among the real captures: the
// project's and the shared fixtures (skipped where absent). A session log
// has no result line: its usage is its messages'.
func sessionLogs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, f := range plugintest.UsageInputs(t, "claude", false, "*.jsonl") {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(`"sessionId"`)) && !bytes.Contains(raw, []byte(`"type":"result"`)) {
			files = append(files, f)
		}
	}
	return files
}

func val(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Claude session log with the figures computed from the
// raw file here: the last usage of each message.id, summed (a message
// split over several lines, tool results between them, is counted by
// its last line, as the log grows the figures), and the service tier
// of the step and of each message with what its lines state (every
// real log states "standard"). The sub-agents'
// messages are in their own scopes (child runs), each with its usage: a
// sub-run's usage is theirs.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: claude.Plugin, Provider: "claude",
		Inputs:   sessionLogs(t),
		Counters: []string{"uncached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_read_tokens", "output_tokens", "input_tokens", "service_tier"},
		Raw: func(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
			in, write, write1h, read, out, tiers, any := rawSessionUsage(t, raw)
			all := in + write + read
			ids := make([]string, 0, len(tiers))
			for id := range tiers {
				ids = append(ids, id)
			}
			r := plugintest.RawUsage{Stated: any, Want: transcript.Usage{
				UncachedInputTokens: &in, CacheWriteTokens: &write, CacheReadTokens: &read, OutputTokens: &out, InputTokens: &all,
				ServiceTier: stepTier(tiers, ids),
			}}
			if write1h >= 0 {
				r.Want.CacheWrite1hTokens = &write1h
			}
			return r
		},
		Check: func(t testing.TB, raw []byte, o *plugintest.Outcome) {
			var sub transcript.Usage
			_, _, _, _, _, tiers, _ := rawSessionUsage(t, raw)
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				m := it.Event.Message()
				if it.Scope != "" {
					sub.Add(m.Usage)
					continue
				}
				if want, ok := tiers[m.ID]; ok && !m.Usage.IsZero() && m.Usage.ServiceTier != want {
					t.Errorf("message %s: service_tier %q, its lines state %q", m.ID, m.Usage.ServiceTier, want)
				}
			}
			if want, ok := rawSubAgentUsage(t, raw); ok || !sub.IsZero() {
				got := [4]int64{val(sub.UncachedInputTokens), val(sub.CacheWriteTokens), val(sub.CacheReadTokens), val(sub.OutputTokens)}
				if got != want {
					t.Errorf("sub-agents' usage (uncached, cache write, cache read, output):\n twasm %v\n raw   %v", got, want)
				}
			}
		},
	}.Test(t)
}
