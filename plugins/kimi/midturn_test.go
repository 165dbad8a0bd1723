//go:build !wasip1

package kimi_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/transcript"
)

// TestMidTurn: `twasm sync` reads Kimi Code's wire.jsonl while the model
// answers: a step.begin whose step.end has not come (nor a turn.ended or
// turn.cancel) is a model call still streaming, a turn not finished:
// incomplete, even after a call's result or a text part; the log read
// once the step ended is settled as before. The Kimi CLI's wire log
// bounds each turn with TurnBegin and TurnEnd (a sub-agent's, inside
// SubagentEvent, do not count): one whose last TurnBegin has no TurnEnd
// is in the middle of a turn, even after an answer.
func TestMidTurn(t *testing.T) {
	code := plugintest.Testdata(t, "captures", "kimi", "av_code_tool_call.jsonl")
	legacy := plugintest.Testdata(t, "golden", "kimi", "legacy_side_question.jsonl")
	const stepEnd, stepBegin = `"type":"step.end"`, `"type":"step.begin"`
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"the first step streaming its call", plugintest.Cut(t, code, stepEnd, 1), transcript.StatusIncomplete},
		{"the second step streaming its answer", plugintest.Cut(t, code, stepEnd, 2), transcript.StatusIncomplete},
		{"between the steps, after the call's result", plugintest.Cut(t, code, stepBegin, 2), transcript.StatusOK},
		{"the whole log", code, transcript.StatusOK},
		{"legacy: the answer written, the turn not ended", plugintest.Cut(t, legacy, `"TurnEnd"`, 1), transcript.StatusIncomplete},
		{"legacy: the whole log", legacy, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugintest.WantStatus(t, kimi.Plugin, "kimi", tc.raw, tc.status)
		})
	}
}
