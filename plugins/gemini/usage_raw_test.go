//go:build !wasip1

package gemini_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
	"github.com/twasm/twasm/transcript"
)

// geminiTokens is a Gemini CLI session message's token object.
type geminiTokens struct {
	Input, Output, Cached, Thoughts, Tool, Total int64
}

type geminiMessage struct {
	ID     string        `json:"id"`
	Tokens *geminiTokens `json:"tokens"`
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Gemini CLI session (a .json session file, a .jsonl
// session log) with the figures computed from the raw file here: each
// model response (a message with tokens, once per message id: a log
// repeats a message it updates, and a /rewind's history patch repeats
// earlier ones) counts once; its input counts the cache, and its
// thoughts are billed as output, its tool-use prompt ("tool") as input.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: gemini.Plugin, Provider: "gemini",
		Inputs:   plugintest.UsageInputs(t, "gemini", false, "*session*.json", "*session*.jsonl"),
		Counters: []string{"input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "uncached_input_tokens"},
		Raw:      rawGeminiUsage,
	}.Test(t)
}

func rawGeminiUsage(t *testing.T, f string, raw []byte) plugintest.RawUsage {
	byID := map[string]geminiTokens{}
	var order []string
	keep := func(m geminiMessage) {
		if m.Tokens == nil {
			return
		}
		if _, ok := byID[m.ID]; !ok || m.ID == "" {
			order = append(order, m.ID)
		}
		byID[m.ID] = *m.Tokens
	}
	if strings.HasSuffix(f, ".json") {
		var s struct{ Messages []geminiMessage }
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for _, m := range s.Messages {
			keep(m)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m geminiMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				keep(m)
			}
			var patch struct {
				Set struct{ Messages []geminiMessage } `json:"$set"`
			}
			if json.Unmarshal(sc.Bytes(), &patch) == nil {
				for _, m := range patch.Set.Messages {
					keep(m)
				}
			}
		}
	}
	var in, cached, out, thoughts, total int64 // input with the tool-use prompt's, output with the thoughts
	for _, id := range order {
		tk := byID[id]
		in, cached, out, thoughts, total = in+tk.Input+tk.Tool, cached+tk.Cached, out+tk.Output+tk.Thoughts, thoughts+tk.Thoughts, total+tk.Total
	}
	// The API's total is prompt + candidates + tool-use prompt +
	// thoughts: every token stated is in input or output.
	if total != 0 && in+out != total {
		t.Errorf("raw: input %d + output %d != stated total %d", in, out, total)
	}
	uncached := in - cached
	return plugintest.RawUsage{Stated: len(order) > 0, Want: transcript.Usage{
		InputTokens: &in, CacheReadTokens: &cached, OutputTokens: &out, ReasoningTokens: &thoughts, TotalTokens: &total, UncachedInputTokens: &uncached,
	}}
}

