package renormalize_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestRenormalizeGrownSession: a session archived in two parts (it grew
// between two syncs) is rebuilt by renormalize part by part, as sync
// wrote it: the same calls, results and responses once each, and the
// parts' output tokens summing to the run's. Each part read the whole
// raw capture before, so every call of the first part came twice.
func TestRenormalizeGrownSession(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	file := ".claude/projects/-home-me-app/5f1c.jsonl"
	h.Put(file, bytes.Join(lines[:len(lines)/2], nil), 2*time.Hour)
	got := clitest.Outcomes(h.OK("sync").Out)
	if len(got["new"]) != 1 {
		t.Fatalf("first sync: %v", got)
	}
	runID := got["new"][0]
	h.Put(file, session, time.Hour)
	if got := clitest.Outcomes(h.OK("sync").Out); len(got["grown"]) != 1 {
		t.Fatalf("second sync: %v", got)
	}
	r := h.OK("renormalize", "--json", runID)
	var sum struct {
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(r.Out), &sum); err != nil || sum.Transcript == "" {
		t.Fatalf("renormalize --json: %v\n%v", err, r)
	}
	type figures struct {
		calls, results, responses, parts int
		output                           int64
	}
	count := func(path string) figures {
		var f figures
		for _, ev := range clitest.ReadRun(t, path) {
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
	orig, again := count(clitest.TranscriptPath(h.Stor, runID)), count(sum.Transcript)
	if orig.parts != 2 || again != orig {
		t.Errorf("renormalized %+v, archived %+v", again, orig)
	}
}
