package archive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/plugins/cline"
)

// rooRepairHome is a Roo Code store holding a task and its sub-task
// (history_item.json names its parentTaskId), each with a request
// stating its tokens.
type rooRepairHome struct {
	loc          []Location
	parent, task string // the folders
}

// newRooRepairHome writes the two tasks: the sub-task's
// history_item.json naming its parent (Roo Code 3.49 and later), or,
// named, none, its parent's new_task call's result naming it (Roo Code
// 3.35 to 3.48: "Subtask <id> completed.", abi.StoreParent.Result).
func newRooRepairHome(t *testing.T, named bool) rooRepairHome {
	t.Helper()
	home := t.TempDir()
	var h rooRepairHome
	for _, l := range Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(cline.Plugin.Manifest), nil) {
		if l.Name == "Roo Code tasks (Code)" {
			h.loc = append(h.loc, l)
		}
	}
	require.Len(t, h.loc, 1)
	const parentID, taskID = "f0000000-0000-4000-8000-000000000000", "a0000000-0000-4000-8000-000000000000"
	put := func(id, parent, text string, in, out int, api string) string {
		dir := filepath.Join(h.loc[0].Dir, id)
		if parent != "" || !named {
			hist := `{"id":"` + id + `","number":1,"ts":1767225600000,"task":"` + text + `"}`
			if parent != "" {
				hist = `{"id":"` + id + `","parentTaskId":"` + parent + `","rootTaskId":"` + parent + `","number":2,"ts":1767225600000,"task":"` + text + `"}`
			}
			writeAged(t, filepath.Join(dir, "history_item.json"), []byte(hist), time.Hour)
		}
		ui := `[{"ts":1767225600000,"type":"say","say":"text","text":"` + text + `"},` +
			`{"ts":1767225600100,"type":"say","say":"api_req_started","text":"{\"apiProtocol\":\"anthropic\",\"tokensIn\":` + itoa(in) + `,\"tokensOut\":` + itoa(out) + `,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.001}"},` +
			`{"ts":1767225600200,"type":"say","say":"completion_result","text":"Done."}]`
		writeAged(t, filepath.Join(dir, "ui_messages.json"), []byte(ui), time.Hour)
		if api == "" {
			api = `{"role":"assistant","content":[{"type":"text","text":"Done."}],"ts":1767225600200}`
		}
		writeAged(t, filepath.Join(dir, "api_conversation_history.json"), []byte(`[{"role":"user","content":[{"type":"text","text":"<task>`+text+`</task>"}],"ts":1767225600000},`+api+`]`), time.Hour)
		return dir
	}
	// The parent's name sorts after its sub-task's.
	parentAPI := ""
	taskParent := parentID
	if named {
		parentAPI = `{"role":"assistant","content":[{"type":"text","text":"I'll delegate it."},{"type":"tool_use","id":"toolu_01NewTask","name":"new_task","input":{"mode":"code","message":"Write the changelog.","todos":""}}],"ts":1767225600150},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01NewTask","content":"Subtask ` + taskID + ` completed.\n\nResult:\nDone."}],"ts":1767225600180},` +
			`{"role":"assistant","content":[{"type":"text","text":"Done."}],"ts":1767225600200}`
		taskParent = ""
	}
	h.parent = put(parentID, "", "Plan the release.", 20, 150, parentAPI)
	h.task = put(taskID, taskParent, "Write the changelog.", 10, 60, "")
	return h
}

// TestRepairKilledSubTask: `sync --repair` of a Roo Code task whose raw
// capture is damaged archives its folder again, with its sub-task's
// folder as a child run of the new run, and ends the damaged runs,
// superseded by it. Killed at each end it writes (before or after it,
// the ledger kept or lost), the next plain sync finishes the job: the
// sub-task's folder held by one live run, every token counted once as a
// fresh sync counts it; once the task's new run was written, the
// damaged task's run ended once, superseded by it, the sub-task's live
// run a child run of it (else the damaged run stands, and the next
// repair does so), nothing left damaged, and a further sync archives
// nothing. Before, a sub-task's folder whose run the repair had ended
// was held by no live run (its tokens counted nowhere) for good.
func TestRepairKilledSubTask(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "naming_its_parent", true: "named_by_its_parent"}[named], func(t *testing.T) { repairKilledSubTask(t, named) })
	}
}

