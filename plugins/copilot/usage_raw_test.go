//go:build !wasip1

package copilot_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// copilotUsage is a session.shutdown modelMetrics entry's usage.
type copilotUsage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens, ReasoningTokens int64
}

func (u copilotUsage) list() [5]int64 {
	return [5]int64{u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens, u.ReasoningTokens}
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Copilot CLI events.jsonl with the figures computed from
// the raw file here: each session.shutdown states, per model, the
// session's totals so far (a resumed process restores them and repeats
// them plus its own), so a model's latest figures stand, unless one of
// its counters went down (a count that started again: the figures before
// are added); the models' figures are summed. inputTokens holds the cache
// reads and writes. A log with no shutdown states only its messages'
// outputTokens.
func TestSessionUsageMatchesRaw(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", "copilot", "*.jsonl"))
	shared, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "fixtures", "copilot", "*.jsonl"))
	files = append(files, shared...)
	if len(files) == 0 {
		t.Skip("no Copilot captures")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".jsonl"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			type model struct{ base, cur [5]int64 }
			models := map[string]*model{}
			shutdowns := 0
			var msgOutput int64
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var e struct {
					Type string `json:"type"`
					Data struct {
						ModelMetrics map[string]struct {
							Usage copilotUsage `json:"usage"`
						} `json:"modelMetrics"`
						OutputTokens int64 `json:"outputTokens"`
					} `json:"data"`
				}
				if json.Unmarshal(sc.Bytes(), &e) != nil {
					continue
				}
				switch e.Type {
				case "assistant.usage":
					t.Fatal("a capture with per-call usage: count it here as the plugin's doc says")
				case "assistant.message":
					msgOutput += e.Data.OutputTokens
				case "session.shutdown":
					shutdowns++
					for name, mm := range e.Data.ModelMetrics {
						m := models[name]
						if m == nil {
							m = &model{}
							models[name] = m
						}
						next := mm.Usage.list()
						for i := range next {
							if next[i] < m.cur[i] {
								for j := range m.base {
									m.base[j] += m.cur[j]
								}
								break
							}
						}
						m.cur = next
					}
				}
			}
			var want [5]int64 // all input, cache read, cache write, output, reasoning
			for _, m := range models {
				for i := range want {
					want[i] += m.base[i] + m.cur[i]
				}
			}
			res := plugintest.Run(t, copilot.Plugin, raw, normalize.Options{Provider: "copilot", Now: func() time.Time { return time.Unix(0, 0) }}).Result
			u := res.Usage
			if u == nil {
				u = &transcript.Usage{}
			}
			val := func(p *int64) int64 {
				if p == nil {
					return 0
				}
				return *p
			}
			if shutdowns == 0 {
				if val(u.OutputTokens) != msgOutput || val(u.InputTokens) != 0 {
					t.Errorf("no shutdown: twasm output %d input %d, raw messages' output %d", val(u.OutputTokens), val(u.InputTokens), msgOutput)
				}
				return
			}
			got := [5]int64{val(u.InputTokens), val(u.CacheReadTokens), val(u.CacheWriteTokens), val(u.OutputTokens), val(u.ReasoningTokens)}
			if got != want || val(u.UncachedInputTokens) != want[0]-want[1]-want[2] {
				t.Errorf("usage (all input, cache read, cache write, output, reasoning):\n twasm %v (uncached %d)\n raw   %v", got, val(u.UncachedInputTokens), want)
			}
		})
	}
}
