//go:build !wasip1

package droid_test

import (
	"bytes"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/droid"
	"github.com/twasm/twasm/transcript"
)

// TestMidTurn: `twasm sync` reads a Droid session log while Droid writes
// it. A Droid that ends each turn with agent_turn_outcome, read after
// the last turn's messages and before its outcome, is in the middle of
// a turn: incomplete, even after an answer; a log without any outcome
// (older Droids) is left to the host's session rule.
func TestMidTurn(t *testing.T) {
	raw := plugintest.Testdata(t, "golden", "droid", "session_turn_outcome_compaction.jsonl")
	old := plugintest.Testdata(t, "golden", "droid", "session_call_id_reused.jsonl")
	// The first turn, then its outcome; answer is the turn's last line
	// (its answer, message id a2).
	before := plugintest.Cut(t, raw, `"type":"agent_turn_outcome"`, 1)
	withOutcome := raw[:len(before)+bytes.IndexByte(raw[len(before):], '\n')+1]
	answer := before[bytes.LastIndexByte(before[:len(before)-1], '\n')+1:]
	if !bytes.Contains(answer, []byte(`"id":"a2"`)) {
		t.Fatalf("the first turn's last line is not its answer a2: %s", answer)
	}
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		// A second turn's answer (the first one's under a new id)
		// without its outcome yet.
		{"the answer written, the turn's outcome not yet", append(append([]byte{}, withOutcome...), bytes.Replace(answer, []byte(`"id":"a2"`), []byte(`"id":"a9"`), 1)...), transcript.StatusIncomplete},
		{"the first turn's answer read again (a replay) after its outcome", append(append([]byte{}, withOutcome...), answer...), transcript.StatusOK},
		{"the first turn with its outcome", withOutcome, transcript.StatusOK},
		{"a log without outcomes: the session rule", old, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugintest.WantStatus(t, droid.Plugin, "droid", tc.raw, tc.status)
		})
	}
}