func repairKilledSubTask(t *testing.T, named bool) {
	ctx := context.Background()
	h := newRooRepairHome(t, named)
	fresh := t.TempDir()
	a := newArchiver(t, fresh, nil)
	a.SyncStores(ctx, h.loc, time.Time{}, nil)
	require.NoError(t, a.Close())
	want := figures(t, fresh)
	require.NotNil(t, want.all.OutputTokens)
	require.Equal(t, int64(210), *want.all.OutputTokens)
	for _, kill := range []struct {
		name string
		// nth is the end of a damaged run (from 1, in the order the
		// repair writes them) at which the kill comes; written: after
		// it (else before it).
		nth     int
		written bool
	}{
		{"not_killed", 0, false},
		{"before_ending_the_first_run", 1, false},
		{"after_ending_the_first_run", 1, true},
		{"before_ending_the_second_run", 2, false},
		{"after_ending_the_second_run", 2, true},
	} {
		for _, lost := range []bool{false, true} {
			if kill.nth == 0 && lost {
				continue
			}
			name := kill.name
			if lost {
				name += "_ledger_lost"
			}
			t.Run(name, func(t *testing.T) {
				var killAt func(map[string]Outcome, string, int) bool
				if kill.nth > 0 {
					killAt = func(_ map[string]Outcome, _ string, n int) bool { return n == kill.nth }
				}
				root, first, repaired := killedRepair(t, h.loc, h.parent, `"type":"say"`, `"type":"sax"`, killAt, kill.written, lost)
				session := first[h.parent].RunID
				require.Equal(t, ActionNew, repaired[h.parent].Action, "%s", repaired[h.parent].Reason)
				newSession := repaired[h.parent].RunID

				a := newArchiver(t, root, nil)
				rep := byPath(a.SyncStores(ctx, h.loc, time.Time{}, nil))
				require.NoError(t, a.Close())
				assert.NotEqual(t, ActionNew, rep[h.parent].Action, "the task archived a third time: %s", rep[h.parent].Reason)
				counted := func(when string) {
					t.Helper()
					live := liveRunsOf(t, root, h.task)
					assert.Len(t, live, 1, "%s: the live runs of the sub-task's folder (%+v)", when, rep[h.task])
					got := figures(t, root)
					if assert.NotNil(t, got.all.OutputTokens, "%s: no tokens counted", when) {
						assert.Equal(t, *want.all.OutputTokens, *got.all.OutputTokens, "%s: every token once", when)
					}
				}
				counted("after the plain sync")
				if _, err := os.Stat(filepath.Join(root, "transcripts", newSession+".jsonl")); err != nil {
					// Killed before the task's new run was written: the
					// damaged run stands, for the next repair to finish.
					assert.Equal(t, []string{session}, liveRunsOf(t, root, h.parent))
					a = newArchiver(t, root, nil)
					require.Empty(t, a.Repair(ctx, checkRaw(t, root).Damaged))
					rep = byPath(a.SyncStores(ctx, h.loc, time.Time{}, nil))
					require.NoError(t, a.Close())
					require.Equal(t, ActionNew, rep[h.parent].Action, "%s", rep[h.parent].Reason)
					newSession = rep[h.parent].RunID
				}
				endedOnceBy(t, root, session, newSession)
				if live := liveRunsOf(t, root, h.task); assert.Len(t, live, 1) {
					linkedTo(t, root, newSession, live[0])
				}
				counted("at the end")
				assert.Empty(t, checkRaw(t, root).Damaged, "nothing left to repair")
				a = newArchiver(t, root, nil)
				again := a.SyncStores(ctx, h.loc, time.Time{}, nil)
				require.NoError(t, a.Close())
				assert.Equal(t, 2, again.Counts[ActionUnchanged], "%+v", again.Outcomes)
			})
		}
	}
}
