package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// ActionSettled is the outcome of an interrupted archive that was settled
// with nothing more to archive: what the killed part left open is closed
// as cancelled (and the run ended, when it held no part and its session
// could not be read again).
const ActionSettled = "settled"

// ErrInterrupted is wrapped when a session's run holds an interrupted
// archive that could not be settled: nothing is added to it until it is.
var ErrInterrupted = errors.New("interrupted archive not settled")

// Recover settles the archives a killed sync or import left unfinished
// (found when the ledger was opened, [Ledger.Interrupted]), under the
// archive lock the caller holds, and returns what it did, one Outcome per
// run. Each is settled once: the steps and sub-runs the killed part left
// open are closed as cancelled, saying so; the run's raw capture is cut
// back to what its last completed part holds; and the session is
// continued from there as the killed command would have (read whole or
// up to its last complete line, the run ended after the part or left
// open), in the same run, the new part leaving out what the cancelled
// step holds. A run that holds no completed part and whose session
// cannot be continued is ended as cancelled. Then the ended runs whose
// raw capture's seal a kill cut short (or a cancelled sync skipped) are
// sealed ([Ledger.Unsealed], sealLeft). Every Sync call settles them
// first; Recover lets the caller report them. A dry run settles
// nothing.
func (a *Archiver) Recover(ctx context.Context) []Outcome {
	if a.recovered || a.opts.DryRun {
		return nil
	}
	a.recovered = true
	var outs []Outcome
	its := a.ledger.Interrupted()
	// The runs an import held open for their sub-agents' files last:
	// a sub-agent's part the kill cut short is continued first (its
	// child run ended as its part would have, its link completed), and
	// ending the session's run would close it as cancelled.
	slices.SortStableFunc(its, func(x, y Interrupted) int {
		return cmp.Compare(b2i(x.Resume != nil && x.Resume.Held), b2i(y.Resume != nil && y.Resume.Held))
	})
	for _, it := range its {
		o := a.recoverRun(ctx, it)
		if old := it.Supersedes; old != "" {
			// A sub-agent's run begun to archive another again: once
			// its first part is written (continued here), the other is
			// ended, superseded by it. A run that holds none (its
			// session went on in the other, above) supersedes nothing.
			if cur := a.ledger.byRun(it.Entry.RunID); cur != nil && cur.Parts > 0 && cur.SupersededBy == "" {
				if err := a.supersede(ctx, cur.RunID, old, it.Repair); err != nil {
					o.Action, o.Reason = ActionFailed, joinReason(o.Reason, err.Error())
				} else {
					o.Reason = joinReason(o.Reason, "run "+old+", which it archives again, is ended, superseded by it")
				}
			} else if cur != nil && cur.Parts == 0 {
				o = a.relinkCut(ctx, o, cur, old)
			}
		}
		outs = append(outs, o)
	}
	// The runs whose first part was written and the run it archives
	// again not ended (killed between the two): ended now.
	for _, e := range a.ledger.Superseding() {
		o := Outcome{Action: ActionSettled, Path: e.Path, Provider: e.Provider, RunID: e.RunID,
			Reason: "run " + e.RunID + " archived again what run " + e.Resume.Supersedes + " holds, and a sync or import was killed before it ended that run: ended now, superseded by it"}
		if e.Resume.Repair {
			o.Reason = "run " + e.RunID + " archived again, whole, the session of run " + e.Resume.Supersedes + ", whose raw capture is damaged (sync --repair), and a sync was killed before it ended that run: ended now, superseded by it (its sub-agent files' runs with it, those files archived again as child runs of run " + e.RunID + ")"
		}
		if err := a.supersede(ctx, e.RunID, e.Resume.Supersedes, e.Resume.Repair); err != nil {
			o.Action, o.Reason = ActionFailed, fmt.Sprintf("run %s: %v", e.RunID, err)
		}
		outs = append(outs, o)
	}
	for _, e := range a.ledger.Unsealed() {
		if o, ok := a.sealLeft(ctx, e); ok {
			outs = append(outs, o)
		}
	}
	return outs
}

