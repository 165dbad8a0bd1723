//go:build !wasip1

package cursor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
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
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "cursor", "transcript_tools_subagent.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var ends []int // the turn_ended lines
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"turn_ended"`)) {
			ends = append(ends, i)
		}
	}
	if len(ends) != 2 {
		t.Fatalf("want 2 turn_ended lines, have %d", len(ends))
	}
	var noEnds [][]byte
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"type":"turn_ended"`)) {
			noEnds = append(noEnds, l)
		}
	}
	for _, tc := range []struct {
		name   string
		raw    []byte
		status string
	}{
		{"the second turn without its turn_ended", bytes.Join(lines[:ends[1]], nil), transcript.StatusIncomplete},
		{"after the first turn's end", bytes.Join(lines[:ends[0]+1], nil), transcript.StatusOK},
		{"whole", raw, transcript.StatusOK},
		{"a Cursor that writes no turn_ended: the session rule", bytes.Join(noEnds, nil), transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, cursor.Plugin, tc.raw, normalize.Options{Provider: "cursor"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}
