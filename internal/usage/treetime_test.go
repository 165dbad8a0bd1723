package usage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// TestRebuildByTreeTime: of a run and its renormalize rebuild, the one
// counted is the one ls and stats list (views.TreeTime): the rebuild,
// unless the original's tree (its file or a child run's: a sub-agent
// file sync archived into after the rebuild) was written after it.
// Before, usage compared the two files alone: a sub-agent's run written
// after the rebuild left the rebuild counted, where ls listed the
// original.
func TestRebuildByTreeTime(t *testing.T) {
	orig, child, rebuilt := viewstest.RunID(1), viewstest.RunID(2), viewstest.RunID(3)
	cases := []struct {
		name string
		last string // the file written last
		want int64  // output tokens counted
	}{
		{"the rebuild written last", rebuilt, 30},
		{"the original written last", orig, 10 + 5},
		{"the original's child run written last", child, 10 + 5},
	}
	tbl := prices.Bundled()
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(id, parent, from string, tokens int64, link string) {
				b := viewstest.NewBuilder(id, parent)
				ev := viewstest.Started("s")
				ev.Timestamp = at
				if from != "" {
					ev.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{views.RenormalizedFromField: json.RawMessage(`"` + from + `"`)}
				}
				b.Add(ev)
				agentStep(b, t, at, &transcript.AgentResult{Provider: "codex", SessionID: "t1", Model: "m", Status: "ok",
					Usage: &transcript.Usage{InputTokens: n(0), OutputTokens: n(tokens)}})
				if link != "" {
					b.Add(viewstest.Step(transcript.StepCallWorkflowStarted, "sub", 0, &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow}))
					b.Events()[len(b.Events())-1].ChildRunID = link
				}
				if from != "" { // renormalize ends the rebuild it writes
					b.Add(viewstest.Completed("s", "ok", ""))
				}
				f := filepath.Join(dir, id+".jsonl")
				viewstest.WriteFile(t, f, b.Bytes(t))
				mt := at
				if id == c.last {
					mt = at.Add(time.Hour)
				} else if id == rebuilt {
					mt = at.Add(time.Minute)
				}
				if err := os.Chtimes(f, mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			write(orig, "", "", 10, child)
			write(child, orig, "", 5, "")
			write(rebuilt, "", orig, 30, "")
			ids := []string{orig, child, rebuilt}
			_, got := buildOutput(t, sources(t, dir, ids, tbl), tbl, Options{By: BySession})
			if got != c.want {
				t.Errorf("output tokens %d, want %d", got, c.want)
			}
		})
	}
}
