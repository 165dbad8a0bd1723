//go:build !wasip1

package pi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/pi"
)

// TestConformance runs every real capture of testdata/captures/pi and
// every golden input through the plugin and checks it against facts read
// from the raw input apart from the plugin (with encoding/json): no line
// lost to a fault, every tool call a tool.call, every piece of model text
// in an assistant block, the step's tokens and cost the sums of the
// responses' own, and nothing unmapped in a real capture.
func TestConformance(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(captureDir, "*.jsonl"))
	golden, _ := filepath.Glob(filepath.Join(goldenDir, "*.jsonl"))
	for _, g := range golden {
		if !strings.HasSuffix(g, ".golden.jsonl") {
			files = append(files, g)
		}
	}
	if len(files) == 0 {
		t.Fatal("no captures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			o := plugintest.Run(t, pi.Plugin, raw, normalize.Options{Provider: "pi"})
			if o.Result.FailedLines != 0 {
				t.Errorf("failed lines: %d, warnings %q", o.Result.FailedLines, o.Result.Warnings)
			}
			fx := piFacts(raw)
			o.CheckCalls(t, fx.calls)
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
			var in, out int64
			if u := o.Result.Usage; u != nil {
				if u.InputTokens != nil {
					in = *u.InputTokens
				}
				if u.OutputTokens != nil {
					out = *u.OutputTokens
				}
			}
			if in != fx.input || out != fx.output {
				t.Errorf("usage: input %d output %d, the responses state %d and %d", in, out, fx.input, fx.output)
			}
			if fx.costs > 0 && (o.Result.CostUSD == nil || abs(*o.Result.CostUSD-fx.cost) > 1e-9) {
				t.Errorf("cost %v, the responses state %v", show(o.Result.CostUSD), fx.cost)
			}
			if strings.HasPrefix(f, captureDir) && len(o.Result.Unmapped) > 0 {
				t.Errorf("unmapped in a real capture: %v", o.Result.Unmapped)
			}
		})
	}
}

func show(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// facts are what a capture states, read apart from the plugin.
type facts struct {
	calls, texts  []string
	input, output int64
	cost          float64
	costs         int
}

// piFacts reads the step's own messages (entries and message_end events;
// not a sub-agent's, which stay in its child run).
// An entry id seen before is the same entry again (a file copied after
// itself).
func piFacts(raw []byte) facts {
	var fx facts
	seen := map[string]bool{}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Message struct {
				Role    string `json:"role"`
				Content json.RawMessage
				Usage   *struct {
					Input, Output, CacheRead, CacheWrite int64
					Cost                                 *struct{ Total *float64 }
				}
			} `json:"message"`
		}
		if json.Unmarshal(l, &e) != nil || (e.Type != "message" && e.Type != "message_end") || e.Message.Role != "assistant" || seen[e.ID] {
			continue
		}
		if e.ID != "" {
			seen[e.ID] = true
		}
		var parts []struct{ Type, Text, Thinking, ID string }
		_ = json.Unmarshal(e.Message.Content, &parts)
		for _, p := range parts {
			switch p.Type {
			case "toolCall":
				fx.calls = append(fx.calls, p.ID)
			case "text":
				fx.texts = append(fx.texts, p.Text)
			case "thinking":
				fx.texts = append(fx.texts, p.Thinking)
			}
		}
		if u := e.Message.Usage; u != nil {
			fx.input += u.Input + u.CacheRead + u.CacheWrite
			fx.output += u.Output
			if u.Cost != nil && u.Cost.Total != nil {
				fx.cost += *u.Cost.Total
				fx.costs++
			}
		}
	}
	return fx
}
