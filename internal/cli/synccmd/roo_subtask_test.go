package synccmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// rooTask is a Roo Code 3.35 to 3.48 task folder, written by hand from
// RooCodeInc/Roo-Code v3.48.0 (no public capture of a delegation was
// found): its task and one request (tokens in and out); when it
// delegates, a new_task call (native tool protocol: a tool_use block),
// saved with no result while the sub-task runs (the "Delegated to child
// task" result is pushed after the parent was saved and closed,
// delegateParentAndOpenChild); once the sub-task ended (returned),
// ClineProvider.reopenParentFromDelegation appends to ui_messages.json a
// say subtask_result and to api_conversation_history.json a user
// message holding the call's tool_result, "Subtask <child id>
// completed.\n\nResult:\n<summary>", and the task goes on with a second
// request. No history_item.json (3.49 and later): nothing in a
// sub-task's folder names its parent.
type rooTask struct {
	id, text string
	in, out  int
	// child is the sub-task the task delegates to (""), call its call id.
	child, call, childText, summary string
	in2, out2                       int
	// xml: the XML tool protocol (the call a <new_task> tag in the
	// assistant's text, the report a user text: Roo finds no tool_use
	// to answer).
	xml bool
}

// rooQuote is s as a JSON string.
func rooQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// rooRequest is a Roo Code api_req_started UI message at ts stating in
// and out tokens.
func rooRequest(ts int64, in, out int) string {
	return fmt.Sprintf(`{"ts":%d,"type":"say","say":"api_req_started","text":%s}`, ts,
		rooQuote(fmt.Sprintf(`{"apiProtocol":"anthropic","tokensIn":%d,"tokensOut":%d,"cacheWrites":0,"cacheReads":0,"cost":0.001}`, in, out)))
}

// rooOpening is the start of a Roo Code task's ui_messages.json (ui) and
// api_conversation_history.json (api) entries: the task's text at ts, its
// first request at ts+100 stating in and out tokens.
func rooOpening(ts int64, text string, in, out int) (ui, api []string) {
	return []string{fmt.Sprintf(`{"ts":%d,"type":"say","say":"text","text":%s}`, ts, rooQuote(text)), rooRequest(ts+100, in, out)},
		[]string{fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"ts":%d}`, rooQuote("<task>\n"+text+"\n</task>"), ts)}
}

// folder is the task's ui_messages.json and api_conversation_history.json
// before the sub-task returned (returned false) or after.
func (r rooTask) folder(ts int64, returned bool) (ui, api []byte) {
	q, req := rooQuote, rooRequest
	u, a := rooOpening(ts, r.text, r.in, r.out)
	if r.child == "" {
		u = append(u, fmt.Sprintf(`{"ts":%d,"type":"say","say":"completion_result","text":%s}`, ts+200, q(r.summary)))
		a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"ts":%d}`, q(r.summary), ts+200))
		return []byte("[" + strings.Join(u, ",") + "]"), []byte("[" + strings.Join(a, ",") + "]")
	}
	u = append(u, fmt.Sprintf(`{"ts":%d,"type":"ask","ask":"tool","text":%s}`, ts+200, q(`{"tool":"newTask","mode":"code","content":`+q(r.childText)+`}`)))
	report := q("Subtask " + r.child + " completed.\n\nResult:\nDone.")
	if r.xml {
		a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"ts":%d}`, q("I'll delegate it.\n\n<new_task>\n<mode>code</mode>\n<message>"+r.childText+"</message>\n</new_task>"), ts+200))
	} else {
		a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"I'll delegate it."},{"type":"tool_use","id":%s,"name":"new_task","input":{"mode":"code","message":%s,"todos":""}}],"ts":%d}`, q(r.call), q(r.childText), ts+200))
	}
	if returned && r.xml {
		u = append(u, fmt.Sprintf(`{"ts":%d,"type":"say","say":"subtask_result","text":"Done."}`, ts+1000), req(ts+1100, r.in2, r.out2),
			fmt.Sprintf(`{"ts":%d,"type":"say","say":"completion_result","text":%s}`, ts+1200, q(r.summary)))
		a = append(a, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"ts":%d}`, report, ts+1000),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"ts":%d}`, q(r.summary), ts+1200))
	} else if returned {
		u = append(u, fmt.Sprintf(`{"ts":%d,"type":"say","say":"subtask_result","text":"Done."}`, ts+1000), req(ts+1100, r.in2, r.out2),
			fmt.Sprintf(`{"ts":%d,"type":"say","say":"completion_result","text":%s}`, ts+1200, q(r.summary)))
		a = append(a, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%s,"content":%s}],"ts":%d}`, q(r.call), report, ts+1000),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"ts":%d}`, q(r.summary), ts+1200))
	}
	return []byte("[" + strings.Join(u, ",") + "]"), []byte("[" + strings.Join(a, ",") + "]")
}

