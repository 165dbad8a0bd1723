package archive

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/twasm/twasm/internal/runctl"
)

// A folder store's session may name no parent while its parent names it
// (abi.StoreParent.Result, ABI 1.11): Roo Code 3.35 to 3.48 kept a
// sub-task's HistoryItem (parentTaskId) only in the editor's state, and
// wrote the new_task call's result into the parent's conversation once
// the sub-task ended, "Subtask <child id> completed.\n\nResult:\n..."
// (ClineProvider.reopenParentFromDelegation). The sub-task's folder is
// the directory of that id beside the parent's. So the link is made from
// the parent's side, by the sync that archives a part of the parent
// whose results name the sub-task: syncFolder notes such a part
// (noteNaming), and once every session of the sync is done, one worker
// (linkNamed) reads the parent's run for the results naming other
// sessions and archives each named session whose run is not a child run
// yet as one of the parent's run, linked at the call its result answers
// (subAgentPath, named by the call's description): a session archived
// before as a run of its own (the sub-task ran, and was synced, before
// its parent's result was written; or the sync met it first) is
// archived again, whole, and its first run ended, superseded by the
// child run (as a sub-agent file's legacy run is), so its tokens count
// once; a sub-task's own sub-tasks, linked in its first run, follow it
// into the child run. A named session not archivable then (its files not
// settled, or not there yet) is left as it is: a later sync archives it
// as a run of its own, and nothing names it again (the parent's part is
// not new then). The open runs such stores held before a twasm that
// links them (ABI 1.11) are looked at once per storage
// (noteArchivedNamers, archive/subtasks-checked), so an archive made
// before gets its links too.

// namedParts are the parts syncFolder archived in a sync whose results
// may name sub-tasks (noteNaming), shared by the workers and by copies of
// the Archiver.
type namedParts struct {
	mu    sync.Mutex
	parts []namedPart
	// again are the runs whose sub-task's new child run a kill cut short
	// before its part (Recover): looked at again by this sync's
	// linkNamed, their store found among the sync's (noteArchivedNamers).
	again []string
}

type namedPart struct {
	loc   *Location
	dir   string // the parent's folder
	runID string
}

// namesSubTasks reports whether a folder store declares how a session's
// run names the sessions it started that name no parent: by a result
// (abi.StoreParent.Result) or by a call's prompt (abi.StoreParent.Prompt).
func namesSubTasks(loc *Location) bool {
	return loc.Kind == KindFolder && loc.Parent != nil && (loc.Parent.Result != "" || loc.Parent.Prompt != nil)
}

// noteNaming notes a part of session folder dir (run runID) archived
// now, whose stream body may hold results naming sub-tasks or calls
// starting them: when the store declares how and the body holds the
// line's words before "{key}" (abi.StoreParent.Result) or the call's
// tool name (abi.StoreParent.Prompt).
func (a *Archiver) noteNaming(loc *Location, dir, runID string, body []byte) {
	p := loc.Parent
	if !namesSubTasks(loc) || runID == "" || a.named == nil {
		return
	}
	lit, _, _ := strings.Cut(p.Result, "{key}")
	byResult := p.Result != "" && (lit == "" || strings.ContainsAny(lit, "\"\\<>&") || bytes.Contains(body, []byte(lit)))
	byPrompt := p.Prompt != nil && (p.Prompt.Name == "" || bytes.Contains(body, []byte(p.Prompt.Name)))
	if !byResult && !byPrompt {
		return
	}
	a.named.mu.Lock()
	a.named.parts = append(a.named.parts, namedPart{loc: loc, dir: dir, runID: runID})
	a.named.mu.Unlock()
}

// subTasksMarker is the file (beside the ledger) that says the open runs
// of the folder stores that declare how a parent names a sub-task
// (abi.StoreParent.Result) were looked at once for the sub-tasks their
// results name (noteArchivedNamers): a twasm before ABI 1.11 archived
// such parents' results, and their sub-tasks as runs of their own, and
// no part of the parents is new to a later sync.
const subTasksMarker = "subtasks-checked"

// subTasksPromptMarker is subTasksMarker for the stores that also
// declare how a call's prompt ties a sub-task to it
// (abi.StoreParent.Prompt, ABI 1.12): a twasm of 1.11 looked at their
// runs for results only.
const subTasksPromptMarker = "subtasks-prompts-checked"

