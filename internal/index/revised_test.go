package index

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/transcript"
)

// TestIndexRevisedOutcome: a revised result (a new version of the
// result of its call id, transcript.Pairer) gives its call its outcome
// in place of the earlier one, and a revised call is no call more, both
// when the index reads the run whole and when it reads what the run grew
// by (then it reads the run again from its start).
func TestIndexRevisedOutcome(t *testing.T) {
	const id = "22222222-2222-4222-8222-222222222222"
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	revised := map[string]json.RawMessage{transcript.RevisedField: json.RawMessage("true")}
	seq := uint64(0)
	line := func(typ transcript.EventType, iter int, p transcript.Payload) []byte {
		seq++
		b, err := transcript.AppendEvent(nil, &transcript.Event{Seq: seq, RunID: id, Type: typ, Path: "agent", Iteration: iter, Timestamp: t0.Add(time.Duration(seq) * time.Second), Payload: p})
		require.NoError(t, err)
		return append(b, '\n')
	}
	tool := func(typ transcript.EventType, iter int, callID, cmd, out, status string, again bool) []byte {
		p := &transcript.ToolPayload{Name: "Bash", CallID: callID, Command: cmd, Output: out, HasOutput: out != "", Status: status, Fidelity: transcript.FidelityAgentEmitted}
		if again {
			p.Extra = revised
		}
		return line(typ, iter, p)
	}
	step := func(typ transcript.EventType, iter int) []byte {
		p := &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}
		if typ == transcript.StepCompleted {
			p.Status = transcript.StatusOK
		}
		return line(typ, iter, p)
	}
	var first, grown []byte
	seq++
	first, _ = transcript.AppendEvent(nil, &transcript.Event{Seq: seq, RunID: id, Type: transcript.RunStarted, Timestamp: t0,
		Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}})
	first = append(first, '\n')
	for _, b := range [][]byte{
		step(transcript.StepStarted, 0),
		tool(transcript.ToolCall, 0, "call_1", "ls /srv", "", "", false),
		tool(transcript.ToolResult, 0, "call_1", "", "permission denied", transcript.StatusError, false),
		tool(transcript.ToolCall, 0, "call_2", "pytest", "", "", false),
		step(transcript.StepCompleted, 0),
	} {
		first = append(first, b...)
	}
	for _, b := range [][]byte{
		step(transcript.StepStarted, 1),
		tool(transcript.ToolResult, 1, "call_1", "", "data", transcript.StatusOK, true),
		tool(transcript.ToolCall, 1, "call_2", "pytest -q", "", "", true),
		tool(transcript.ToolResult, 1, "call_2", "", "1 passed", transcript.StatusOK, false),
		step(transcript.StepCompleted, 1),
	} {
		grown = append(grown, b...)
	}
	check := func(t *testing.T, ix *Index) {
		t.Helper()
		assert.Empty(t, search(t, ix, Query{Kind: "tool_call", Status: "error"}), "a failure revised to ok")
		assert.Len(t, search(t, ix, Query{Text: "srv", Kind: "tool_call", Status: "ok"}), 1, "the call takes the revised outcome")
		assert.Len(t, search(t, ix, Query{Text: "pytest", Kind: "tool_call", Status: "ok", Every: true}), 2, "both versions of the revised call take its outcome")
		var tools, errs int
		require.NoError(t, ix.db.QueryRowContext(context.Background(), `SELECT tools, errors FROM runs WHERE run_id = ?`, id).Scan(&tools, &errs))
		assert.Equal(t, 2, tools, "a revised call is no call more")
		assert.Equal(t, 0, errs, "no failed call left")
		assertNoOrphans(t, ix)
	}
	t.Run("whole", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, "transcripts"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(root, "transcripts", id+".jsonl"), append(append([]byte(nil), first...), grown...), 0o600))
		ix, _ := openUpdated(t, root)
		check(t, ix)
	})
	t.Run("grown", func(t *testing.T) {
		root := t.TempDir()
		path := filepath.Join(root, "transcripts", id+".jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, first, 0o600))
		ix, _ := openUpdated(t, root)
		assert.Len(t, search(t, ix, Query{Kind: "tool_call", Status: "error"}), 1)
		require.NoError(t, os.WriteFile(path, append(append([]byte(nil), first...), grown...), 0o600))
		st, err := ix.Check(context.Background()) // written behind the journal's back
		require.NoError(t, err)
		assert.Equal(t, 1, st.Reindexed, "read again from its start")
		check(t, ix)
	})
}

// TestIndexRevisedCallAtChunkEnd: a new version of a call answered
// already (a revised tool.call after its result) takes the earlier
// version's outcome wherever its document falls, the last of a chunk of
// docs (docChunk) included. Before, the document that filled a chunk was
// flushed before its outcome was set, and the index panicked (index out
// of range [-1]) on such a run: make bench's index build of the bundled
// goldens, which hold Cline's task_ui_only_command_cancelled, did.
func TestIndexRevisedCallAtChunkEnd(t *testing.T) {
	const id = "33333333-3333-4333-8333-333333333333"
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for fill := docChunk - 6; fill <= docChunk+1; fill++ {
		t.Run(fmt.Sprint(fill), func(t *testing.T) {
			var b []byte
			seq := uint64(0)
			add := func(typ transcript.EventType, p transcript.Payload) {
				seq++
				line, err := transcript.AppendEvent(nil, &transcript.Event{Seq: seq, RunID: id, Type: typ, Path: "agent", Timestamp: t0.Add(time.Duration(seq) * time.Second), Payload: p})
				require.NoError(t, err)
				b = append(append(b, line...), '\n')
			}
			add(transcript.RunStarted, &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"})
			add(transcript.StepStarted, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent})
			for i := range fill {
				add(transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{transcript.TextBlock(fmt.Sprintf("filler %d", i))}})
			}
			tool := func(typ transcript.EventType, cmd, out, status string, again bool) {
				p := &transcript.ToolPayload{Name: "Bash", CallID: "call_1", Command: cmd, Output: out, HasOutput: out != "", Status: status, Fidelity: transcript.FidelityAgentEmitted}
				if again {
					p.Extra = map[string]json.RawMessage{transcript.RevisedField: json.RawMessage("true")}
				}
				add(typ, p)
			}
			tool(transcript.ToolCall, "ls /srv", "", "", false)
			tool(transcript.ToolResult, "", "permission denied", transcript.StatusError, false)
			tool(transcript.ToolCall, "ls -la /srv", "", "", true)
			add(transcript.StepCompleted, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: transcript.StatusOK})
			root := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(root, "transcripts"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(root, "transcripts", id+".jsonl"), b, 0o600))
			ix, _ := openUpdated(t, root)
			assert.Len(t, search(t, ix, Query{Text: "la", Kind: "tool_call", Status: "error", Every: true}), 1, "the new version takes the answered call's outcome")
			assertNoOrphans(t, ix)
		})
	}
}