// The Roo Code tasks of the tests: the top task, its sub-task and the
// sub-task's own, their folders in a Roo Code store (Code's), and the top
// task and its sub-task as rooTasks.
const (
	rooTop    = "f1000000-0000-4000-8000-000000000001"
	rooMiddle = "c2000000-0000-4000-8000-000000000002"
	rooLeaf   = "a3000000-0000-4000-8000-000000000003"
)

var (
	rooTasks  = filepath.Join(".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")
	rooParent = rooTask{id: rooTop, text: "Plan the release.", in: 20, out: 150, child: rooMiddle, call: "toolu_01NewTask",
		childText: `Write the changelog of \\@/docs.`, summary: "The release is planned.", in2: 30, out2: 40}
	// The sub-task's first message is the call's with "\\@" made "\@"
	// (NewTaskTool.execute): not the same words, so the result alone ties
	// them (abi.StoreParent.Prompt links none; TestSyncRooLegacySubTask).
	rooChild = rooTask{id: rooMiddle, text: `Write the changelog of \@/docs.`, in: 10, out: 60, summary: "Wrote CHANGELOG.md."}
)

// TestSyncRooDelegatedSubTask: a Roo Code 3.35-3.48 sub-task, whose
// folder names no parent while its parent's new_task call's result names
// it ("Subtask <id> completed.", abi.StoreParent.Result), ends as a child
// run of its parent's run, linked at that call (path
// agent.<id>_<call id>, in the part holding the call, named by the
// sub-task's id), whether the sub-task was synced before its parent's
// result was written (a run of its own then, archived again as the child
// run by the sync that archives the parent's result, the first run ended,
// superseded by it) or both folders are synced at once, complete; a
// sub-task's own sub-task, synced before either result, follows its
// parent's run when that is archived again (its link moves to the new
// run). ls lists the top task alone with the sub-tasks' output tokens
// as its sub-runs', and ls and stats --all count every request's once;
// a further sync changes nothing. Before, each sub-task stayed a session
// of its own: ls listed them all.
func TestSyncRooDelegatedSubTask(t *testing.T) {
	t.Parallel()
	tasks, top, parent, child := rooTasks, rooTop, rooParent, rooChild
	delegating := child // the child, delegating in its turn
	delegating.child, delegating.call, delegating.childText, delegating.in2, delegating.out2 = rooLeaf, "toolu_02NewTask", `Collect the commits of \\@/src.`, 5, 7
	grandchild := rooTask{id: rooLeaf, text: `Collect the commits of \@/src.`, in: 3, out: 9, summary: "12 commits."}
	xmlParent := parent // the XML tool protocol: the plugin names the call by the message's index
	xmlParent.xml, xmlParent.call = true, "cline-1-x0"
	for _, c := range []struct {
		name string
		// tasks are the folders, the parent's first; before: synced
		// once before the results were written.
		tasks  []rooTask
		before bool
		// sub and all: the top run's sub-runs' output tokens and all.
		sub, all int64
	}{
		{name: "the sub-task synced before its parent's result", tasks: []rooTask{parent, child}, before: true, sub: 60, all: 150 + 40 + 60},
		{name: "both at once", tasks: []rooTask{parent, child}, sub: 60, all: 150 + 40 + 60},
		{name: "a sub-task's sub-task, synced before the results", tasks: []rooTask{parent, delegating, grandchild}, before: true,
			sub: 60 + 7 + 9, all: 150 + 40 + 60 + 7 + 9},
		{name: "the XML tool protocol, the sub-task synced before its parent's result", tasks: []rooTask{xmlParent, child}, before: true, sub: 60, all: 150 + 40 + 60},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, tasks)
			put := func(r rooTask, returned bool, age time.Duration) string {
				ui, api := r.folder(1767225600000, returned)
				dir := filepath.Join(tasks, r.id)
				h.Put(filepath.Join(dir, "ui_messages.json"), ui, age)
				h.Put(filepath.Join(dir, "api_conversation_history.json"), api, age)
				return filepath.Join(h.Dir, dir)
			}
			first := map[string]string{} // folder -> its run before the results
			if c.before {
				for _, r := range c.tasks {
					put(r, false, 2*time.Hour)
				}
				first = syncNewRuns(t, h, store, "sync while the tasks wait", len(c.tasks))
			}
			var r clitest.Result
			for _, task := range c.tasks {
				put(task, true, time.Hour)
			}
			clitest.Unchanged(t, store, "sync", func() { r = h.OK("sync") })
			runs := map[string]string{} // folder -> its run now (the last outcome's)
			for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
				f := strings.Split(l, "\t")
				if len(f) < 4 || f[0] != "new" && f[0] != "grown" {
					t.Fatalf("sync: %q, want new and grown runs only\n%v", l, r)
				}
				if prev := runs[f[3]]; prev != "" && prev != f[1] && first[f[3]] == "" {
					first[f[3]] = prev // synced at once: a run of its own first
				}
				runs[f[3]] = f[1]
			}
			topDir := filepath.Join(h.Dir, tasks, top)
			if c.before && runs[topDir] != first[topDir] {
				t.Errorf("the top task's run %s, first %s: want it grown", runs[topDir], first[topDir])
			}
			for i := 1; i < len(c.tasks); i++ {
				up, r := c.tasks[i-1], c.tasks[i]
				// The middle task's run archived again, its sub-task's
				// link moved with it: linked in the middle task's
				// latest run.
				upRun, run := runs[filepath.Join(h.Dir, tasks, up.id)], runs[filepath.Join(h.Dir, tasks, r.id)]
				if upRun == "" || run == "" {
					t.Fatalf("runs %v: want one of %s and of %s", runs, up.id, r.id)
				}
				wantLinkedAt(t, h, upRun, run, up.call, "agent."+r.id+"_"+up.call, r.id)
				if old := first[filepath.Join(h.Dir, tasks, r.id)]; old != "" && old != run {
					if by := supersededBy(t, h, old); by == "" {
						t.Errorf("%s's first run %s does not end superseded", r.id, old)
					}
				}
			}
			if row := lsRow(t, h, runs[topDir]); row.SubRunUsage["output_tokens"] != c.sub || row.UsageInAll["output_tokens"] != c.all {
				t.Errorf("ls --json: %+v, want the sub-runs' %d output tokens, %d in all, once", row, c.sub, c.all)
			}
			var st struct {
				UsageInAll map[string]int64 `json:"usage_in_all"`
			}
			if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil || st.UsageInAll["output_tokens"] != c.all {
				t.Errorf("stats --all --json: usage_in_all %v (%v), want %d output tokens, once", st.UsageInAll, err, c.all)
			}
			syncWant(t, h, store, "sync with nothing new", nothing)
		})
	}
}

