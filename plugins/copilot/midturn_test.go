//go:build !wasip1

package copilot_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
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
	raw, err := os.ReadFile(filepath.Join(goldenDir, "events_session_log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	// cut is the log up to (without) the n-th line of type typ.
	cut := func(typ string, n int) []byte {
		for i, l := range lines {
			if bytes.Contains(l, []byte(`"type":"`+typ+`"`)) {
				if n--; n == 0 {
					return bytes.Join(lines[:i], nil)
				}
			}
		}
		t.Fatalf("no %d-th %s line", n, typ)
		return nil
	}
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"cut after the calls' results, before the turn's end", cut("assistant.turn_end", 1), transcript.StatusIncomplete},
		{"cut after the second turn's answer, before its end", cut("assistant.turn_end", 2), transcript.StatusIncomplete},
		{"cut between two turns", cut("assistant.turn_start", 2), transcript.StatusOK},
		{"the whole log", raw, transcript.StatusOK},
		{"read mid-turn, then whole", append(cut("assistant.turn_end", 2), raw...), transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, copilot.Plugin, tc.raw, normalize.Options{Provider: "copilot"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}
