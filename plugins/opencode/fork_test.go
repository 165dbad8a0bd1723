//go:build !wasip1

package opencode_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
)

// TestForkCopiedMessages: Session.fork creates the new session, then
// writes the parent's messages into it with new ids and their info as it
// was (time.created included), their parts likewise (anomalyco/opencode
// packages/opencode/src/session/index.ts). A message created before its
// session was is the parent's: the fork's run holds, and its usage and
// cost count, only the messages created after it. The same rows with the
// session created first are one session's own, read whole; the older file
// tree reads the same way.
func TestForkCopiedMessages(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fork := read("rows_fork.jsonl")
	// The fork's session row, dated before every message: a session of
	// its own, whose messages are all its.
	unforked := bytes.Replace(fork, []byte(`"time_created":1762077700000`), []byte(`"time_created":1762077500000`), 1)
	// The file tree's session, dated after every message: a fork holding
	// nothing but its copy.
	tree := bytes.Replace(read("tree_session_tools_errors.jsonl"), []byte(`"time":{"created":1762077600000,"updated":1762077620000}`), []byte(`"time":{"created":1762077700000,"updated":1762077700000}`), 1)
	if bytes.Equal(unforked, fork) || bytes.Contains(tree, []byte(`"created":1762077600000,"updated":1762077620000`)) {
		t.Fatal("the golden inputs changed: the session's time is not where the test expects it")
	}
	tests := []struct {
		name   string
		in     []byte
		texts  string // assistant texts, joined by "|"
		calls  int
		input  int64 // -1: no usage
		status string
	}{
		{"rows: the fork's own turn", fork, "TestParse is now a table of cases.", 0, 11350, "ok"},
		{"rows: a session of its own", unforked, "I should run the test first.|Running the test.|TestParse fails because the input file is missing.|TestParse is now a table of cases.", 2, 32330, "ok"},
		{"tree: a fork holding only its copy", tree, "", 0, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), opencode.Plugin, "opencode", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			texts, calls, in, _ := plugintest.FromResult(r).Summary(plugintest.Assistant)
			if texts != tt.texts {
				t.Errorf("assistant texts %q; want %q", texts, tt.texts)
			}
			if calls != tt.calls {
				t.Errorf("%d tool calls; want %d", calls, tt.calls)
			}
			if in != tt.input {
				t.Errorf("input tokens %d; want %d", in, tt.input)
			}
			if tt.status != "" && r.Step.Status != tt.status {
				t.Errorf("status %q; want %q", r.Step.Status, tt.status)
			}
			if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
			}
		})
	}
}
