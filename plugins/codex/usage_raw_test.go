//go:build !wasip1

package codex_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/plugins/codex"
)

// codexUsage is a Codex usage object; a figure it leaves out is nil.
type codexUsage struct {
	Input     *int64 `json:"input_tokens"`
	Cached    *int64 `json:"cached_input_tokens"`
	Output    *int64 `json:"output_tokens"`
	Reasoning *int64 `json:"reasoning_output_tokens"`
	Total     *int64 `json:"total_tokens"`
}

func (u *codexUsage) add(o *codexUsage) {
	add := func(dst **int64, v *int64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *v
	}
	add(&u.Input, o.Input)
	add(&u.Cached, o.Cached)
	add(&u.Output, o.Output)
	add(&u.Reasoning, o.Reasoning)
	add(&u.Total, o.Total)
}

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Codex exec --json output and rollout with the figures
// computed from the raw file here: an exec output's turn.completed usage
// (one per process, in these captures), or a rollout's running totals
// (token_count info.total_token_usage): the last one of each process,
// which covers every response of it, also those whose own token_count is
// not in the file, summed over the processes that wrote to the rollout
// (a resumed session: each starts with session_meta, its counter from 0;
// a total that goes down also says a new counter). Input counts the
// cache read; the uncached input is the difference.
func TestSessionUsageMatchesRaw(t *testing.T) {
	var files []string
	for _, dir := range []string{filepath.Join("..", "..", "testdata", "captures", "codex"), filepath.Join("..", "..", "..", "shared", "fixtures", "codex")} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no Codex captures")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".jsonl"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want codexUsage
			turns := 0
			var last *codexUsage // the latest running total
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var line struct {
					Type    string      `json:"type"`
					Usage   *codexUsage `json:"usage"`
					Payload struct {
						Type string `json:"type"`
						Info *struct {
							Total *codexUsage `json:"total_token_usage"`
						} `json:"info"`
					} `json:"payload"`
				}
				if json.Unmarshal(sc.Bytes(), &line) != nil {
					continue
				}
				switch {
				case line.Type == "turn.completed" && line.Usage != nil:
					turns++
					want.add(line.Usage)
				case line.Type == "session_meta" && last != nil:
					want.add(last)
					last = nil
				case line.Type == "event_msg" && line.Payload.Type == "token_count" && line.Payload.Info != nil && line.Payload.Info.Total != nil:
					tot := line.Payload.Info.Total
					if last != nil && tot.Input != nil && last.Input != nil && *tot.Input < *last.Input {
						want.add(last)
					}
					last = tot
				}
			}
			if last != nil {
				want.add(last)
			}
			if turns > 1 {
				t.Skip("several turn.completed: cumulative or not is the plugin's reading to judge")
			}
			inst, err := capture.NativePlugin(codex.Plugin).NewInstance(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer normalize.Close(inst)
			var c normalize.Collector
			res, err := normalize.Run(context.Background(), inst, bytes.NewReader(raw), &c, normalize.Options{
				Provider: "codex", Now: func() time.Time { return time.Unix(0, 0) },
			})
			if err != nil {
				t.Fatal(err)
			}
			var got codexUsage
			if u := res.Usage; u != nil {
				got = codexUsage{Input: u.InputTokens, Cached: u.CacheReadTokens, Output: u.OutputTokens, Reasoning: u.ReasoningTokens, Total: u.TotalTokens}
				if n, ok := u.Uncached(); ok && u.InputTokens != nil {
					var cached int64
					if u.CacheReadTokens != nil {
						cached = *u.CacheReadTokens
					}
					if n != *u.InputTokens-cached {
						t.Errorf("uncached input %d, want %d - %d", n, *u.InputTokens, cached)
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("usage:\n twasm %s\n raw   %s", g, w)
			}
		})
	}
}