// sealLeft seals the raw capture of an ended run that its end marked to
// be sealed (Entry.Seal) and that was not: a kill cut the seal short,
// perhaps leaving a partial copy beside the capture (removed, never
// taken: the capture is whole, and sealed again from it), or the sync
// was cancelled first. ok is false when the sync is being cancelled
// (the mark stays).
func (a *Archiver) sealLeft(ctx context.Context, e Entry) (o Outcome, ok bool) {
	what := "its raw capture " + e.Raw + " was not sealed when the run ended (the sync or import was stopped first)"
	if p, err := a.rawCapture(e.RunID, e.Raw); err == nil {
		if _, err := os.Lstat(p + rawfile.SealExt); err == nil {
			what = "the sealing of its raw capture " + e.Raw + " was cut short (a sync or import was killed): the partial copy left beside it was removed"
		}
	}
	tried, err := a.seal(ctx, &e)
	if !tried {
		return Outcome{}, false
	}
	o = Outcome{Action: ActionSettled, Path: e.Path, Provider: e.Provider, RunID: e.RunID}
	if err != nil {
		o.Reason = fmt.Sprintf("run %s: %s; the capture could not be sealed (%v): left whole as it is", e.RunID, what, err)
	} else {
		o.Reason = "run " + e.RunID + ": " + what + "; the capture sealed from itself"
	}
	return o, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// recoverFirst settles the interrupted archives before anything else is
// archived, for a caller that did not call Recover: the outcomes are
// logged.
func (a *Archiver) recoverFirst(ctx context.Context) {
	if a.recovered || a.opts.DryRun {
		return
	}
	for _, o := range a.Recover(ctx) {
		a.opts.Logger.Warn("archive: settled an interrupted archive", "run_id", o.RunID, "path", o.Path, "action", o.Action, "reason", o.Reason)
	}
}

func (a *Archiver) recoverRun(ctx context.Context, it Interrupted) Outcome {
	e := it.Entry
	out := Outcome{Path: e.Path, Provider: e.Provider, RunID: e.RunID}
	fail := func(err error) Outcome {
		out.Action, out.Reason = ActionFailed, fmt.Sprintf("run %s: %v: %v", e.RunID, ErrInterrupted, err)
		return out
	}
	var cancelled []string
	var err error
	if !it.Unbegun {
		if cancelled, err = a.closeOpen(ctx, it); err != nil {
			return fail(err)
		}
	}
	var notes []string
	what := "its archive was interrupted (a sync or import was killed before the part it was writing completed)"
	if it.Unbegun {
		what = "its archive was interrupted (a sync or import was killed after its parent run " + e.Parent + " linked it and before its transcript was begun): begun under that link by the part that continues it"
	} else if len(cancelled) > 0 {
		what = fmt.Sprintf("its archive was interrupted (a sync or import was killed while it wrote %s): closed as cancelled", strings.Join(cancelled, ", "))
	}
	notes = append(notes, what)
	cut, err := a.cutRaw(it)
	if err != nil {
		return fail(err)
	}
	if cut != "" {
		notes = append(notes, cut)
	}
	held := it.Resume != nil && it.Resume.Held
	if !it.Unbegun {
		// (An unbegun run's entry stays pending until its run is begun:
		// a kill before then finds it unbegun again.)
		e.Pending, e.Resume = false, nil
		if held {
			// Still to end after its sub-agents' files: noted until it
			// is, should this process die first.
			e.Resume = it.Resume
		}
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
	}
	a.ledger.settled(e.RunID)
	if a.opts.Written != nil && len(cancelled) > 0 {
		a.opts.Written(e.RunID)
	}
	if isDBSession(&e) || isTreeSession(&e) || statDir(e.Path) {
		// A session of a SQLite store, a session folder or tree: the ledger
		// entry holds where its last completed part left it (the cursor,
		// what the run holds of each file), and the next read of the
		// database or the folder continues the run from there (from the
		// start when it has no part), what changed since filtered
		// against what the run holds.
		// The entry's size and mtime are those the killed part saw:
		// forgotten, so that the next sync does not take the folder for
		// unchanged.
		e.Size, e.ModTime = -1, 0
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
		notes = append(notes, "the next read of its database or folder continues it from its last completed part")
		out.Action, out.Reason = ActionSettled, "run "+e.RunID+": "+strings.Join(notes, "; ")
		return out
	}

	// Continue the session as the killed command would have.
	b := *a
	rs := it.Resume
	if rs == nil {
		rs = &Resume{Whole: a.opts.Whole, End: a.opts.CloseIdle == 0}
	}
	b.opts.Whole = rs.Whole
	b.opts.CloseIdle, b.opts.CloseWrittenOnly = -1, false
	if rs.End {
		b.opts.CloseIdle, b.opts.CloseWrittenOnly = 0, true
	}
	if held {
		// A part of a session that grew since is held as the import
		// held it, so that its sub-agents' files are linked before the
		// run ends (below).
		b.held = &heldRuns{paths: map[string]*heldRun{filepath.Clean(e.Path): nil}}
	}
	var loc *Location
	if rs.Facts {
		loc = &Location{Provider: e.Provider, Name: rs.Store, Dir: rs.Dir, Kind: "file", SourceFacts: true, Project: rs.Project}
	}
	if rs.SessionStart != "" {
		loc = &Location{Provider: e.Provider, Name: rs.Store, Dir: rs.Dir, Kind: KindSections, SessionStart: rs.SessionStart, SourceFacts: rs.Facts, Project: rs.Project}
	}
	o := Outcome{Action: ActionSettled}
	if file, _, ok := sectionOf(e.Path); ok && rs.SessionStart != "" {
		if _, serr := os.Lstat(file); serr == nil {
			o = b.syncSection(ctx, e.Provider, e.Path, rs.SessionStart, loc)
		} else {
			notes = append(notes, "its session file "+file+" is gone")
		}
	} else if _, serr := os.Lstat(e.Path); serr == nil {
		o = b.syncFile(ctx, e.Provider, rs.Format, e.Path, loc, "", nil)
	} else {
		notes = append(notes, "its session file "+e.Path+" is gone")
	}
	cur := a.ledger.byRun(e.RunID)
	switch {
	case cur == nil:
		return fail(errors.New("the ledger lost the run"))
	case cur.Parts == 0 && !cur.Closed && o.Action == ActionFailed:
		// Not continued for now (a plugin that failed to load, a read
		// error): its steps are closed, and the next sync or import
		// continues it in the same run, as the match by head at offset 0
		// finds it.
		notes = append(notes, "not continued: "+o.Reason+"; the next sync or import continues it")
		out.Action, out.Reason = ActionFailed, "run "+e.RunID+": "+strings.Join(notes, "; ")
		return out
	case cur.Parts == 0 && !cur.Closed:
		// Nothing archived in it and the session not continued (gone,
		// rewritten, no complete line, failed): it is ended, holding
		// nothing, and the session is archived afresh when seen again.
		why := "nothing of the session was archived in it and it could not be continued"
		switch {
		case o.RunID != "" && o.RunID != e.RunID:
			why += ": the session is archived in run " + o.RunID
		case o.Reason != "":
			why += " (" + o.Action + ": " + o.Reason + ")"
		}
		by := ""
		if o.RunID != "" && o.RunID != e.RunID {
			by = o.RunID
		}
		if a.ledger.isUnbegun(cur.RunID) {
			// Its parent links it: begun, so as to end it there.
			rs := cur.Resume
			if rs == nil {
				rs = &Resume{}
			}
			ropts := a.settleOptions(*cur)
			run, err := a.beginUnbegun(ctx, cur, cur.Head, rs, ropts.Recorder.Clock, nil)
			if err != nil {
				return fail(err)
			}
			if err := run.Detach(); err != nil {
				return fail(err)
			}
		}
		if err := b.endCancelled(ctx, cur, why, by); err != nil {
			return fail(err)
		}
		notes = append(notes, "ended as cancelled: "+why)
		if o.RunID != "" && o.RunID != e.RunID {
			// The session went to another run: report both.
			out.Reason = strings.Join(notes, "; ")
			out.Action = ActionClosed
			a.opts.Logger.Info("archive: settled", "run_id", e.RunID, "continued_in", o.RunID)
			return out
		}
		out.Action, out.Reason = ActionClosed, strings.Join(notes, "; ")
		return out
	case rs.End && !cur.Closed:
		if held {
			// The import held it open for the session's sub-agents'
			// files: those on disk are linked into it first, as the
			// import was doing (those it archived are unchanged). One
			// that fails leaves the run held, for the next sync or
			// import.
			linked, err := b.linkSubAgents(ctx, cur)
			if err != nil {
				return fail(err)
			}
			notes = append(notes, fmt.Sprintf("an import held it open for its sub-agents' files: %d more linked into it", linked))
			if cur = a.ledger.byRun(e.RunID); cur == nil {
				return fail(errors.New("the ledger lost the run"))
			}
		}
		c := *cur
		co := b.closeRun(ctx, Outcome{Path: e.Path, Provider: e.Provider}, &c, "the import was to end it")
		if co.Action == ActionFailed {
			return fail(errors.New(co.Reason))
		}
		notes = append(notes, "ended as the import that was killed would have")
	}
	if e.Parts == 0 && o.RunID == e.RunID && o.Action == ActionGrown {
		o.Action = ActionNew // its first part: what a sync never killed says
		a.dropUnreferencedRaw(e.RunID, a.ledger.byRun(e.RunID).Raw)
	}
	if o.Action == ActionUnchanged || o.Action == ActionPending || o.Action == "" {
		o.Action = ActionSettled
	}
	o.Path, o.Provider, o.RunID = e.Path, e.Provider, e.RunID
	note := "run " + e.RunID + ": " + strings.Join(notes, "; ")
	if o.Action == ActionNew || o.Action == ActionGrown {
		note += "; this part archives the session from byte " + fmt.Sprint(e.Offset) + " again, leaving out what the cancelled step holds"
	}
	if o.Reason == "" || o.Reason == "nothing new" || strings.HasPrefix(o.Reason, "unchanged") {
		o.Reason = note
	} else {
		o.Reason = note + "; " + o.Reason
	}
	return o
}

// relinkCut settles run cur, begun to archive again what run old holds
// (Resume.Supersedes) and interrupted before its first part: holding
// nothing, it is ended as cancelled (a session file's run is already,
// its session found in old), superseded by old, which holds the
// session still. The link is made again as it was to be: a sub-agent
// file's by the sync's look at it (legacyOf, looseOf), a named
// sub-task's by this sync's linkNamed, which looks at cur's parent's run
// again (namedParts.again).
func (a *Archiver) relinkCut(ctx context.Context, o Outcome, cur *Entry, old string) Outcome {
	if !cur.Closed {
		why := "its first part was interrupted, and run " + old + " holds the session until it is archived again"
		if err := a.endCancelled(ctx, cur, why, old); err != nil {
			o.Action, o.Reason = ActionFailed, joinReason(o.Reason, err.Error())
			return o
		}
		o.Action, o.Reason = ActionClosed, joinReason(o.Reason, "ended as cancelled: "+why)
	}
	if cur.Parent != "" && a.named != nil {
		a.named.mu.Lock()
		a.named.again = append(a.named.again, cur.Parent)
		a.named.mu.Unlock()
	}
	return o
}

// linkSubAgents archives the sub-agents' files of the session whose
// run e an import held open (Resume.Held) that are on disk
// (SubAgentFiles, through Options.Declared), each as a child run of it,
// and returns how many it archived anew. A file archived already is
// unchanged; one that fails is an error naming it.
func (a *Archiver) linkSubAgents(ctx context.Context, e *Entry) (int, error) {
	if a.opts.Declared == nil {
		return 0, nil
	}
	n := 0
	var errs []error
	for _, s := range SubAgentFiles(a.opts.Declared(ctx, e.Provider), e.Provider, e.Path, nil) {
		s.Parent = e.Path // as the ledger knows it
		o := a.SyncSession(ctx, s)
		switch o.Action {
		case ActionFailed:
			errs = append(errs, fmt.Errorf("sub-agent file %s: %s", s.Path, o.Reason))
		case ActionNew, ActionGrown, ActionContinued:
			n++
		}
	}
	return n, errors.Join(errs...)
}

// closeOpen closes what the killed part left open in the run, as
// cancelled, innermost first: its sub-runs (ended, with their own open
// steps) and its steps. It names what it closed.
func (a *Archiver) closeOpen(ctx context.Context, it Interrupted) ([]string, error) {
	e := it.Entry
	ropts := a.settleOptions(e)
	r, err := lifecycle.Attach(ctx, a.opts.Store, e.RunID, ropts)
	if errors.Is(err, recorder.ErrRunFinished) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var subs []string
	for _, b := range r.Recorder().State().Open {
		if b.Type == transcript.StepCallWorkflowStarted && runid.Valid(b.ChildRunID) == nil {
			if c := a.ledger.byRun(b.ChildRunID); c != nil && c.Parent == e.RunID {
				continue // a sub-agent file's run, archived on its own: not the killed part's
			}
			subs = append(subs, b.ChildRunID)
		}
	}
	var closed []string
	if len(subs) > 0 {
		if err := r.Detach(); err != nil {
			return nil, err
		}
		for _, id := range subs {
			cause := fmt.Errorf("%w: the archive of its parent run %s was interrupted", context.Canceled, e.RunID)
			err := runctl.End(ctx, a.opts.Store, id, cause, runctl.EndOptions{CancelOpen: true, RunOptions: ropts})
			if err != nil && !errors.Is(err, recorder.ErrRunFinished) && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("end sub-run %s: %w", id, err)
			}
			closed = append(closed, "sub-run "+id)
		}
		if r, err = lifecycle.Attach(ctx, a.opts.Store, e.RunID, ropts); err != nil {
			if errors.Is(err, recorder.ErrRunFinished) {
				return closed, nil
			}
			return nil, err
		}
	}
	text := fmt.Sprintf("interrupted: the twasm sync or import that wrote this step was killed before it completed; settled by twasm (pid %d), which archives the session's bytes from offset %d again in the next step, leaving out what this one holds", os.Getpid(), e.Offset)
	err = r.Recorder().RecordFunc(context.WithoutCancel(ctx), func(st runstate.State) ([]*transcript.Event, error) {
		if st.Finished {
			return nil, nil
		}
		var evs []*transcript.Event
		for i := len(st.Open) - 1; i >= 0; i-- {
			b := st.Open[i]
			if b.Type == transcript.StepCallWorkflowStarted {
				if c := a.ledger.byRun(b.ChildRunID); c != nil && c.Parent == e.RunID {
					continue
				}
			}
			ev := b.Completion(transcript.StatusCancelled, text)
			ev.ParentRunID = st.ParentRunID
			evs = append(evs, ev)
			if b.Type == transcript.StepStarted {
				closed = append(closed, fmt.Sprintf("step %s#%d (seq %d)", b.Path, b.Iteration, b.Seq))
			}
		}
		return evs, nil
	})
	return closed, errors.Join(err, r.Detach())
}

