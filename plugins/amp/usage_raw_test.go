//go:build !wasip1

package amp_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/amp"
	"github.com/twasm/twasm/transcript"
)

// ampUsage is an Amp assistant message's usage.
type ampUsage struct {
	Model         string `json:"model"`
	Input         *int64 `json:"inputTokens"`
	Output        *int64 `json:"outputTokens"`
	CacheCreation *int64 `json:"cacheCreationInputTokens"`
	CacheRead     *int64 `json:"cacheReadInputTokens"`
	TotalInput    *int64 `json:"totalInputTokens"`
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Amp thread (a thread document, or versions of it one a line)
// with the figures read here from the raw file: each assistant message
// of a thread (by thread id and messageId: a later version repeats it)
// states its call's usage, the last version's standing; inputTokens is
// the uncached prompt, cacheCreationInputTokens and cacheReadInputTokens
// the parts written to and read from the cache (totalInputTokens their
// sum, read only when none is stated), except for OpenAI's models, whose
// uncached prompt Amp files under cacheCreationInputTokens (OpenAI bills
// no cache write). The thread's figures are the messages' sum, but for a
// fork's messages up to its forkPointIndex: copies of its parent's,
// whose usage is the parent's run's.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: amp.Plugin, Provider: "amp",
		Inputs:       plugintest.UsageInputs(t, "amp", true, "*.json", "*.jsonl"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"},
		AbsentIsZero: true,
		Raw:          rawAmpUsage,
	}.Test(t)
}

func rawAmpUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	type thread struct {
		ID             string `json:"id"`
		ForkPointIndex *int   `json:"forkPointIndex"`
		Messages       []struct {
			Role      string    `json:"role"`
			MessageID *int64    `json:"messageId"`
			Usage     *ampUsage `json:"usage"`
		} `json:"messages"`
	}
	var docs []thread
	var whole thread
	if json.Unmarshal(raw, &whole) == nil {
		docs = append(docs, whole)
	} else {
		for _, l := range plugintest.Lines(raw) {
			var d thread
			if json.Unmarshal(l, &d) == nil {
				docs = append(docs, d)
			}
		}
	}
	last := map[string]ampUsage{}
	var order []string
	for _, d := range docs {
		for i, m := range d.Messages {
			if m.Role != "assistant" || m.Usage == nil || d.ForkPointIndex != nil && i <= *d.ForkPointIndex {
				continue
			}
			id := "#" + strconv.Itoa(i)
			if m.MessageID != nil {
				id = strconv.FormatInt(*m.MessageID, 10)
			}
			key := d.ID + " " + id
			if _, ok := last[key]; !ok {
				order = append(order, key)
			}
			last[key] = *m.Usage
		}
	}
	var sum transcript.Usage
	stated := streamRawUsage(raw, &sum)
	for _, key := range order {
		u := last[key]
		uncached, write, read := plugintest.Val(u.Input), plugintest.Val(u.CacheCreation), plugintest.Val(u.CacheRead)
		if ampOpenAI(u.Model) {
			uncached, write = uncached+write, 0
		}
		f := plugintest.Figures(&uncached, &read, &write, plugintest.N(plugintest.Val(u.Output)), nil)
		if u.Input == nil && u.CacheCreation == nil && u.CacheRead == nil {
			f = transcript.Usage{InputTokens: u.TotalInput, OutputTokens: u.Output}
		}
		sum.Add(&f)
	}
	return plugintest.RawUsage{Stated: len(order) > 0 || stated, Want: sum}
}

