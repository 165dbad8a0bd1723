package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/recorder"
)

// ActionDamaged is the outcome of a run whose raw capture is damaged and
// that `twasm sync --repair` could not archive again (RawDamage.Repair
// says why): it is kept as it is.
const ActionDamaged = "damaged"

// repairSet is what Repair marked for a sync: the damaged runs to archive
// again (and the runs of their sub-agent files, which follow them), by
// run id and by the path they were read from, and what replaced each.
type repairSet struct {
	mu     sync.Mutex
	why    map[string]string // run id -> why it is archived again
	byPath map[string]string // source path -> run id
	done   map[string]string // run id -> the run that supersedes it
}

// Repair marks the repairable runs among damaged (CheckRaw's) to be
// archived again by the next SyncStores of this Archiver: the session
// file is read whole, as if no run held it, into a new run (a sub-agent
// file's: a child run of its session's run, linked as a first sync links
// it), and once that run holds it, the damaged run is ended as
// cancelled, superseded by it (lifecycle.SupersededByField): stats,
// usage and the index leave it, and its sub-runs, out, so the session is
// counted once. The runs of a damaged run's sub-agent files are archived
// again with it (each from its own file, as a child of the new run), since
// the runs of a superseded run are left out too; a damaged sub-agent
// file's run is repaired by archiving its session so (RawDamage.Session),
// since a sub-agent's run is counted in its session's: a new child run
// beside the old one would count it twice. A session another run
// already holds whole (a repair a kill cut short after the new run was
// written) is not archived a third time: the damaged run is ended,
// superseded by that run, at once.
//
// The outcomes returned are those of the runs that are not repairable
// (ActionDamaged, kept as they are, saying why) and of the runs ended at
// once. Call [Archiver.Repaired] after SyncStores for the runs marked
// that no session of the sync replaced.
func (a *Archiver) Repair(ctx context.Context, damaged []RawDamage) []Outcome {
	a.recoverFirst(ctx)
	var outs []Outcome
	rs := &repairSet{why: map[string]string{}, byPath: map[string]string{}, done: map[string]string{}}
	seen := map[string]bool{}
	for _, d := range damaged {
		out := Outcome{Path: d.Path, Provider: d.Provider, RunID: d.RunID, DryRun: a.opts.DryRun}
		if !d.Repairable {
			out.Action, out.Reason = ActionDamaged, d.Problem+"; "+d.Repair
			outs = append(outs, out)
			continue
		}
		// The run a repair supersedes: the damaged run, or a damaged
		// sub-agent file's run's session's run.
		target := cmp.Or(d.Session, d.RunID)
		e := a.ledger.byRun(target)
		if e == nil || seen[target] {
			continue
		}
		seen[target] = true
		why := "run " + d.RunID + "'s raw capture is damaged (" + d.Problem + ")"
		if target != d.RunID {
			why = "the raw capture of run " + d.RunID + ", a sub-agent's run of this session, is damaged (" + d.Problem + ")"
		}
		out.Path, out.Provider, out.RunID = e.Path, e.Provider, e.RunID
		by := a.holderOf(e)
		if by != "" {
			out.Action, out.Reason = ActionClosed, why+"; run "+by+" holds the session again: this run is ended, superseded by it"
			if !a.opts.DryRun {
				if err := a.endReplaced(ctx, *e, by, why); err != nil {
					out.Action, out.Reason = ActionFailed, err.Error()
				}
			}
			outs = append(outs, out)
		} else {
			rs.why[target], rs.byPath[e.Path] = why, target
		}
		// Its sub-agent files' runs are archived again as child runs of
		// the new run (those a repair cut short ended, superseded by
		// it, before archiving them again too).
		a.ledger.each(func(c *Entry) {
			if c.Parent == target && (c.SupersededBy == "" || c.SupersededBy == by) {
				if _, ok := rs.why[c.RunID]; !ok {
					rs.why[c.RunID] = "the run of its session, " + target + ", is archived again (a raw capture is damaged)"
				}
				rs.byPath[c.Path] = c.RunID
			}
		})
	}
	a.repair = rs
	return outs
}

