//go:build !wasip1

package cursor_test

import (
	"bytes"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
	"github.com/twasm/twasm/transcript"
)

// TestMidTurn: `twasm sync` reads an agent transcript while Cursor
// writes it. A Cursor that ends its turns with turn_ended, read after
// its last turn started and before that turn's turn_ended, is in the
// middle of a turn: incomplete, whatever the turn holds so far; one that
// wrote no turn_ended at all is left to the host's session rule.
func TestMidTurn(t *testing.T) {
	raw := plugintest.Testdata(t, "golden", "cursor", "transcript_tools_subagent.jsonl")
	const ended = `"type":"turn_ended"`
	var noEnds [][]byte
	for _, l := range bytes.SplitAfter(raw, []byte("\n")) {
		if !bytes.Contains(l, []byte(ended)) {
			noEnds = append(noEnds, l)
		}
	}
	first := plugintest.Cut(t, raw, ended, 1)
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"the second turn without its turn_ended", plugintest.Cut(t, raw, ended, 2), transcript.StatusIncomplete},
		{"after the first turn's end", raw[:bytes.IndexByte(raw[len(first):], '\n')+len(first)+1], transcript.StatusOK},
		{"whole", raw, transcript.StatusOK},
		{"a Cursor that writes no turn_ended: the session rule", bytes.Join(noEnds, nil), transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugintest.WantStatus(t, cursor.Plugin, "cursor", tc.raw, tc.status)
		})
	}
}
