package synccmd_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// rooLegacy is a Roo Code task folder before 3.35 (Kilo Code before
// 4.135), written by hand from RooCodeInc/Roo-Code v3.34.8 (b022f58; no
// public capture of a sub-task was found): its task (say text, the first
// of ui_messages.json, and "<task>\n...\n</task>" in the conversation,
// Task.startTask) and one request; when it starts a sub-task, a new_task
// call whose message the sub-task starts with (NewTaskTool.execute,
// startSubtask; the sub-task's folder names no parent and the call's
// result no task); once the sub-task ended, Task.completeSubtask's say
// subtask_result and, under the native tool protocol, the call's
// tool_result "[new_task completed] Result: <its result>" (under the XML
// one, a user text of the same words, then NewTaskTool's "Successfully
// created new task in <mode> mode with message: ..." as the call's
// result), and a second request.
type rooLegacy struct {
	id, text string
	in, out  int
	// messages are the new_task calls' messages (none: no sub-task).
	messages []string
	xml      bool
}

func (r rooLegacy) folder(ts int64, returned bool) (ui, api []byte) {
	q, req := rooQuote, rooRequest
	u, a := rooOpening(ts, r.text, r.in, r.out)
	for i, m := range r.messages {
		at := ts + int64(i+1)*1000
		call := fmt.Sprintf("toolu_0%dNewTask", i+1)
		u = append(u, fmt.Sprintf(`{"ts":%d,"type":"ask","ask":"tool","text":%s}`, at, q(`{"tool":"newTask","mode":"Code","content":`+q(m)+`,"todos":[]}`)))
		if r.xml {
			a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"ts":%d}`, q("I'll delegate it.\n\n<new_task>\n<mode>code</mode>\n<message>\n"+m+"\n</message>\n</new_task>"), at))
		} else {
			a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"I'll delegate it."},{"type":"tool_use","id":%s,"name":"new_task","input":{"mode":"code","message":%s}}],"ts":%d}`, q(call), q(m), at))
		}
		if !returned && i == len(r.messages)-1 {
			break // the last sub-task runs
		}
		u = append(u, fmt.Sprintf(`{"ts":%d,"type":"say","say":"subtask_result","text":"Done."}`, at+500), req(at+600, 30, 40))
		if r.xml {
			a = append(a, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"[new_task completed] Result: Done."}],"ts":%d}`, at+500),
				fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s},{"type":"text","text":%s}],"ts":%d}`,
					q("[new_task in Code mode: '"+m+"'] Result:"), q("Successfully created new task in Code mode with message: "+m+" and 0 todo items"), at+500))
		} else {
			a = append(a, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%s,"content":"[new_task completed] Result: Done."}],"ts":%d}`, q(call), at+500))
		}
		a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Go on."}],"ts":%d}`, at+600))
	}
	if returned || len(r.messages) == 0 {
		u = append(u, fmt.Sprintf(`{"ts":%d,"type":"say","say":"completion_result","text":"Finished."}`, ts+9000))
		a = append(a, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Finished."}],"ts":%d}`, ts+9000))
	}
	return []byte("[" + strings.Join(u, ",") + "]"), []byte("[" + strings.Join(a, ",") + "]")
}

// put writes the task's folder, complete, in h's Roo Code store, an hour
// old, and returns its path.
func (r rooLegacy) put(h *clitest.Home) string {
	ui, api := r.folder(1767225600000, true)
	dir := filepath.Join(rooTasks, r.id)
	h.Put(filepath.Join(dir, "ui_messages.json"), ui, time.Hour)
	h.Put(filepath.Join(dir, "api_conversation_history.json"), api, time.Hour)
	return filepath.Join(h.Dir, dir)
}

