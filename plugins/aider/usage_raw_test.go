//go:build !wasip1

package aider_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/aider"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every Aider chat history (captures, golden inputs, shared
// fixtures) with the figures read here from the raw file: every
// "> Tokens: N sent, N cache write, N cache hit, N received." line is one
// reply's usage as Aider printed it (sent every input token, the cache
// hit and write its cached parts), and the history's figures are their
// sum (not counting a SEARCH/REPLACE block's lines, a file's content). A
// history without such a line states no usage.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: aider.Plugin, Provider: "aider",
		Inputs:       plugintest.UsageInputs(t, "aider", true, "*.md"),
		Counters:     []string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"},
		AbsentIsZero: true,
		Raw:          rawAiderUsage,
	}.Test(t)
}

var reOldUsage = regexp.MustCompile(`^(\d+) prompt tokens, (\d+) completion tokens`)

func rawAiderUsage(t *testing.T, _ string, raw []byte) plugintest.RawUsage {
	var r plugintest.RawUsage
	var sent, hit, write, received int64
	inBlock := false // a SEARCH/REPLACE block's lines are a file's, not Aider's
	for _, l := range plugintest.Lines(raw) {
		switch t := string(bytes.TrimSpace(l)); {
		case strings.HasPrefix(t, "<<<<<<< SEARCH"):
			inBlock = true
		case strings.HasPrefix(t, ">>>>>>> REPLACE"):
			inBlock = false
		}
		if inBlock {
			continue
		}
		s := strings.TrimSpace(string(bytes.TrimPrefix(bytes.TrimSpace(l), []byte(">"))))
		if m := reOldUsage.FindStringSubmatch(s); m != nil {
			// Aider v0.11 to v0.45: "1234 prompt tokens, 56 completion
			// tokens, $0.001 cost".
			sent += aiderFigure(t, m[1])
			received += aiderFigure(t, m[2])
			r.Stated = true
			continue
		}
		figures, ok := strings.CutPrefix(s, "Tokens: ")
		if !ok {
			continue
		}
		figures, _, _ = strings.Cut(figures, ". Cost:")
		for _, part := range strings.Split(strings.TrimSuffix(figures, "."), ", ") {
			num, what, _ := strings.Cut(part, " ")
			v := aiderFigure(t, num)
			switch what {
			case "sent":
				sent += v
			case "cache hit":
				hit += v
			case "cache write":
				write += v
			case "received":
				received += v
			default:
				t.Fatalf("a Tokens line's part %q: not one Aider prints", part)
			}
			r.Stated = true
		}
	}
	r.Want = plugintest.Figures(plugintest.N(sent-hit-write), &hit, &write, &received, nil)
	return r
}

// aiderFigure reads a count as Aider prints it: 839, 1,234, 3.2k, 12k,
// 1.5M (decimal, read exactly: 3.2k is 3200).
func aiderFigure(t *testing.T, s string) int64 {
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mul, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mul, s = 1000000, strings.TrimSuffix(s, "M")
	}
	whole, frac, _ := strings.Cut(strings.ReplaceAll(s, ",", ""), ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		t.Fatalf("count %q: %v", s, err)
	}
	v := w * mul
	for scale := mul / 10; frac != ""; frac, scale = frac[1:], scale/10 {
		v += int64(frac[0]-'0') * scale
	}
	return v
}
