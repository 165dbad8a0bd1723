//go:build !wasip1

package pi_test

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
	"github.com/twasm/twasm/plugins/pi"
	"github.com/twasm/twasm/transcript"
)

// TestSessionUsageMatchesRaw compares the step usage the plugin reports
// for every real Pi session with the figures computed from the raw file
// here: every assistant message entry states its response's usage once
// (input is the uncached input), on every branch of the session tree (a
// response on an abandoned branch was billed all the same); the
// session's are their sum.
func TestSessionUsageMatchesRaw(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", "pi", "*.jsonl"))
	shared, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "fixtures", "pi", "*.jsonl"))
	files = append(files, shared...)
	if len(files) == 0 {
		t.Skip("no Pi captures")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".jsonl"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want [5]int64 // uncached, cache read, cache write, output, stated total
			any := false
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var e struct {
					Type    string `json:"type"`
					Message struct {
						Role  string `json:"role"`
						Usage *struct {
							Input, Output, CacheRead, CacheWrite, TotalTokens int64
						} `json:"usage"`
					} `json:"message"`
				}
				if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "message" || e.Message.Role != "assistant" || e.Message.Usage == nil {
					continue
				}
				u := e.Message.Usage
				any = true
				for i, v := range []int64{u.Input, u.CacheRead, u.CacheWrite, u.Output, u.TotalTokens} {
					want[i] += v
				}
			}
			inst, err := capture.NativePlugin(pi.Plugin).NewInstance(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer normalize.Close(inst)
			var c normalize.Collector
			res, err := normalize.Run(context.Background(), inst, bytes.NewReader(raw), &c, normalize.Options{
				Provider: "pi", Now: func() time.Time { return time.Unix(0, 0) },
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
					return -1
				}
				return *p
			}
			got := [5]int64{val(u.UncachedInputTokens), val(u.CacheReadTokens), val(u.CacheWriteTokens), val(u.OutputTokens), val(u.TotalTokens)}
			if got != want || val(u.InputTokens) != want[0]+want[1]+want[2] {
				t.Errorf("usage (uncached, cache read, cache write, output, stated total):\n twasm %v (all input %d)\n raw   %v", got, val(u.InputTokens), want)
			}
		})
	}
}