// settleOptions dates what settling writes at the run's last event: the
// run carries the session's times.
func (a *Archiver) settleOptions(e Entry) lifecycle.RunOptions {
	last := e.Last
	if last.IsZero() {
		last = e.First
	}
	if last.IsZero() {
		last = a.opts.Now().UTC()
	}
	return lifecycle.RunOptions{Producer: a.opts.Producer, Logger: a.opts.Logger,
		Recorder: recorder.Options{Clock: func() time.Time { return last }, Logger: a.opts.Logger}}
}

// endCancelled ends a run that holds no part of its session, as
// cancelled, and records it closed. by, when set, is the run that holds
// the session: the run's end says it is superseded by it, so that the
// index leaves out what it holds (a part of the session, which by holds
// whole).
func (a *Archiver) endCancelled(ctx context.Context, e *Entry, why, by string) error {
	cause := fmt.Errorf("%w: archive interrupted: %s", context.Canceled, why)
	err := runctl.End(ctx, a.opts.Store, e.RunID, cause, runctl.EndOptions{CancelOpen: true, RunOptions: a.settleOptions(*e), SupersededBy: by})
	if err != nil && !errors.Is(err, recorder.ErrRunFinished) {
		return fmt.Errorf("end run: %w", err)
	}
	if a.opts.Written != nil {
		a.opts.Written(e.RunID)
	}
	c := *e
	c.Closed, c.Pending, c.Resume = true, false, nil
	if by != "" {
		c.SupersededBy = by
	}
	return a.ledger.Put(&c)
}

