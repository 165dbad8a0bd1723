//go:build !wasip1

package droid_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
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
	dir := filepath.Join("..", "..", "testdata", "golden", "droid")
	raw, err := os.ReadFile(filepath.Join(dir, "session_turn_outcome_compaction.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(dir, "session_call_id_reused.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	first := -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"agent_turn_outcome"`)) {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no agent_turn_outcome")
	}
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		// The first turn with its outcome, then a second turn's
		// answer (the first one's answer under a new id) without its
		// outcome yet.
		{"the answer written, the turn's outcome not yet", append(bytes.Join(lines[:first+1], nil), bytes.Replace(lines[first-1], []byte(`"id":"a2"`), []byte(`"id":"a9"`), 1)...), transcript.StatusIncomplete},
		{"the first turn's answer read again (a replay) after its outcome", append(bytes.Join(lines[:first+1], nil), lines[first-1]...), transcript.StatusOK},
		{"the first turn with its outcome", bytes.Join(lines[:first+1], nil), transcript.StatusOK},
		{"a log without outcomes: the session rule", old, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, droid.Plugin, tc.raw, normalize.Options{Provider: "droid"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}
