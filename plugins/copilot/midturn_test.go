//go:build !wasip1

package copilot_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// TestMidTurn: `twasm sync` reads events.jsonl while the CLI writes it.
// The CLI bounds each model turn with assistant.turn_start and
// assistant.turn_end: a log whose last turn_start has no turn_end yet is
// in the middle of a turn, incomplete, even where what came last (a
// call's result, a whole message) would answer; the same log read again
// once the turn ended (its lines again, then the rest) is settled as
// any other.
func TestMidTurn(t *testing.T) {
	raw := plugintest.Testdata(t, "golden", "copilot", "events_session_log.jsonl")
	const end, start = `"type":"assistant.turn_end"`, `"type":"assistant.turn_start"`
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"cut after the calls' results, before the turn's end", plugintest.Cut(t, raw, end, 1), transcript.StatusIncomplete},
		{"cut after the second turn's answer, before its end", plugintest.Cut(t, raw, end, 2), transcript.StatusIncomplete},
		{"cut between two turns", plugintest.Cut(t, raw, start, 2), transcript.StatusOK},
		{"the whole log", raw, transcript.StatusOK},
		{"read mid-turn, then whole", append(plugintest.Cut(t, raw, end, 2), raw...), transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugintest.WantStatus(t, copilot.Plugin, "copilot", tc.raw, tc.status)
		})
	}
}