// TestSyncRooSubTaskArchivedBefore: a Roo Code 3.35-3.48 parent whose
// result naming its sub-task was archived when the sub-task's folder was
// not there (copied back later, or the archive of a twasm before ABI
// 1.11, which linked none), its sub-task then archived as a run of its
// own: nothing of the parent is new to a later sync, so the storage's
// open runs of such stores are looked at once (archive/subtasks-checked
// marks it done; a storage an older twasm wrote has none): that sync
// archives the sub-task again as the parent's child run, linked at the
// call, the first run superseded, and ls lists the parent alone with the
// sub-task's tokens once. A further sync changes nothing.
func TestSyncRooSubTaskArchivedBefore(t *testing.T) {
	t.Parallel()
	tasks, sub, parent, child := rooTasks, rooMiddle, rooParent, rooChild
	h := clitest.NewHome(t)
	store := filepath.Join(h.Dir, tasks)
	put := func(r rooTask) string {
		ui, api := r.folder(1767225600000, true)
		dir := filepath.Join(tasks, r.id)
		h.Put(filepath.Join(dir, "ui_messages.json"), ui, time.Hour)
		h.Put(filepath.Join(dir, "api_conversation_history.json"), api, time.Hour)
		return filepath.Join(h.Dir, dir)
	}
	parentDir := put(parent)
	parentRun := syncNewRuns(t, h, store, "sync of the parent alone", 1)[parentDir]
	childDir := put(child)
	first := syncNewRuns(t, h, store, "sync of the sub-task's folder, come later", 1)[childDir]
	if parentRun == "" || first == "" {
		t.Fatalf("runs %q, %q: want the parent's and the sub-task's", parentRun, first)
	}
	// Two runs: the sub-task's was archived as a session of its own.
	if ls := strings.Split(strings.TrimSpace(h.OK("ls").Out), "\n"); len(ls) != 2 {
		t.Fatalf("ls: %q, want the two runs", ls)
	}
	marker := filepath.Join(h.Stor, "archive", "subtasks-checked")
	if err := os.Remove(marker); err != nil {
		t.Fatalf("the marker: %v", err)
	}
	childRun := syncNewRuns(t, h, store, "sync of a storage not looked at", 1)[childDir]
	if childRun == "" || childRun == first {
		t.Fatalf("the sub-task's runs %q then %q: want a new one", first, childRun)
	}
	wantLinkedAt(t, h, parentRun, childRun, parent.call, "agent."+sub+"_"+parent.call, sub)
	if by := supersededBy(t, h, first); by != childRun {
		t.Errorf("the sub-task's first run ends superseded by %q, want %s", by, childRun)
	}
	if row := lsRow(t, h, parentRun); row.SubRunUsage["output_tokens"] != 60 || row.UsageInAll["output_tokens"] != 250 {
		t.Errorf("ls --json: %+v, want the sub-task's 60 output tokens, once, 250 in all", row)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the marker after the sync: %v", err)
	}
	syncWant(t, h, store, "sync with nothing new", nothing)
}
