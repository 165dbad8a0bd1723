//go:build !wasip1

package goose_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

// TestForkCopiedMessages: copy_session (goose session --resume --fork,
// the desktop's Duplicate, its fork at an edited message) creates a new
// session, then writes the original's conversation into it as it was,
// each message's created_timestamp and message_id kept, the token
// counters not copied (block/goose session_manager.rs, copy_session and
// replace_conversation). A message created in a second before its
// session was is the original's: the copy's run holds only what it did
// itself. The same rows in a session created first are its own, read
// whole; so are those of a session imported from a session file of
// Goose before sessions.db, whose creation time may follow its messages
// and whose id is the file's name.
func TestForkCopiedMessages(t *testing.T) {
	fork, err := os.ReadFile(filepath.Join(goldenDir, "rows_fork.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	swap := func(in []byte, pairs ...string) []byte {
		for i := 0; i < len(pairs); i += 2 {
			if !bytes.Contains(in, []byte(pairs[i])) {
				t.Fatalf("the golden input changed: no %s", pairs[i])
			}
			in = bytes.ReplaceAll(in, []byte(pairs[i]), []byte(pairs[i+1]))
		}
		return in
	}
	const created = `"created_at":"2025-11-03 09:00:00"`
	all := "Let me run the tests first.|The parser skips the first token.|Fixed: the loop started at 1 instead of 0; the tests pass.|Added TestParseEmpty; it passes."
	tests := []struct {
		name  string
		in    []byte
		texts string // assistant texts, joined by "|"
		calls int
		input int64
	}{
		{"the copy: only its own turn", fork, "Added TestParseEmpty; it passes.", 0, 21000},
		{"created_at with a T and a zone", swap(fork, created, `"created_at":"2025-11-03T09:00:00+00:00"`), "Added TestParseEmpty; it passes.", 0, 21000},
		{"a session created before its messages: its own", swap(fork, created, `"created_at":"2025-11-02 09:59:59"`), all, 6, 21000},
		{"a session file imported into sessions.db (named by the file): its own", swap(fork, `"20251103_1"`, `"20251102_101500"`), all, 6, 21000},
		{"a creation time in another zone: not compared", swap(fork, created, `"created_at":"2025-11-03 09:00:00+02:00"`), all, 6, 21000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, texts, calls, in := plugintest.Turns(t, goose.Plugin, "goose", tt.in)
			if texts != tt.texts || calls != tt.calls || in != tt.input {
				t.Errorf("assistant texts %q, %d tool calls, %d input tokens; want %q, %d, %d", texts, calls, in, tt.texts, tt.calls, tt.input)
			}
		})
	}
}
