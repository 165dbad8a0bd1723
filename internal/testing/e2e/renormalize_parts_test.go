package e2e

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// TestRenormalizeGrownSession: a session archived in two parts (it grew
// between two syncs) is rebuilt by renormalize part by part, as sync
// wrote it: the same calls, results and responses once each, and the
// parts' output tokens summing to the run's. Each part read the whole
// raw capture before, so every call of the first part came twice.
func TestRenormalizeGrownSession(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	file := ".claude/projects/-home-me-app/5f1c.jsonl"
	h.put(file, bytes.Join(lines[:len(lines)/2], nil), 2*time.Hour)
	got := outcomes(h.ok("sync").out)
	if len(got["new"]) != 1 {
		t.Fatalf("first sync: %v", got)
	}
	runID := got["new"][0]
	h.put(file, session, time.Hour)
	if got := outcomes(h.ok("sync").out); len(got["grown"]) != 1 {
		t.Fatalf("second sync: %v", got)
	}
	r := h.ok("renormalize", "--json", runID)
	var sum struct {
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(r.out), &sum); err != nil || sum.Transcript == "" {
		t.Fatalf("renormalize --json: %v\n%v", err, r)
	}
	type figures struct {
		calls, results, responses, parts int
		output                           int64
	}
	count := func(path string) figures {
		var f figures
		for _, ev := range readRun(t, path) {
			switch ev.Type {
			case transcript.ToolCall:
				f.calls++
			case transcript.ToolResult:
				f.results++
			case transcript.MessageAssistant:
				f.responses++
			case transcript.StepCompleted:
				if res, err := ev.Step().AgentResult(); err == nil && res != nil {
					f.parts++
					if res.Usage != nil && res.Usage.OutputTokens != nil {
						f.output += *res.Usage.OutputTokens
					}
				}
			}
		}
		return f
	}
	orig, again := count(transcriptPath(h.stor, runID)), count(sum.Transcript)
	if orig.parts != 2 || again != orig {
		t.Errorf("renormalized %+v, archived %+v", again, orig)
	}
}