// TestSyncRooLegacySubTask: a Roo Code sub-task before 3.35, whose folder
// names no parent and whose parent's new_task result names no task, is
// tied to the call by its first message, the call's message
// (abi.StoreParent.Prompt): it ends as a child run of its parent's run,
// linked at that call (path agent.<id>_<call id>, named by the sub-task's
// id), whether both folders are synced at once, or the sub-task alone
// first (a run of its own, archived again as the child run by the sync
// that archives its parent, the first run ended, superseded by it), the
// call under the native or the XML tool protocol (its message written
// between newlines, which Roo trims); ls lists the parent alone with the
// sub-task's tokens as its sub-run's, doctor counts both sessions
// archived, and a further sync changes nothing. When the message is the
// first of two tasks, or of none (Roo's "\\@" made "\@": not the same
// words), or two calls of the parent state it, the sub-task stays a run
// of its own and the parent's run links nothing. Before, every such
// sub-task was a run of its own.
func TestSyncRooLegacySubTask(t *testing.T) {
	t.Parallel()
	const (
		parentID = "f1000000-0000-4000-8000-000000000011"
		childID  = "c2000000-0000-4000-8000-000000000012"
		otherID  = "d4000000-0000-4000-8000-000000000014"
		message  = "Write the changelog for v2.\nList every commit."
	)
	parent := rooLegacy{id: parentID, text: "Plan the release.", in: 20, out: 150, messages: []string{message}}
	child := rooLegacy{id: childID, text: message, in: 10, out: 60}
	xmlParent := parent
	xmlParent.xml = true
	twice := parent
	twice.messages = []string{message, message}
	escaped := parent
	escaped.messages = []string{`See \\@/docs.`}
	escapedChild := child
	escapedChild.text = `See \@/docs.`
	other := rooLegacy{id: otherID, text: message, in: 1, out: 2} // a task the user started with the same words
	for _, c := range []struct {
		name       string
		parent     rooLegacy
		others     []rooLegacy // the sub-task first
		childFirst bool
		linked     bool
		call       string
	}{
		{name: "both at once", parent: parent, others: []rooLegacy{child}, linked: true, call: "toolu_01NewTask"},
		{name: "the sub-task synced alone first", parent: parent, others: []rooLegacy{child}, childFirst: true, linked: true, call: "toolu_01NewTask"},
		{name: "the XML tool protocol, the sub-task first", parent: xmlParent, others: []rooLegacy{child}, childFirst: true, linked: true, call: "cline-1-x0"},
		{name: "two tasks start with the message", parent: parent, others: []rooLegacy{child, other}},
		{name: "two calls state it", parent: twice, others: []rooLegacy{child}},
		{name: "an escaped @: not the same words", parent: escaped, others: []rooLegacy{escapedChild}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, rooTasks)
			put := func(r rooLegacy) string { return r.put(h) }
			childDir := filepath.Join(h.Dir, rooTasks, c.others[0].id)
			first := ""
			if c.childFirst {
				dir := put(c.others[0])
				first = syncNewRuns(t, h, store, "sync of the sub-task alone", 1)[dir]
			}
			parentDir := put(c.parent)
			for _, o := range c.others {
				put(o)
			}
			var r clitest.Result
			clitest.Unchanged(t, store, "sync", func() { r = h.OK("sync") })
			runs := map[string]string{} // folder -> its run now (the last outcome's)
			for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
				if f := strings.Split(l, "\t"); len(f) >= 4 {
					if prev := runs[f[3]]; prev != "" && prev != f[1] && first == "" {
						first = prev // synced at once: a run of its own first
					}
					runs[f[3]] = f[1]
				}
			}
			parentRun, childRun := runs[parentDir], runs[childDir]
			if childRun == "" {
				childRun = first
			}
			if parentRun == "" || childRun == "" {
				t.Fatalf("runs %v: want the parent's and the sub-task's\n%v", runs, r)
			}
			ls := strings.Split(strings.TrimSpace(h.OK("ls").Out), "\n")
			if !c.linked {
				if len(ls) != 1+len(c.others) {
					t.Errorf("ls: %q, want every task a run of its own", ls)
				}
				for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, parentRun)) {
					if ev.ChildRunID != "" {
						t.Errorf("the parent's run links %s at %s", ev.ChildRunID, ev.Path)
					}
				}
				syncWant(t, h, store, "sync with nothing new", nothing)
				return
			}
			wantLinkedAt(t, h, parentRun, childRun, c.call, "agent."+childID+"_"+c.call, childID)
			if first != "" && first != childRun {
				if by := supersededBy(t, h, first); by != childRun {
					t.Errorf("the sub-task's first run %s ends superseded by %q, want %s", first, by, childRun)
				}
			}
			if len(ls) != 1 {
				t.Errorf("ls: %q, want the parent alone", ls)
			}
			if row := lsRow(t, h, parentRun); row.SubRunUsage["output_tokens"] != 60 || row.UsageInAll["output_tokens"] != 150+40+60 {
				t.Errorf("ls --json: %+v, want the sub-task's 60 output tokens, %d in all, once", row, 150+40+60)
			}
			if d := h.OK("doctor").Out; !strings.Contains(d, "all 2 session(s) archived") {
				t.Errorf("doctor: want both sessions archived:\n%s", d)
			}
			syncWant(t, h, store, "sync with nothing new", nothing)
		})
	}
}

// rooLegacyRelinked syncs a Roo Code sub-task before 3.35 alone (a run of
// its own, loose), then its parent, whose new_task call's message is the
// sub-task's first message: the sub-task archived again as the parent's
// child run (child), which supersedes the first; and the output tokens
// of the two tasks.
func rooLegacyRelinked(t *testing.T) (h *clitest.Home, store, loose, child string, output int64) {
	t.Helper()
	const message = "Write the changelog."
	parent := rooLegacy{id: "f1000000-0000-4000-8000-000000000021", text: "Plan the release.", in: 20, out: 150, messages: []string{message}}
	sub := rooLegacy{id: "c2000000-0000-4000-8000-000000000022", text: message, in: 10, out: 60}
	h = clitest.NewHome(t)
	store = filepath.Join(h.Dir, rooTasks)
	put := func(r rooLegacy) string { return r.put(h) }
	subDir := put(sub)
	loose = syncNewRuns(t, h, store, "sync of the sub-task alone", 1)[subDir]
	put(parent)
	got := syncWant(t, h, store, "sync of the parent", map[string]int{"new": 2})
	for _, id := range got["new"] {
		if id != loose && clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id))[0].ParentRunID != "" {
			child = id
		}
	}
	if loose == "" || child == "" {
		t.Fatalf("runs %q then %v: want the sub-task's own run, then its child run", loose, got)
	}
	return h, store, loose, child, 150 + 40 + 60
}
