package renormalize

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// TestRebuildSubRunsByRuntreeRules: the child runs linked at an agent
// step after it ended are rebuilt by runtree's rules, as every reader of
// a run tree follows them: a chain deeper than runtree.MaxDepth stops
// there (the link from the run at depth MaxDepth-1 is left out, said in
// the summary), and a link back to a run already rebuilt is left out as
// linked twice.
func TestRebuildSubRunsByRuntreeRules(t *testing.T) {
	id := func(i int) string { return viewstest.RunID(1000 + i) }
	tests := []struct {
		name string
		// links[i] is the child run i links to (0: none); runs are 1..len(links).
		links       []int
		wantRebuilt int // child runs rebuilt
		wantLeftOut []string
	}{
		{name: "deeper than MaxDepth", links: chainLinks(runtree.MaxDepth + 2), wantRebuilt: runtree.MaxDepth - 1,
			wantLeftOut: []string{fmt.Sprintf("sub-run %s at agent.sub (iteration 0): not followed: deeper than %d runs", id(runtree.MaxDepth+1), runtree.MaxDepth)}},
		{name: "exactly MaxDepth", links: chainLinks(runtree.MaxDepth), wantRebuilt: runtree.MaxDepth - 1},
		{name: "a cycle", links: []int{2, 3, 1}, wantRebuilt: 2,
			wantLeftOut: []string{fmt.Sprintf("sub-run %s at agent.sub (iteration 0): linked twice", id(1))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := cmdtest.New(t)
			dir := e.F.TranscriptDir()
			for i := 1; i <= len(tc.links); i++ {
				parent := ""
				if i > 1 {
					parent = id(i - 1)
				}
				b := viewstest.NewBuilder(id(i), parent)
				b.Add(viewstest.Started(fmt.Sprint("run ", i)))
				b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
				b.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: transcript.StatusOK}))
				if c := tc.links[i-1]; c != 0 {
					for _, typ := range []transcript.EventType{transcript.StepCallWorkflowStarted, transcript.StepCallWorkflowCompleted} {
						b.Add(&transcript.Event{Type: typ, Path: "agent.sub", ChildRunID: id(c),
							Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow, Status: map[bool]string{true: transcript.StatusOK}[typ == transcript.StepCallWorkflowCompleted]}})
					}
				}
				b.Add(viewstest.Completed(fmt.Sprint("run ", i), transcript.StatusOK, ""))
				viewstest.WriteFile(t, filepath.Join(dir, id(i)+".jsonl"), b.Bytes(t))
			}
			sum := renormalizeJSON(t, e, id(1))
			var rebuilt []string
			for _, s := range sum.Steps {
				if s.SubRun != "" && !slices.Contains(rebuilt, s.SubRun) {
					rebuilt = append(rebuilt, s.SubRun)
				}
			}
			if len(rebuilt) != tc.wantRebuilt {
				t.Errorf("%d child runs rebuilt, want %d", len(rebuilt), tc.wantRebuilt)
			}
			if !slices.Equal(sum.LeftOut, tc.wantLeftOut) {
				t.Errorf("left out:\n%s\nwant:\n%s", strings.Join(sum.LeftOut, "\n"), strings.Join(tc.wantLeftOut, "\n"))
			}
		})
	}
}

// chainLinks is n runs, each linking to the next.
func chainLinks(n int) []int {
	links := make([]int, n)
	for i := range n - 1 {
		links[i] = i + 2
	}
	return links
}
