//go:build !wasip1

package copilot_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestConformance runs every real capture of ../shared/fixtures/copilot
// through the plugin: no fault, every tool call of the raw input becomes
// a tool.call, every piece of model text lands in an assistant block, and
// nothing is unmapped beyond the checked-in expectation
// (testdata/conformance).
func TestConformance(t *testing.T) {
	plugintest.Conformance{
		Plugin:   copilot.Plugin,
		Provider: "copilot",
		Facts:    func(_ *testing.T, raw []byte) ([]string, []string) { return copilotFacts(raw) },
		Messages: plugintest.Assistant,
	}.Test(t)
}

// copilotFacts reads a capture independently of the plugin (with
// encoding/json): every toolCallId (toolRequests, tool.execution_*) and
// every piece of model text (assistant.message content and reasoningText,
// message and reasoning deltas, assistant.reasoning content).
func copilotFacts(raw []byte) (ids, frags []string) {
	seen := map[string]bool{}
	str := func(v any) string { s, _ := v.(string); return s }
	addID := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		d := e.Data
		switch e.Type {
		case "assistant.message":
			frags = append(frags, str(d["content"]), str(d["reasoningText"]))
			trs, _ := d["toolRequests"].([]any)
			for _, tr := range trs {
				if m, ok := tr.(map[string]any); ok {
					addID(str(m["toolCallId"]))
				}
			}
		case "assistant.message_delta", "assistant.reasoning_delta":
			frags = append(frags, str(d["deltaContent"]))
		case "assistant.reasoning":
			frags = append(frags, str(d["content"]))
		case "tool.execution_start", "tool.execution_complete":
			addID(str(d["toolCallId"]))
		}
	}
	out := frags[:0]
	for _, f := range frags {
		if f != "" {
			out = append(out, f)
		}
	}
	return ids, out
}