// noteArchivedNamers notes, once per storage, every open run of the
// stores among locs that declare how a parent names its sub-tasks, as if
// a part of it were archived now (noteNaming), and returns the markers
// to write once linkNamed has looked at them (subTasksMarker for stores
// declaring a result, subTasksPromptMarker for those declaring a
// prompt; none when each is there, or no store declares either); and,
// in every sync, the runs Recover noted again (namedParts.again).
func (a *Archiver) noteArchivedNamers(locs []Location) []string {
	if a.named == nil || a.opts.DryRun {
		return nil
	}
	var stores []*Location
	var markers []string
	for i := range locs {
		if l := &locs[i]; namesSubTasks(l) {
			stores = append(stores, l)
			if l.Parent.Result != "" {
				markers = append(markers, subTasksMarker)
			}
			if l.Parent.Prompt != nil {
				markers = append(markers, subTasksPromptMarker)
			}
		}
	}
	if len(stores) == 0 {
		return nil
	}
	slices.Sort(markers)
	markers = slices.Compact(markers)
	var parts []namedPart
	note := func(e *Entry) {
		if e.Closed || e.Pending || e.Parts == 0 || e.SupersededBy != "" {
			return
		}
		for _, l := range stores {
			if filepath.Dir(e.Path) == l.Dir && e.Provider == l.Provider {
				parts = append(parts, namedPart{loc: l, dir: e.Path, runID: e.RunID})
				return
			}
		}
	}
	a.named.mu.Lock()
	again := a.named.again
	a.named.again = nil
	a.named.mu.Unlock()
	for _, id := range again {
		if e := a.ledger.byRun(id); e != nil {
			note(e)
		}
	}
	done := true
	for i, m := range markers {
		markers[i] = filepath.Join(filepath.Dir(a.ledger.path), m)
		if _, err := os.Stat(markers[i]); err != nil {
			done = false
		}
	}
	if done {
		markers = nil
	} else {
		a.ledger.each(note)
	}
	a.named.mu.Lock()
	a.named.parts = append(a.named.parts, parts...)
	a.named.mu.Unlock()
	return markers
}

// maxNamedRounds bounds how many times linkNamed looks again at the parts
// its own links archived (a sub-task's sub-tasks).
const maxNamedRounds = 8

// linkNamed links the sessions the parts noted in this sync name
// (noteNaming) as child runs of their namers' runs, one at a time, and
// returns what it archived.
func (a *Archiver) linkNamed(ctx context.Context) []Outcome {
	if a.named == nil {
		return nil
	}
	var outs []Outcome
	prompts := map[string]storePrompts{} // by store directory, read once
	for range maxNamedRounds {
		a.named.mu.Lock()
		parts := a.named.parts
		a.named.parts = nil
		a.named.mu.Unlock()
		if len(parts) == 0 || a.opts.DryRun {
			break
		}
		slices.SortFunc(parts, func(x, y namedPart) int { return strings.Compare(x.dir+"\x00"+x.runID, y.dir+"\x00"+y.runID) })
		parts = slices.CompactFunc(parts, func(x, y namedPart) bool { return x.runID == y.runID })
		for _, np := range parts {
			if ctx.Err() != nil {
				return outs
			}
			pe := a.ledger.byRun(np.runID)
			if pe == nil || pe.Closed || pe.Pending || pe.Parts == 0 {
				continue
			}
			e := *pe
			in, err := a.sessionLinksOf(&e, np.loc.Parent.Prompt)
			if err != nil {
				a.opts.Logger.Warn("sub-task link: read the session's run", "run", e.RunID, "err", err)
				continue
			}
			for _, by := range []struct {
				keys   map[string]int
				prompt bool
			}{{namedKeys(np.loc.Parent.Result, in), false}, {a.promptLinks(np, in, prompts), true}} {
				for _, key := range slices.Sorted(maps.Keys(by.keys)) {
					if o, ok := a.linkSubTask(ctx, np.loc, np.dir, &e, in, key, by.keys[key], by.prompt); ok {
						outs = append(outs, o)
					}
				}
			}
		}
	}
	return outs
}

// promptLinks are the sessions beside np's whose first prompt one call
// of its run (in) states (promptKeys; none when the store declares no
// abi.StoreParent.Prompt or the run states no prompt), the store's
// prompts read once per linkNamed (prompts, by directory).
func (a *Archiver) promptLinks(np namedPart, in sessionLinks, prompts map[string]storePrompts) map[string]int {
	if np.loc.Parent.Prompt == nil || len(in.prompts) == 0 {
		return nil
	}
	dir := filepath.Dir(np.dir)
	sp, ok := prompts[dir]
	if !ok {
		sp = readStorePrompts(np.loc, dir)
		prompts[dir] = sp
	}
	return promptKeys(np.dir, in, sp)
}

