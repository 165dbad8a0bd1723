//go:build !wasip1

package qwen_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/plugins/qwen"
	"github.com/twasm/twasm/transcript"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Qwen Code session with the figures computed from the raw
// file here: each assistant record of the session (not a background
// sub-agent's, isSidechain) states its API call's usageMetadata once:
// promptTokenCount every input token, cachedContentTokenCount the part
// read from the cache, candidatesTokenCount the output, which holds
// thoughtsTokenCount when the stated total is prompt plus candidates
// (an OpenAI-compatible API) and does not when the total also adds the
// thoughts (Gemini's API, which bills them as output); the session's
// figures are their sum.
func TestSessionUsageMatchesRaw(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", "qwen", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("no Qwen Code captures")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".jsonl"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want [5]int64 // all input, uncached input, cache read, output, reasoning
			any := false
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var e struct {
					Type        string `json:"type"`
					IsSidechain bool   `json:"isSidechain"`
					Usage       *struct {
						Prompt     int64  `json:"promptTokenCount"`
						ToolPrompt int64  `json:"toolUsePromptTokenCount"`
						Cached     int64  `json:"cachedContentTokenCount"`
						Candidates int64  `json:"candidatesTokenCount"`
						Thoughts   int64  `json:"thoughtsTokenCount"`
						Total      *int64 `json:"totalTokenCount"`
					} `json:"usageMetadata"`
				}
				if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "assistant" || e.IsSidechain || e.Usage == nil {
					continue
				}
				u := e.Usage
				any = true
				in := u.Prompt + u.ToolPrompt
				out := u.Candidates
				if u.Total != nil && *u.Total == in+u.Candidates+u.Thoughts && u.Thoughts > 0 {
					out += u.Thoughts // beside the candidates: output all the same
				}
				for i, v := range []int64{in, in - u.Cached, u.Cached, out, u.Thoughts} {
					want[i] += v
				}
			}
			inst, err := capture.NativePlugin(qwen.Plugin).NewInstance(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer normalize.Close(inst)
			var c normalize.Collector
			res, err := normalize.Run(context.Background(), inst, bytes.NewReader(raw), &c, normalize.Options{
				Provider: "qwen", Now: func() time.Time { return time.Unix(0, 0) },
			})
			if err != nil {
				t.Fatal(err)
			}
			u := res.Usage
			if !any {
				if !u.IsZero() {
					t.Fatalf("the session states no usage, twasm reports %+v", u)
				}
				return
			}
			if u == nil {
				u = &transcript.Usage{}
			}
			val := func(p *int64) int64 {
				if p == nil {
					return 0 // a figure not stated is none
				}
				return *p
			}
			got := [5]int64{val(u.InputTokens), val(u.UncachedInputTokens), val(u.CacheReadTokens), val(u.OutputTokens), val(u.ReasoningTokens)}
			if got != want {
				t.Errorf("usage (all input, uncached, cache read, output, reasoning):\n twasm %v\n raw   %v", got, want)
			}
		})
	}
}
