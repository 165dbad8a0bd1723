//go:build !wasip1

package kimi_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/transcript"
)

// TestMidTurn: `twasm sync` reads Kimi Code's wire.jsonl while the model
// answers: a step.begin whose step.end has not come (nor a turn.ended or
// turn.cancel) is a model call still streaming, a turn not finished:
// incomplete, even after a call's result or a text part; the log read
// once the step ended is settled as before.
func TestMidTurn(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captures", "kimi", "av_code_tool_call.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	// upTo is the log up to (without) the n-th line holding s.
	upTo := func(s string, n int) []byte {
		for i, l := range lines {
			if bytes.Contains(l, []byte(s)) {
				if n--; n == 0 {
					return bytes.Join(lines[:i], nil)
				}
			}
		}
		t.Fatalf("no line %q", s)
		return nil
	}
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"the first step streaming its call", upTo(`"type":"step.end"`, 1), transcript.StatusIncomplete},
		{"the second step streaming its answer", upTo(`"type":"step.end"`, 2), transcript.StatusIncomplete},
		{"between the steps, after the call's result", upTo(`"type":"step.begin"`, 2), transcript.StatusOK},
		{"the whole log", raw, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, kimi.Plugin, tc.raw, normalize.Options{Provider: "kimi"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}

// TestMidTurnLegacy: the Kimi CLI's wire log bounds each turn with
// TurnBegin and TurnEnd (a sub-agent's, inside SubagentEvent, do not
// count): a log whose last TurnBegin has no TurnEnd is in the middle of
// a turn, incomplete, even after an answer; with its TurnEnd it is
// settled as before.
func TestMidTurnLegacy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, "legacy_side_question.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(raw, []byte(`"TurnEnd"`))
	if i < 0 {
		t.Fatal("no TurnEnd")
	}
	cut := raw[:bytes.LastIndexByte(raw[:i], '\n')+1]
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"the answer written, the turn not ended", cut, transcript.StatusIncomplete},
		{"the whole log", raw, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, kimi.Plugin, tc.raw, normalize.Options{Provider: "kimi"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}