// rawCapture resolves a raw capture path of run runID ("raw/<run>/<name>")
// under the storage root; anything else is refused.
func (a *Archiver) rawCapture(runID, rel string) (string, error) {
	return rawOf(a.opts.Store.Root, runID, rel)
}

// cutRaw cuts the run's raw capture, which the killed part was
// extending, back to what its last completed part holds (its size and
// sha256 are in that part's result), so that the next part extends it
// from there: a raw capture holds every byte of its session once.
func (a *Archiver) cutRaw(it Interrupted) (string, error) {
	e := it.Entry
	if e.Parts == 0 || e.Raw == "" || it.RawSHA256 == "" {
		return "", nil
	}
	p, err := a.rawCapture(e.RunID, e.Raw)
	if err != nil {
		return "", err
	}
	before, cut, err := rawfile.Cut(p, it.RawBytes, it.RawSHA256)
	if err != nil {
		return "", fmt.Errorf("raw capture %s: %w: left as it is", e.Raw, err)
	}
	if !cut {
		return "", nil
	}
	if before == it.RawBytes {
		return fmt.Sprintf("its raw capture %s, which ended in a frame cut short, was cut back to the %d bytes its last completed part holds", e.Raw, it.RawBytes), nil
	}
	return fmt.Sprintf("its raw capture %s was cut back from %d to the %d bytes its last completed part holds", e.Raw, before, it.RawBytes), nil
}

// dropUnreferencedRaw removes the raw captures of a run that held no
// part when it was settled, once its first part is written: the killed
// parts' captures, which no step refers to (keep is the one that does).
func (a *Archiver) dropUnreferencedRaw(runID, keep string) {
	dir := filepath.Join(a.opts.Store.Root, "raw", runID)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, d := range ents {
		rel := filepath.ToSlash(filepath.Join("raw", runID, d.Name()))
		if rel == keep || !d.Type().IsRegular() || !strings.HasSuffix(strings.TrimSuffix(d.Name(), rawfile.Ext), ".raw") {
			continue
		}
		if err := os.Remove(filepath.Join(dir, d.Name())); err != nil {
			a.opts.Logger.Warn("archive: remove the raw capture of an interrupted part", "path", rel, "err", err)
		}
	}
}
