//go:build !wasip1

package copilot_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// TestSubAgentOutputCountedOnce: session.shutdown's modelMetrics count
// every call of the session, the sub-agents' too (in both real captures
// its outputTokens is the sum of every assistant.message's), while each
// sub-agent's messages, with their outputTokens, go to its child run,
// which usage and stats count from its messages. The step's output is
// therefore the main agent's, and step plus child runs is the
// shutdown's figure, once. Before, the step held the shutdown's whole
// figure and the children's output counted a second time (fanout: 2630
// + 1060). Figures by hand from the raw files.
func TestSubAgentOutputCountedOnce(t *testing.T) {
	for _, tc := range []struct {
		capture         string
		step, sub, full int64
	}{
		{"irrlicht_events_v1.0.78_subagent_fanout.jsonl", 1570, 1060, 2630},
		{"irrlicht_events_v1.0.78_subagent_tool_failures.jsonl", 1872, 261, 2133},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			raw := plugintest.Testdata(t, "captures", "copilot", tc.capture)
			o := plugintest.Run(t, copilot.Plugin, raw, normalize.Options{Provider: "copilot"})
			var sub int64
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant || it.Scope == "" {
					continue
				}
				if u := it.Event.Message().Usage; u != nil && u.OutputTokens != nil {
					sub += *u.OutputTokens
				}
			}
			var step int64 = -1
			if u := o.Result.Usage; u != nil && u.OutputTokens != nil {
				step = *u.OutputTokens
			}
			if step != tc.step || sub != tc.sub || step+sub != tc.full {
				t.Errorf("step output %d, sub-agents' %d (together %d), want %d, %d (%d)", step, sub, step+sub, tc.step, tc.sub, tc.full)
			}
		})
	}
}
