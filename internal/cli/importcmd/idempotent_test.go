package importcmd_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// Import is idempotent by content and a grown file adds only its new part.
func TestImportIdempotent(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	f := h.Put("saved/s.jsonl", bytes.Join(lines[:len(lines)/2], nil), time.Hour)
	r := h.OK("import", "--provider", "auto", "--json", f)
	var first struct {
		RunID  string `json:"run_id"`
		Action string `json:"action"`
	}
	if err := json.Unmarshal([]byte(r.Out), &first); err != nil || first.Action != "new" {
		t.Fatalf("first import: %v", r)
	}
	r = h.OK("import", "--provider", "auto", f)
	if !strings.Contains(r.ErrOut, "already imported") {
		t.Errorf("second import: %v", r)
	}
	h.Put("saved/s.jsonl", session, time.Hour)
	r = h.OK("import", "--provider", "auto", "--json", f)
	var second struct {
		RunID  string `json:"run_id"`
		Action string `json:"action"`
	}
	if err := json.Unmarshal([]byte(r.Out), &second); err != nil || second.Action != "continued" || second.RunID == first.RunID {
		t.Fatalf("grown import: %v", r)
	}
	a := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, first.RunID))
	b := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, second.RunID))
	seen := map[string]bool{}
	for _, ev := range a {
		if ev.Type == transcript.ToolCall {
			seen[ev.Tool().CallID] = true
		}
	}
	for _, ev := range b {
		if ev.Type == transcript.ToolCall && seen[ev.Tool().CallID] {
			t.Errorf("call %s imported twice", ev.Tool().CallID)
		}
	}
	clitest.Validate(t, clitest.TranscriptPath(h.Stor, first.RunID), clitest.TranscriptPath(h.Stor, second.RunID))
}