// streamRawUsage adds to sum the usage of every assistant line of an
// amp --stream-json output of the main agent (parent_tool_use_id null:
// a sub-agent's tokens are its own run's), and reports whether any
// states one. input_tokens is the uncached prompt, except when it
// equals the two cache figures' sum (the announcement's example: the
// whole prompt).
func streamRawUsage(raw []byte, sum *transcript.Usage) bool {
	stated := false
	for _, l := range plugintest.Lines(raw) {
		var line struct {
			Type    string  `json:"type"`
			Parent  *string `json:"parent_tool_use_id"`
			Message struct {
				Usage *struct {
					Input  *int64 `json:"input_tokens"`
					Write  *int64 `json:"cache_creation_input_tokens"`
					Read   *int64 `json:"cache_read_input_tokens"`
					Output *int64 `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(l, &line) != nil || line.Type != "assistant" || line.Parent != nil || line.Message.Usage == nil {
			continue
		}
		u := line.Message.Usage
		uncached, write, read := plugintest.Val(u.Input), plugintest.Val(u.Write), plugintest.Val(u.Read)
		if uncached > 0 && uncached == write+read {
			uncached = 0
		}
		f := plugintest.Figures(&uncached, &read, &write, plugintest.N(plugintest.Val(u.Output)), nil)
		sum.Add(&f)
		stated = true
	}
	return stated
}

// ampOpenAI reports whether an Amp model is one of OpenAI's: gpt-*, or
// o followed by a digit (o1, o3, o4-mini), maybe after "openai/".
func ampOpenAI(model string) bool {
	s := strings.TrimPrefix(strings.ToLower(model), "openai/")
	return strings.HasPrefix(s, "gpt-") || len(s) >= 2 && s[0] == 'o' && s[1] >= '1' && s[1] <= '9'
}

// TestOpenAIPromptBuckets pins how Amp's three prompt buckets are read.
// Amp files every prompt token in one of them, totalInputTokens their
// sum (agentsview observed it in 172 of 172 usage records of real
// threads, three model families: docs/internal/session-format-sources.md
// at kenn-io/agentsview 5386007, MIT); for an OpenAI model inputTokens is
// 0 and cacheCreationInputTokens is the uncached remainder of the
// prompt, not the whole prompt: in the first case's figures (agentsview's
// fixture, a gpt-5 call after one of 18621 uncached tokens) the cache
// read is 140 of OpenAI's 128-token blocks and the two add up to the
// total. So the input is the three summed, cached tokens once, and for
// OpenAI's models the cache-creation figure is uncached input (OpenAI
// bills no cache write).
func TestOpenAIPromptBuckets(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name, model                   string
		uncached, read, write, output *int64
	}{
		{"gpt: cache creation is the uncached remainder", "gpt-5.6-sol", i(735), i(17920), nil, i(33)},
		{"o-series likewise", "o3", i(735), i(17920), nil, i(33)},
		{"claude: a cache write", "claude-sonnet-4-5", i(0), i(17920), i(735), i(33)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"v":3,"id":"T-00000000-0000-4000-8000-000000000001","created":1767348000000,"messages":[` +
				`{"role":"user","messageId":0,"content":[{"type":"text","text":"hi"}]},` +
				`{"role":"assistant","messageId":1,"content":[{"type":"text","text":"hello"}],"state":{"type":"complete","stopReason":"end_turn"},` +
				`"usage":{"model":"` + tc.model + `","inputTokens":0,"outputTokens":33,"totalInputTokens":18655,"cacheReadInputTokens":17920,"cacheCreationInputTokens":735}}]}` + "\n"
			u := plugintest.Run(t, amp.Plugin, []byte(doc), normalize.Options{Provider: "amp"}).Result.Usage
			if u == nil || u.InputTokens == nil || *u.InputTokens != 18655 {
				t.Fatalf("usage %+v; want input 18655 (the three buckets, totalInputTokens)", u)
			}
			for _, c := range []struct {
				name      string
				got, want *int64
			}{{"uncached", u.UncachedInputTokens, tc.uncached}, {"cache read", u.CacheReadTokens, tc.read}, {"cache write", u.CacheWriteTokens, tc.write}, {"output", u.OutputTokens, tc.output}} {
				if (c.got == nil) != (c.want == nil) || c.got != nil && *c.got != *c.want {
					t.Errorf("%s %s, want %s", c.name, figure(c.got), figure(c.want))
				}
			}
		})
	}
}

// figure is a counter as text ("absent" when it is not stated).
func figure(p *int64) string {
	if p == nil {
		return "absent"
	}
	return strconv.FormatInt(*p, 10)
}