// Repaired is what became of the runs Repair marked: those no session of
// the sync replaced, as ActionDamaged (kept as they are: their file was
// not among the sessions read, or the part that was to replace them
// failed), by run id.
func (a *Archiver) Repaired() []Outcome {
	rs := a.repair
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ids := make([]string, 0, len(rs.why))
	for id := range rs.why {
		if _, ok := rs.done[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var outs []Outcome
	for _, id := range ids {
		e := a.ledger.byRun(id)
		if e == nil {
			continue
		}
		outs = append(outs, Outcome{Path: e.Path, Provider: e.Provider, RunID: id, Action: ActionDamaged, DryRun: a.opts.DryRun,
			Reason: rs.why[id] + "; not archived again: its file was not among the sessions this sync read (run `twasm sync --repair` without --provider or --since), or archiving it failed: the run is kept as it is"})
	}
	return outs
}

// repairing is why run runID is archived again in this sync ("": it is
// not).
func (a *Archiver) repairing(runID string) string {
	rs := a.repair
	if rs == nil || runID == "" {
		return ""
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, done := rs.done[runID]; done {
		return ""
	}
	return rs.why[runID]
}

// repairAt is the run read from path that this sync archives again ("":
// none).
func (a *Archiver) repairAt(path string) string {
	rs := a.repair
	if rs == nil {
		return ""
	}
	rs.mu.Lock()
	id := rs.byPath[path]
	rs.mu.Unlock()
	if a.repairing(id) == "" {
		return ""
	}
	return id
}

// holderOf is another run that holds e's session whole, from its first
// byte (not a run that continues it), read from the same path, not
// superseded ("": none): the new run of a repair a kill cut short
// before it ended e's run.
func (a *Archiver) holderOf(e *Entry) string {
	for _, c := range a.ledger.ByHead(e.Head) {
		if c.RunID == e.RunID || c.Path != e.Path || c.Parent != e.Parent || c.Offset < e.Offset || c.SupersededBy != "" || c.Parts == 0 || c.Pending ||
			c.Offset == e.Offset && c.SHA256 != e.SHA256 {
			continue
		}
		parts, by, err := runParts(filepath.Join(a.opts.Store.Root, "transcripts", c.RunID+".jsonl"))
		if err == nil && by == "" && len(parts) > 0 && parts[0].src.From == 0 {
			return c.RunID
		}
	}
	return ""
}

// endedReplaced is the damaged run a repair archives again (rs.replace)
// when it had ended before (an import's; a sync's whose file was gone
// and is back), as a list for the new run's start
// (lifecycle.SupersedesRunsField): its own end can no longer name the
// run that supersedes it, so the new run says it holds it again, and
// readers leave it out (views.Superseded), the session counted once.
// nil when the run is still open (its end names the new run: replaced).
func (a *Archiver) endedReplaced(rs *Resume) []string {
	if rs == nil || rs.replace == "" {
		return nil
	}
	if e := a.ledger.byRun(rs.replace); e != nil && e.Closed && e.SupersededBy == "" {
		return []string{rs.replace}
	}
	return nil
}

// replaced ends run old, which this sync archived again as run by, as
// superseded by it.
func (a *Archiver) replaced(ctx context.Context, old, by string) error {
	e := a.ledger.byRun(old)
	if e == nil {
		return nil
	}
	why := a.repairing(old)
	if why == "" {
		// Ended by the sync after a repair a kill cut short (Recover).
		why = "its raw capture is damaged: `twasm sync --repair` archived its session again, whole, as run " + by + ", and was killed before it ended this run"
	}
	// Its sub-agent files' runs first, superseded by the new run (each
	// is archived again as a child run of it, and then superseded by
	// that one): ended with their parent, they would read as cancelled.
	var subs []Entry
	a.ledger.each(func(c *Entry) {
		if c.Parent == old && !c.Closed && c.SupersededBy == "" {
			subs = append(subs, *c)
		}
	})
	sort.Slice(subs, func(i, j int) bool { return subs[i].RunID < subs[j].RunID })
	for _, c := range subs {
		if err := a.endReplaced(ctx, c, by, "its session's run "+old+" is archived again as run "+by+", and this sub-agent's file with it"); err != nil {
			return fmt.Errorf("end run %s, a sub-agent's run of run %s: %w", c.RunID, old, err)
		}
	}
	if err := a.endReplaced(ctx, *e, by, why); err != nil {
		return fmt.Errorf("end run %s, which run %s supersedes: %w", old, by, err)
	}
	if rs := a.repair; rs != nil {
		rs.mu.Lock()
		rs.done[old] = by
		rs.mu.Unlock()
	}
	return nil
}

// endReplaced ends e's run as cancelled, superseded by run by, which
// holds its session again, and notes it so in the ledger.
func (a *Archiver) endReplaced(ctx context.Context, e Entry, by, why string) error {
	cause := fmt.Errorf("%w: archived again as run %s: %s", context.Canceled, by, why)
	err := runctl.End(ctx, a.opts.Store, e.RunID, cause, runctl.EndOptions{CancelOpen: true, RunOptions: a.settleOptions(e), SupersededBy: by})
	if err != nil && !errors.Is(err, recorder.ErrRunFinished) {
		return fmt.Errorf("end run: %w", err)
	}
	if a.opts.Written != nil {
		a.opts.Written(e.RunID)
	}
	e.Closed, e.SupersededBy, e.Pending, e.Resume = true, by, false, nil
	return a.ledger.Put(&e)
}
