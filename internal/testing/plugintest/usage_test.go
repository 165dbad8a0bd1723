package plugintest

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestUsageSideCheck: UsageSide's comparison over the echo plugin (its
// usage: the "uncached" input and the cache "read" of each line, added):
// equal figures pass; a counter that differs is named; a raw input that
// states no usage must give a step that states none (unknown), not 0;
// AbsentIsZero compares a counter left out as 0, and without it a
// counter one side leaves out differs.
func TestUsageSideCheck(t *testing.T) {
	line := `{"text":"a","usage":{"uncached":10,"read":5}}` + "\n"
	none := `{"text":"a"}` + "\n"
	fig := Figures(N(10), N(5), nil, nil, nil) // input 15, uncached 10, read 5
	tests := []struct {
		name     string
		raw      string
		r        RawUsage
		counters []string
		zero     bool
		want     string // "" when it passes, else a fragment of the failure
	}{
		{"equal", line, RawUsage{Stated: true, Want: fig}, []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens"}, false, ""},
		{"differs", line, RawUsage{Stated: true, Want: Figures(N(10), N(6), nil, nil, nil)}, []string{"input_tokens", "cache_read_tokens"}, false, "usage differs in input_tokens, cache_read_tokens"},
		{"unknown, twasm states some", line, RawUsage{}, []string{"input_tokens"}, false, "states no usage (unknown)"},
		{"unknown, twasm states none", none, RawUsage{}, []string{"input_tokens"}, false, ""},
		{"stated, twasm states none", none, RawUsage{Stated: true, Want: fig}, []string{"input_tokens"}, false, "usage differs in input_tokens"},
		{"left out by one side", line, RawUsage{Stated: true, Want: transcript.Usage{InputTokens: N(15), CacheWriteTokens: N(0)}}, []string{"input_tokens", "cache_write_tokens"}, false, "usage differs in cache_write_tokens"},
		{"left out as 0", line, RawUsage{Stated: true, Want: transcript.Usage{InputTokens: N(15), CacheWriteTokens: N(0)}}, []string{"input_tokens", "cache_write_tokens"}, true, ""},
	}
	for _, tc := range tests {
		rec := &recorder{}
		s := UsageSide{Plugin: echoPlugin, Provider: "echo", Counters: tc.counters, AbsentIsZero: tc.zero}
		s.check(rec, []byte(tc.raw), tc.r)
		got := strings.Join(rec.errs, "\n")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: failures %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFigures: the input is the sum of the parts stated, the uncached
// input derived when it is not stated.
func TestFigures(t *testing.T) {
	u := Figures(nil, N(5), N(2), N(7), nil)
	if Val(u.InputTokens) != 7 || Val(u.UncachedInputTokens) != 0 || Val(u.OutputTokens) != 7 {
		t.Errorf("%s", usageJSON(&u))
	}
	if u := Figures(nil, nil, nil, N(3), nil); u.InputTokens != nil || u.UncachedInputTokens != nil {
		t.Errorf("no input stated, got %s", usageJSON(&u))
	}
}