// namedKeys are the keys the lines of a session's results name as the
// store declares (result: a line holding "{key}"), each with the number
// of the call its result answers.
func namedKeys(result string, in sessionLinks) map[string]int {
	pre, post, ok := strings.Cut(result, "{key}")
	keys := map[string]int{}
	if !ok {
		return keys
	}
	for line, n := range in.named {
		if len(line) <= len(pre)+len(post) || !strings.HasPrefix(line, pre) || !strings.HasSuffix(line, post) {
			continue
		}
		if key := line[len(pre) : len(line)-len(post)]; plainKey(key) {
			if old, dup := keys[key]; !dup || n < old {
				keys[key] = n
			}
		}
	}
	return keys
}

// linkSubTask archives the session of store loc named key, beside the
// session folder dir whose run (pe, read as in) names it at call n, as a
// child run of that run linked at the call; ok false when there is
// nothing to do (no such session; its run a child run of a run not
// superseded, ended, pending, the namer's own or one it descends from;
// or a session that names its parent itself).
func (a *Archiver) linkSubTask(ctx context.Context, loc *Location, dir string, pe *Entry, in sessionLinks, key string, n int, byPrompt bool) (Outcome, bool) {
	child := filepath.Join(filepath.Dir(dir), key)
	if child == dir || n < 0 || n >= len(in.list) {
		return Outcome{}, false
	}
	if st, err := os.Stat(child); err != nil || !st.IsDir() {
		return Outcome{}, false
	}
	if parentKey(loc, child) != "" {
		return Outcome{}, false // it names its parent: linked by that (parentLink)
	}
	ce := a.ledger.ByPath(child)
	orphan := ""
	if o := a.orphaned(ce, child); o != nil && o.SupersededBy == pe.RunID {
		// Its run a repair ended, superseded by the namer's new run
		// (syncFolderAs left it for this link; or a kill came before
		// the folder was archived again): archived now as the repair
		// would have.
		orphan, ce = o.RunID, nil
	}
	if ce != nil && (ce.Closed || ce.Pending || ce.SupersededBy != "" || ce.Parts == 0 || ce.RunID == pe.RunID) {
		return Outcome{}, false
	}
	if ce != nil && ce.Parent != "" {
		// A child run already; archived again only when the run it
		// is linked in is superseded (the namer's own run archived
		// again as a child run of its parent's: its sub-tasks follow
		// it, or their tokens would count in no run).
		if up := a.ledger.byRun(ce.Parent); up == nil || up.SupersededBy == "" {
			return Outcome{}, false
		}
	}
	if ce != nil {
		// Not a run the namer's run descends from.
		for r, hops := pe.Parent, 0; r != "" && hops < 64; hops++ {
			if r == ce.RunID {
				return Outcome{}, false
			}
			up := a.ledger.byRun(r)
			if up == nil {
				break
			}
			r = up.Parent
		}
	}
	l := &fileLink{Link: runctl.Link{ParentID: pe.RunID, Iteration: pe.Parts - 1, Title: key}}
	callID := in.list[n].id
	atCall(&l.Link, in, n)
	l.Path = subAgentPath(key, callID)
	tie := "a sub-task its parent " + dir + " names in the result of call " + callID
	if byPrompt {
		tie = "a sub-task naming no parent whose first prompt is the one call " + callID + " of " + dir + " stating it, and no other session's"
	}
	why := tie + ": archived as a child run of run " + pe.RunID + ", linked at that call"
	if ce != nil {
		l.legacy, l.Supersedes = ce.RunID, ce.RunID
		why = tie + ", archived before as run " + ce.RunID + ", a session of its own: archived again, whole, as a child run of run " + pe.RunID + " linked at that call, which supersedes it"
	}
	o := a.syncFolderAs(ctx, Session{Loc: loc, Path: child}, l)
	if rs := a.repair; rs != nil && orphan != "" && o.Action == ActionNew {
		rs.mu.Lock()
		if _, ok := rs.why[orphan]; ok {
			rs.done[orphan] = o.RunID
		}
		rs.mu.Unlock()
	}
	if o.Action == ActionNew {
		if o.Reason != "" {
			why = joinReason(why, o.Reason)
		}
		o.Reason = why
	}
	return o, true
}
