package synccmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncCursorBothStores: a Cursor conversation kept by the CLI
// (agent-transcripts/<id>/<id>.jsonl, with a sub-agent's transcript) and
// by the IDE (state.vscdb's composerData:<id>) is one conversation,
// archived once, from the IDE, whose copy states more (times, usage,
// model). With both there at the first sync, the IDE's composer is the
// one new run and the CLI's files are skipped, sync saying why; when the
// CLI's copy was archived before the IDE kept it, the IDE's run is new
// and the CLI's runs (its sub-agent's first) are ended, superseded by it. A second sync says
// nothing either way; doctor counts the CLI's files archived, from the
// IDE, and says so.
func TestSyncCursorBothStores(t *testing.T) {
	t.Parallel()
	const id, subID = "6c0e2a1b-44f5-4b9e-8d21-0f3c5a7b9e10", "9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d"
	transcript := `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nrename the config loader\n</user_query>"}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"text","text":"Renaming it."},{"type":"tool_use","name":"Subagent","input":{"description":"Find callers","prompt":"List the loader's callers."}}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"text","text":"Renamed to LoadConfig."}]}}` + "\n"
	subTranscript := `{"role":"user","message":{"content":[{"type":"text","text":"List the loader's callers."}]}}` + "\n" +
		`{"role":"assistant","message":{"content":[{"type":"text","text":"Two callers."}]}}` + "\n"
	for _, cliFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "both at once", true: "the CLI's copy archived first"}[cliFirst], func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			rel := filepath.Join(".cursor", "projects", "home-me-app", "agent-transcripts", id)
			h.Put(filepath.Join(rel, id+".jsonl"), []byte(transcript), time.Hour)
			h.Put(filepath.Join(rel, "subagents", subID+".jsonl"), []byte(subTranscript), time.Hour)
			var cliRuns []string
			if cliFirst {
				r := h.OK("sync")
				if cliRuns = clitest.Outcomes(r.Out)["new"]; len(cliRuns) != 2 {
					t.Fatalf("the CLI's copy: want the conversation and its sub-agent new: %v", r)
				}
			}
			dir := filepath.Join(h.Dir, ".config", "Cursor", "User", "globalStorage")
			c := openCursorIDEDB(t, filepath.Join(dir, "state.vscdb"))
			c.put("composerData:"+id, `{"_v":3,"composerId":"`+id+`","createdAt":1767261600000,"lastUpdatedAt":1767261660000,"modelConfig":{"modelName":"claude-4.5-sonnet"},"fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2}]}`)
			c.put("bubbleId:"+id+":b1", `{"_v":3,"bubbleId":"b1","type":1,"text":"rename the config loader","createdAt":"2026-01-01T10:00:00.000Z"}`)
			c.put("bubbleId:"+id+":b2", `{"_v":3,"bubbleId":"b2","type":2,"text":"Renamed to LoadConfig.","createdAt":"2026-01-01T10:00:30.000Z","tokenCount":{"inputTokens":900,"outputTokens":40}}`)
			if err := c.DB.Close(); err != nil {
				t.Fatal(err)
			}

			r := h.OK("sync")
			got := clitest.Outcomes(r.Out)
			if len(got["new"]) != 1 {
				t.Fatalf("want the IDE's composer the one new run: %v", r)
			}
			ide := got["new"][0]
			if b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, ide))); !strings.Contains(b, `"input_tokens":900`) || !strings.Contains(b, `"session_id":"`+id+`"`) {
				t.Errorf("the new run is not the IDE's composer:\n%s", b)
			}
			if cliFirst {
				if len(got["closed"]) != 1 || len(got["skipped"]) != 0 || !strings.Contains(r.Out, "with the runs of its 1 sub-agent file(s)") {
					t.Fatalf("want the CLI's run ended with its sub-agent's, nothing skipped: %v", r)
				}
				for _, run := range cliRuns {
					b := string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, run)))
					if !strings.Contains(b, `"superseded_by":"`+ide+`"`) {
						t.Errorf("the CLI's run %s does not say the IDE's run %s supersedes it:\n%s", run, ide, b)
					}
				}
			} else {
				if len(got["skipped"]) != 2 || len(got["closed"]) != 0 || !strings.Contains(r.ErrOut, "2 skipped") {
					t.Fatalf("want the CLI's transcript and its sub-agent's skipped: %v", r)
				}
				if n := len(runFiles(t, h.Stor)); n != 1 {
					t.Errorf("%d runs archived, want the IDE's only", n)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
				if f := strings.Split(l, "\t"); len(f) >= 5 && (f[0] == "skipped" || f[0] == "closed") &&
					!strings.Contains(f[4], "the same session is archived from "+filepath.Join(dir, "state.vscdb")+"#"+id+" as run "+ide) {
					t.Errorf("the outcome does not say why: %s", l)
				}
			}

			r = h.OK("sync")
			if len(clitest.Outcomes(r.Out)) != 0 || !strings.Contains(r.ErrOut, "0 new") || strings.Contains(r.ErrOut, "skipped") {
				t.Errorf("second sync: %v", r)
			}
			stores, out := doctorCountsOf(t, h)
			if s := stores["Cursor agent transcripts"]; s.Sessions != 1 || s.Archived != 1 || s.NotArchived != 0 || s.Elsewhere != 2 {
				t.Errorf("doctor's CLI store: %+v", s)
			}
			if !strings.Contains(out, "2 of its file(s) skipped: the same session is kept in a database store") {
				t.Errorf("doctor does not say why the CLI's files are skipped:\n%s", out)
			}
		})
	}
}

// runFiles lists the transcripts of a storage root.
func runFiles(t *testing.T, stor string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(stor, "transcripts"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, e.Name())
		}
	}
	return out
}
