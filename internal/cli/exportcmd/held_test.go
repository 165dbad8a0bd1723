package exportcmd

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// heldRun is a run of TestOTLPAllHeld's storage: a top-level run with one
// agent step naming session (a Claude session id, "" for none).
type heldRun struct {
	archived bool // archived from the agent's store (sync or import)
	from     int  // the run it was rebuilt from (renormalize), 0 for none
	holds    int  // the ended run its start says it holds again, 0 for none
	session  string
}

func heldRunID(i int) string { return "0a1b2c3d-0000-4000-8000-00000000010" + string(rune('0'+i)) }

// writeHeldRun writes run i of r into storage, ended.
func writeHeldRun(t *testing.T, storage string, i int, r heldRun) {
	t.Helper()
	id := heldRunID(i)
	extra := map[string]json.RawMessage{}
	if r.archived {
		extra[views.SessionSourceField] = json.RawMessage(`{"provider":"claude","path":"/h/s.jsonl","head_sha256":"h"}`)
	}
	if r.from > 0 {
		extra[views.RenormalizedFromField] = json.RawMessage(`"` + heldRunID(r.from) + `"`)
	}
	if r.holds > 0 {
		extra[lifecycle.SupersedesRunsField] = json.RawMessage(`["` + heldRunID(r.holds) + `"]`)
	}
	res, _ := json.Marshal(transcript.AgentResult{Provider: "claude", Model: "claude-sonnet-4-5", SessionID: r.session, Status: "ok"})
	p := filepath.Join(storage, "transcripts", id+".jsonl")
	appendEvents(t, p, id, 0, []*transcript.Event{
		{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1", Extra: extra}},
		{Type: transcript.StepStarted, Path: "agent", Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
		{Type: transcript.MessageAssistant, Path: "agent", Payload: &transcript.MessagePayload{Role: "assistant", Model: "claude-sonnet-4-5",
			Blocks: []transcript.Block{{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "done"}}}},
		{Type: transcript.StepCompleted, Path: "agent", Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: "ok", Result: res}},
		{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Status: "ok"}},
	})
}

// TestOTLPAllHeld: `export otlp --all` sends the runs ls lists, so that a
// session reaches the collector once, as ls, stats, usage and search
// count it: not a run recorded from an agent's output whose session a
// run archived from the agent's store holds, the original of a
// renormalize rebuild, or a damaged run that had ended and that a repair
// holds again; --superseded sends them too, and a run named as an
// argument is sent whatever stands for it. Before, --all sent every
// top-level run: a recorded session and its synced run both.
func TestOTLPAllHeld(t *testing.T) {
	for _, c := range []struct {
		name string
		runs []heldRun
		want []int // the runs --all sends, from 1
	}{
		{"recorded and synced", []heldRun{{session: "s1"}, {archived: true, session: "s1"}}, []int{2}},
		{"recorded, its session not synced", []heldRun{{session: "s1"}, {archived: true, session: "s2"}}, []int{1, 2}},
		{"renormalized", []heldRun{{archived: true, session: "s1"}, {archived: true, from: 1, session: "s1"}}, []int{2}},
		{"an ended damaged run repaired", []heldRun{{archived: true, session: "s1"}, {archived: true, holds: 1, session: "s1"}}, []int{2}},
		{"runs of their own", []heldRun{{session: ""}, {session: "s3"}}, []int{1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			storage := t.TempDir()
			if err := os.MkdirAll(filepath.Join(storage, "transcripts"), 0o700); err != nil {
				t.Fatal(err)
			}
			var all []string
			for i, r := range c.runs {
				writeHeldRun(t, storage, i+1, r)
				all = append(all, heldRunID(i+1))
			}
			var want []string
			for _, i := range c.want {
				want = append(want, heldRunID(i))
			}
			for _, sup := range []bool{false, true} {
				col := newCollector(t, nil)
				stderr, err := exportOTLP(t, storage, env("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL), &OTLPCmdOptions{All: AllRuns{On: true, Superseded: sup}})
				if err != nil {
					t.Fatalf("--superseded %v: %v\n%s", sup, err, stderr)
				}
				w := want
				if sup {
					w = all
				}
				if got := slices.Sorted(maps.Keys(col.runs)); !slices.Equal(got, w) {
					t.Errorf("--all, --superseded %v: sent runs %v, want %v", sup, got, w)
				}
				if left := len(all) - len(want); !sup && left > 0 && !strings.Contains(stderr, "superseded run") {
					t.Errorf("--all leaves %d run(s) out without saying so:\n%s", left, stderr)
				}
			}
			// A run named is sent whatever stands for it.
			col := newCollector(t, nil)
			if _, err := exportOTLP(t, storage, env("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL), &OTLPCmdOptions{Runs: all}); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(col.runs)); !slices.Equal(got, all) {
				t.Errorf("runs named: sent %v, want %v", got, all)
			}
		})
	}
}
