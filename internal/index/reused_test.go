package index

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// TestCallOutcomeReusedID: a provider may reuse a call id for a new call
// once the first is answered (ids unique per response, not per session);
// each call takes its own result's outcome (the n-th result of an id
// answers its n-th call), whether the calls and results are read by one
// update or by several, so a search of failed calls finds the failed one
// and not the other.
func TestCallOutcomeReusedID(t *testing.T) {
	// c<cmd> is a call of id c1 running cmd, r<status> its result.
	for _, tc := range []struct {
		name  string
		reads [][]string // the events each update reads
	}{
		{"one read", [][]string{{"cmake a", "rerror", "cmake b", "rok"}}},
		{"the second call read later", [][]string{{"cmake a", "rerror"}, {"cmake b", "rok"}}},
		{"the first result read later", [][]string{{"cmake a"}, {"rerror", "cmake b", "rok"}}},
		{"each event read alone", [][]string{{"cmake a"}, {"rerror"}, {"cmake b"}, {"rok"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			store := recorder.NewStore(root)
			var ix *Index
			var runID string
			for i, evs := range tc.reads {
				var run *lifecycle.Run
				var err error
				if i == 0 {
					run, err = lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "calls"})
					runID = run.RunID()
				} else {
					run, err = lifecycle.Attach(ctx, store, runID, lifecycle.RunOptions{})
				}
				require.NoError(t, err)
				require.NoError(t, run.StepAt(ctx, fmt.Sprint("part", i), 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					for _, e := range evs {
						p := &transcript.ToolPayload{Name: "Bash", CallID: "c1", Fidelity: transcript.FidelityAgentEmitted}
						typ := transcript.ToolCall
						if e[0] == 'c' {
							p.Input, _ = json.Marshal(map[string]string{"command": e[1:]})
						} else {
							typ, p.Status, p.Output, p.HasOutput = transcript.ToolResult, e[1:], e[1:], true
						}
						if err := s.Record(ctx, &transcript.Event{Type: typ, Payload: p}); err != nil {
							return err
						}
					}
					return nil
				}))
				require.NoError(t, run.Detach())
				if ix == nil {
					ix, _ = openUpdated(t, root)
				} else {
					_, err := ix.Update(ctx)
					require.NoError(t, err)
				}
			}
			rows, err := ix.db.QueryContext(ctx, `SELECT status FROM docs WHERE kind = 'tool_call' AND call_id = 'c1' ORDER BY seq`)
			require.NoError(t, err)
			var got []string
			for rows.Next() {
				var st string
				require.NoError(t, rows.Scan(&st))
				got = append(got, st)
			}
			require.NoError(t, rows.Err())
			assert.Equal(t, []string{"error", "ok"}, got, "each call's own outcome, in order")
			hits := search(t, ix, Query{Kind: "tool_call", Status: "error"})
			require.Len(t, hits, 1)
			assert.Contains(t, hits[0].Snippet, "make a")
		})
	}
}