// TestToolUsePromptTokens: the tool-use prompt's tokens ("tool", the
// API's toolUsePromptTokenCount, outside promptTokenCount and inside the
// stated total) are input, in a session file's message and in the json
// output's stats, so that input and output add up to the total the CLI
// states. No public capture has a non-zero one (the CLI's own tools run
// apart from the chat's model calls); the lines are the CLI's formats.
func TestToolUsePromptTokens(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"session log message", `{"sessionId":"s","projectHash":"p","startTime":"2026-01-01T00:00:00Z","kind":"main"}` + "\n" +
			`{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"find it"}]}` + "\n" +
			`{"id":"m1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"found","tokens":{"input":100,"output":10,"cached":20,"thoughts":5,"tool":30,"total":145},"model":"gemini-2.5-pro"}` + "\n"},
		{"json output stats", `{"response":"found","stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":1},"tokens":{"input":80,"prompt":100,"candidates":10,"total":145,"cached":20,"thoughts":5,"tool":30}}}}}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := plugintest.Run(t, gemini.Plugin, []byte(tc.in), normalize.Options{Provider: "gemini", Now: func() time.Time { return time.Unix(0, 0) }}).Result
			u := res.Usage
			if u == nil || u.InputTokens == nil || u.UncachedInputTokens == nil || u.OutputTokens == nil || u.TotalTokens == nil {
				t.Fatalf("usage %+v", u)
			}
			if *u.InputTokens != 130 || *u.UncachedInputTokens != 110 || *u.OutputTokens != 15 || *u.TotalTokens != 145 {
				t.Errorf("input %d uncached %d output %d total %d; want 130 (prompt 100 + tool-use prompt 30), 110, 15, 145",
					*u.InputTokens, *u.UncachedInputTokens, *u.OutputTokens, *u.TotalTokens)
			}
		})
	}
}

// TestStreamResultThoughtsUnstated: the stream-json result's stats
// (gemini-cli's convertToStreamStats) state output_tokens as the
// model's candidates alone and no thought tokens, while total_tokens is
// the API's total, thoughts (and any tool-use prompt) included. Where the
// total exceeds input + output, the output the transcript means (every
// output token, reasoning included) is not stated: output_tokens is left
// out, never the answer's part passed off as the whole, and a warning
// says what the stream stated. Where they add up, nothing was left out.
// The first case's figures are switchboard's resume capture's
// (gemini-3-flash-preview: 10194 + 7 = 10201, 278 short of 10479).
func TestStreamResultThoughtsUnstated(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	const head = `{"type":"init","timestamp":"2026-01-01T00:00:00.000Z","session_id":"s","model":"gemini-3-flash-preview"}` + "\n" +
		`{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","role":"user","content":"hi"}` + "\n" +
		`{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","role":"assistant","content":"ok","delta":true}` + "\n"
	for _, tc := range []struct {
		name, stats      string
		output, total    *int64
		input, cacheRead int64
		warn             string // a substring of the one warning wanted, "" for none
	}{
		{"thoughts in the total only", `{"total_tokens":10479,"input_tokens":10194,"output_tokens":7,"cached":7577,"input":2617,"duration_ms":2334,"tool_calls":0}`,
			nil, i(10479), 10194, 7577, "the stream's 7 are the answer's alone"},
		{"total adds up: no thoughts", `{"total_tokens":10179,"input_tokens":10178,"output_tokens":1,"cached":0,"input":10178,"duration_ms":1021,"tool_calls":0}`,
			i(1), i(10179), 10178, 0, ""},
		{"per-model figures only", `{"models":{"gemini-3-flash-preview":{"total_tokens":10479,"input_tokens":10194,"output_tokens":7,"cached":7577,"input":2617}}}`,
			nil, i(10479), 10194, 7577, "the stream's 7 are the answer's alone"},
		{"no total: cannot tell", `{"input_tokens":100,"output_tokens":5,"cached":0}`,
			i(5), nil, 100, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := head + `{"type":"result","timestamp":"2026-01-01T00:00:03.000Z","status":"success","stats":` + tc.stats + "}\n"
			res := plugintest.Run(t, gemini.Plugin, []byte(in), normalize.Options{Provider: "gemini", Now: func() time.Time { return time.Unix(0, 0) }}).Result
			u := res.Usage
			if u == nil || u.InputTokens == nil || *u.InputTokens != tc.input || u.CacheReadTokens == nil || *u.CacheReadTokens != tc.cacheRead {
				t.Fatalf("usage %+v; want input %d, cache read %d", u, tc.input, tc.cacheRead)
			}
			eq := func(name string, got, want *int64) {
				switch {
				case got == nil && want == nil:
				case got == nil || want == nil || *got != *want:
					g, w := "absent", "absent"
					if got != nil {
						g = strconv.FormatInt(*got, 10)
					}
					if want != nil {
						w = strconv.FormatInt(*want, 10)
					}
					t.Errorf("%s %s; want %s", name, g, w)
				}
			}
			eq("output_tokens", u.OutputTokens, tc.output)
			eq("total_tokens", u.TotalTokens, tc.total)
			if u.ReasoningTokens != nil {
				t.Errorf("reasoning_tokens %d; the stream states none", *u.ReasoningTokens)
			}
			var found bool
			for _, w := range res.Warnings {
				if strings.Contains(w, "thought") {
					found = tc.warn != "" && strings.Contains(w, tc.warn)
					if !found {
						t.Errorf("warning %q; want one containing %q", w, tc.warn)
					}
				}
			}
			if tc.warn != "" && !found {
				t.Errorf("warnings %q; want one containing %q", res.Warnings, tc.warn)
			}
		})
	}
}
