package archive

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/recorder"
)

// A keyed file store (abi.StoreSessionKey: Cursor's agent transcripts)
// names each session file by the key a SQLite store of the same provider
// keeps the same session under (the IDE's composerData id). The
// database's copy states more, so it is the one archived: a sync orders
// the keyed files after every other session (keyedLast), in the chain of
// the databases (chainsOf), and a file whose key the database's run
// holds is skipped (syncKeyed).

// keyedLast moves the sessions of keyed file stores, with their
// sub-agents' files, after every other session, each in its order: a
// database's session of the same key is then archived first.
func keyedLast(sessions []Session) []Session {
	rest := make([]Session, 0, len(sessions)) // the keyed appended: no copy grown
	var keyed []Session
	for _, s := range sessions {
		if s.Loc != nil && s.Loc.Keyed {
			keyed = append(keyed, s)
		} else {
			rest = append(rest, s)
		}
	}
	return append(rest, keyed...)
}

// fileKey is the key a keyed store's session file goes by: its name
// without its extension.
func fileKey(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// keyedIn returns the entry of the SQLite session that holds the session
// of a keyed file store's file s (nil: none): by the file's key, or, for
// a sub-agent's file, by its session's; for a keyed SQLite store's
// session, another database's run of its key.
func keyedIn(l *Ledger, s Session) *Entry {
	if s.Loc == nil || !s.Loc.Keyed {
		return nil
	}
	if s.Loc.Kind == abi.StoreKindSQLite {
		// A keyed database's session, as ExpandDatabases lists it
		// (<database>#<key>): held by another database's run.
		i := strings.LastIndexByte(s.Path, '#')
		if i < 0 {
			return nil
		}
		return otherDBRun(l, s.Loc.Provider, s.Path, s.Path[i+1:])
	}
	keys := []string{fileKey(s.Path)}
	if s.Parent != "" {
		keys = append(keys, fileKey(s.Parent))
	}
	for _, k := range keys {
		for _, e := range l.ByHead(dbSessionHead(s.Loc.Provider, k)) {
			if isDBSession(&e) {
				return &e
			}
		}
	}
	return nil
}

// ArchivedElsewhere returns the path ("<database>#<key>") and run of the
// SQLite session a keyed file store's file is archived as instead of
// itself ("" when it is not).
func ArchivedElsewhere(l *Ledger, s Session) (path, runID string) {
	if e := keyedIn(l, s); e != nil {
		return e.Path, e.RunID
	}
	return "", ""
}

// syncKeyed is the outcome of a keyed file store's file whose session a
// SQLite store holds (ok false: it holds none, the file is archived as
// any). A run archived from the file before the database held the
// session is ended, superseded by the database's (lifecycle's
// SupersededByField: stats and the index leave it out, so nothing is
// counted twice); otherwise the file is skipped, and it is noted among
// the database session's other files (Entry.Also, holding none of its
// bytes) so that the next sync finds it unchanged by a stat and says
// nothing.
func (a *Archiver) syncKeyed(ctx context.Context, s Session) (Outcome, bool) {
	db := keyedIn(a.ledger, s)
	if db == nil {
		return Outcome{}, false
	}
	out := Outcome{Path: s.Path, Provider: s.Loc.Provider, DryRun: a.opts.DryRun}
	why := "the same session is archived from " + db.Path + " as run " + db.RunID + ", whose copy states more (times, usage, model)"
	e := a.ledger.ByPath(s.Path)
	if e != nil && !e.Closed && !e.Pending {
		out.Action, out.RunID, out.Reason = ActionClosed, e.RunID, "archived from this file before; "+why+": this run is ended, superseded by it"
		if a.opts.DryRun {
			return out, true
		}
		// The runs of its sub-agents' files first, each superseded too
		// (ended with their parent, they would read as cancelled).
		var subs []Entry
		a.ledger.each(func(c *Entry) {
			if c.Parent == e.RunID && !c.Closed && !c.Pending {
				subs = append(subs, *c)
			}
		})
		for _, c := range append(subs, *e) {
			if err := a.endSuperseded(ctx, c, db.RunID); err != nil {
				out.Action, out.Reason = ActionFailed, err.Error()
				return out, true
			}
		}
		if n := len(subs); n > 0 {
			out.Reason += fmt.Sprintf(", with the runs of its %d sub-agent file(s)", n)
		}
		return out, true
	}
	if e != nil {
		// A run of the file ended before: the file is not read again.
		out.Action, out.RunID, out.Reason = ActionUnchanged, e.RunID, "not archived: "+why
		if e.Size != s.Size || e.ModTime != s.ModTime.UnixNano() {
			out.Action = ActionSkipped
			if !a.opts.DryRun && !e.Pending {
				c := *e
				c.Size, c.ModTime = s.Size, s.ModTime.UnixNano()
				if err := a.ledger.Put(&c); err != nil {
					out.Action, out.Reason = ActionFailed, err.Error()
				}
			}
		}
		return out, true
	}
	out.RunID, out.Reason = db.RunID, "not archived: "+why
	i := slices.IndexFunc(db.Also, func(o Seen) bool { return o.Path == s.Path })
	if i >= 0 && db.Also[i].Size == s.Size && db.Also[i].ModTime == s.ModTime.UnixNano() {
		out.Action = ActionUnchanged
		return out, true
	}
	out.Action = ActionSkipped
	if a.opts.DryRun {
		return out, true
	}
	c := *db
	also := []Seen{{Path: s.Path, Size: s.Size, ModTime: s.ModTime.UnixNano()}}
	for _, o := range c.Also {
		if o.Path != s.Path && len(also) < maxAlso {
			also = append(also, o)
		}
	}
	c.Also = also
	if err := a.ledger.Put(&c); err != nil {
		out.Action, out.Reason = ActionFailed, err.Error()
	}
	return out, true
}

// endSuperseded ends e's run as superseded by the run by (its
// run.completed says so) and records it closed.
func (a *Archiver) endSuperseded(ctx context.Context, e Entry, by string) error {
	err := runctl.End(ctx, a.opts.Store, e.RunID, nil, runctl.EndOptions{CancelOpen: true, RunOptions: a.settleOptions(e), SupersededBy: by})
	if err != nil && !errors.Is(err, recorder.ErrRunFinished) {
		return fmt.Errorf("end run %s: %w", e.RunID, err)
	}
	if a.opts.Written != nil {
		a.opts.Written(e.RunID)
	}
	e.Closed, e.SupersededBy = true, by
	return a.ledger.Put(&e)
}

// A keyed SQLite store (abi.StoreSessionKey: an older Cursor's workspace
// databases) keeps some of its sessions under the key another database
// of the same provider keeps them under too (the global database a
// newer Cursor moved them to), whose copy is the one archived: the
// keyed databases come after every other (keyedLast), and a session
// whose key another database's run holds is not archived from the keyed
// one (syncKeyedDB); a run archived from it before is ended, superseded
// by that run, by whichever of the two syncs first sees both
// (syncKeyedDB, supersedeKeyedDB).

// otherDBRun is the entry of the run another database (not the one at
// path) holds the session key of provider in, not superseded (nil:
// none).
func otherDBRun(l *Ledger, provider, path, key string) *Entry {
	for _, e := range l.ByHead(dbSessionHead(provider, key)) {
		if e.Path != path && isDBSession(&e) && e.RunID != "" && !e.Pending && e.SupersededBy == "" {
			return &e
		}
	}
	return nil
}

// syncKeyedDB is the outcome of a keyed SQLite store's session (path its
// dbSessionPath, cursor its cursor, own its run's entry, if any) whose
// key another database's run holds (ok false: none holds it, the
// session is archived as any). Its own run, still open, is ended,
// superseded by that one; else nothing is archived: "skipped" the first
// time, then "unchanged" while its cursor stays (noted among that run's
// other sources, Entry.Also, holding none of its rows).
func (a *Archiver) syncKeyedDB(ctx context.Context, provider, path, key string, cursor int64, own *Entry) (Outcome, bool) {
	db := otherDBRun(a.ledger, provider, path, key)
	if db == nil {
		return Outcome{}, false
	}
	out := Outcome{Path: path, Provider: provider, DryRun: a.opts.DryRun}
	why := "the same session is archived from " + db.Path + " as run " + db.RunID
	i := slices.IndexFunc(db.Also, func(o Seen) bool { return o.Path == path })
	switch {
	case own != nil && !own.Closed && !own.Pending && own.RunID != "":
		out.Action, out.RunID, out.Reason = ActionClosed, own.RunID, "archived from this database before; "+why+": this run is ended, superseded by it"
		if a.opts.DryRun {
			return out, true
		}
		if err := a.endSuperseded(ctx, *own, db.RunID); err != nil {
			out.Action, out.Reason = ActionFailed, err.Error()
			return out, true
		}
	case i >= 0 && db.Also[i].Size == cursor:
		out.Action, out.RunID, out.Reason = ActionUnchanged, db.RunID, "not archived: "+why
		return out, true
	default:
		out.Action, out.RunID, out.Reason = ActionSkipped, db.RunID, "not archived: "+why
		if a.opts.DryRun {
			return out, true
		}
	}
	c := *db
	also := []Seen{{Path: path, Size: cursor}}
	for _, o := range c.Also {
		if o.Path != path && len(also) < maxAlso {
			also = append(also, o)
		}
	}
	c.Also = also
	if err := a.ledger.Put(&c); err != nil {
		out.Action, out.Reason = ActionFailed, err.Error()
	}
	return out, true
}

// keyedDBs reports whether provider's plugin declares a keyed SQLite
// store (whose sessions another of its databases may hold too).
func (a *Archiver) keyedDBs(ctx context.Context, provider string) bool {
	if a.opts.Declared == nil {
		return false
	}
	return slices.ContainsFunc(a.opts.Declared(ctx, provider), func(d Declared) bool {
		return d.Provider == provider && d.Session == abi.StoreSessionKey && d.Kind == abi.StoreKindSQLite
	})
}

// endedKeyedDB returns the runs other databases (not the one at path)
// archived the session key of provider in and ended, not superseded: a
// new run of a store that is not keyed holds them again, and its start
// says so (lifecycle.SupersedesRunsField), since their own end cannot
// any more (an older Cursor's workspace composer imported, or its run
// closed when the workspace stopped listing it, before the global
// database held it). Readers then count the session once, as this run.
func endedKeyedDB(l *Ledger, provider, path, key string) []Entry {
	var out []Entry
	for _, e := range l.ByHead(dbSessionHead(provider, key)) {
		if e.Path != path && isDBSession(&e) && e.Closed && !e.Pending && e.RunID != "" && e.SupersededBy == "" {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(x, y Entry) int { return strings.Compare(x.RunID, y.RunID) })
	return out
}

// supersedeKeyedDB ends the runs other databases archived the session
// key of provider in, still open, superseded by run (a new run of a
// store that is not keyed, archived from path), and says which: a keyed
// database that no longer lists the session (a Cursor that moved it to
// its global database) would otherwise keep it twice.
func (a *Archiver) supersedeKeyedDB(ctx context.Context, provider, path, key, run string) (string, error) {
	var ended []string
	for _, e := range a.ledger.ByHead(dbSessionHead(provider, key)) {
		if e.Path == path || !isDBSession(&e) || e.Closed || e.Pending || e.RunID == "" || e.RunID == run {
			continue
		}
		if err := a.endSuperseded(ctx, e, run); err != nil {
			return "", err
		}
		ended = append(ended, "run "+e.RunID+" of "+e.Path)
	}
	if len(ended) == 0 {
		return "", nil
	}
	return "the same session archived before as " + strings.Join(ended, ", ") + ": ended, superseded by this run", nil
}
