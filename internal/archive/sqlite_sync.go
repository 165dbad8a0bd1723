package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// DefaultSQLiteLimit bounds the reading of one SQLite store's database
// when Options.SQLiteLimit is zero.
const DefaultSQLiteLimit = 10 * time.Minute

// dbSessionPath is the path a session of a SQLite store goes by, in the
// ledger, the outcomes and run.started's "source": the database's path,
// "#", the session's key.
func dbSessionPath(db, key string) string { return db + "#" + key }

// isDBSession reports whether e archives a session of a SQLite store
// (its path is dbSessionPath's, its head dbSessionHead's), not a file.
func isDBSession(e *Entry) bool {
	i := strings.LastIndexByte(e.Path, '#')
	return i > 0 && e.Head == dbSessionHead(e.Provider, e.Path[i+1:])
}

// dbSessionHead is the content identity of a SQLite session: its
// provider and key.
func dbSessionHead(provider, key string) string {
	return sum([]byte("sqlite\x00" + provider + "\x00" + key))
}

// DefaultSQLiteBatch bounds, roughly, the rows read of a SQLite store's
// database in one read transaction before it ends and they are archived
// (a session's rows are never split: one larger session is read alone).
const DefaultSQLiteBatch = 64 << 20

// dbRead is what the read phase of SyncDatabase decided for one session
// listed: an outcome already known (out, when done), or rows to archive
// (input: the facts line, the related rows and the session's rows), or a
// cursor that moved with no row changed (cursorOnly).
type dbRead struct {
	out         Outcome
	done        bool
	cursorOnly  bool
	ds          dbSession
	prev        *Entry
	since       int64
	input       []byte
	first, last time.Time
}

// SyncDatabase archives what changed in every session of a SQLite
// store's database (abi.SQLiteSource), one run per session: it lists the
// sessions with their cursors in one read transaction and, for each whose
// cursor moved since the last sync, reads the rows changed at or after
// the previous cursor; the transaction then ends, and each session's
// rows are archived as one more part of its run (the plugin runs, and
// the run's files are written and synced, with no read transaction
// open: an agent's write-ahead log can be checkpointed meanwhile). Rows
// are read in batches of about DefaultSQLiteBatch bytes: when a batch
// is full, its sessions are archived and a new read transaction lists
// the sessions again for the cursors of the rest. paths are the sessions
// found (dbSessionPath); complete says the listing was whole (else no
// run of this database may be taken for deleted).
func (a *Archiver) SyncDatabase(ctx context.Context, s Session) (outs []Outcome, paths []string, complete bool) {
	loc := s.Loc
	failDB := func(err error) ([]Outcome, []string, bool) {
		return []Outcome{{Path: s.Path, Provider: loc.Provider, Action: ActionFailed, Reason: err.Error(), DryRun: a.opts.DryRun}}, nil, false
	}
	if a.own.contains(s.Path) {
		return failDB(fmt.Errorf("%s is in twasm's own storage %s: not an agent's database", s.Path, a.opts.Store.Root))
	}
	a.recoverFirst(ctx) // a part a killed sync left open is settled before the database is read
	limit := a.opts.SQLiteLimit
	if limit <= 0 {
		limit = DefaultSQLiteLimit
	}
	batch := a.opts.sqliteBatch
	if batch <= 0 {
		batch = DefaultSQLiteBatch
	}
	// open begins a read transaction and lists the sessions, under a
	// time limit of its own (cancel ends it).
	open := func() (*sqliteDB, []dbSession, context.Context, context.CancelFunc, error) {
		dctx, cancel := context.WithTimeout(ctx, limit)
		db, err := openSQLite(dctx, s.Path, loc.SQLite)
		if err != nil {
			cancel()
			return nil, nil, nil, nil, err
		}
		if hook := a.opts.sqliteAfterRead; hook != nil {
			db.afterRead = func() { hook(dctx) }
		}
		list, err := db.sessions(dctx, loc.SQLite)
		if err == nil {
			err = db.verify()
		}
		if err != nil {
			db.Close()
			cancel()
			return nil, nil, nil, nil, fmt.Errorf("%s: %w", s.Path, err)
		}
		return db, list, dctx, cancel, nil
	}
	db, list, dctx, cancel, err := open()
	if errors.Is(err, ErrDatabaseWritten) {
		return []Outcome{{Path: s.Path, Provider: loc.Provider, Action: ActionPending, Reason: err.Error() + ": read next sync", DryRun: a.opts.DryRun}}, nil, false
	}
	if err != nil {
		return failDB(err)
	}
	closeDB := func() {
		if db != nil {
			db.Close()
			cancel()
			db = nil
		}
	}
	defer closeDB()
	complete = true
	type linkOf struct {
		parent    string
		iteration int
	}
	links := make([]linkOf, len(list))
	children := map[string]int{} // parent key -> sub-agent sessions listed so far
	for i, ds := range list {
		paths = append(paths, dbSessionPath(s.Path, ds.Key))
		if ds.Parent != "" {
			links[i] = linkOf{ds.Parent, children[ds.Parent]}
			children[ds.Parent]++
		}
	}
	var related map[string][]byte
	relatedRead := len(loc.SQLite.Related) == 0
	reads := make([]dbRead, len(list))
	gone := make([]bool, len(list)) // not listed by a later batch's transaction
	pending := func(from int, why string) {
		for j := from; j < len(list); j++ {
			reads[j] = dbRead{done: true, out: Outcome{Path: dbSessionPath(s.Path, list[j].Key), Provider: loc.Provider, Action: ActionPending, DryRun: a.opts.DryRun, Reason: why}}
		}
	}
	for i := 0; i < len(list); {
		if db == nil {
			// A later batch: a new read transaction, whose listing gives
			// the cursors of the sessions left.
			var again []dbSession
			db, again, dctx, cancel, err = open()
			if err != nil {
				why := err.Error() + ": read next sync"
				if errors.Is(err, ErrDatabaseChanged) {
					why = "the database changed while it was read without locks: read again next sync"
				}
				pending(i, why)
				break
			}
			cur := map[string]int64{}
			for _, ds := range again {
				cur[ds.Key] = ds.Cursor
			}
			for j := i; j < len(list); j++ {
				c, ok := cur[list[j].Key]
				list[j].Cursor, gone[j] = c, !ok // no longer listed: pending below
			}
		}
		// The read phase: sessions' rows, up to a batch of them.
		size, stop := 0, false
		for ; i < len(list) && size < batch; i++ {
			ds := list[i]
			vp := dbSessionPath(s.Path, ds.Key)
			r := &reads[i]
			r.ds = ds
			r.out = Outcome{Path: vp, Provider: loc.Provider, DryRun: a.opts.DryRun}
			if ctx.Err() != nil {
				complete = false
				continue
			}
			if gone[i] {
				r.done, r.out.Action, r.out.Reason = true, ActionPending, "the session was no longer listed when its rows were to be read: read again next sync"
				continue
			}
			prev := a.ledger.ByPath(vp)
			fromTree := false
			if prev == nil {
				prev, fromTree = a.treeRun(loc.Provider, ds.Key)
			}
			if loc.Keyed {
				if o, ok := a.syncKeyedDB(ctx, loc.Provider, vp, ds.Key, ds.Cursor, prev); ok {
					r.done, r.out = true, o
					continue
				}
			}
			if prev != nil && !fromTree && prev.Parts > 0 && prev.Offset == ds.Cursor {
				r.done, r.out.Action, r.out.RunID, r.out.Reason = true, ActionUnchanged, prev.RunID, "unchanged since the last sync"
				continue
			}
			since := int64(0)
			switch {
			case fromTree:
				// Archived from the agent's older file tree before its
				// database held it: the run goes on from the database,
				// every row read, what the run holds filtered out.
			case prev != nil && prev.Parts > 0:
				since = prev.Offset
			case prev != nil && !prev.Closed && prev.RunID != "" && !prev.Pending:
				// A run whose first part a killed sync left unfinished,
				// settled (Recover): it goes on in the same run, from
				// the start.
			default:
				prev = nil
			}
			rows, n, first, last, err := db.rowsOf(dctx, loc.SQLite, ds.Key, since)
			why := ""
			switch {
			case errors.Is(err, ErrDatabaseChanged):
				why = "the database changed while it was read without locks: read again next sync"
			case err != nil && dctx.Err() != nil && ctx.Err() == nil:
				why = fmt.Sprintf("the time limit for reading the database (%s) was reached: read next sync", limit)
			}
			if why != "" {
				// Nothing more is read of this snapshot: the rest waits
				// for the next sync (which reads the agent's log, or goes
				// on where this one stopped).
				pending(i, why)
				stop = true
				break
			}
			if err != nil {
				r.done, r.out.Action, r.out.Reason = true, ActionFailed, err.Error()
				continue
			}
			r.prev, r.since = prev, since
			if n == 0 {
				r.out.Action, r.out.Reason = ActionUnchanged, "its cursor moved, but no row changed"
				if prev != nil {
					r.out.RunID, r.cursorOnly = prev.RunID, !a.opts.DryRun
				}
				r.done = !r.cursorOnly
				continue
			}
			r.out.Bytes = int64(len(rows))
			r.out.partAction(prev)
			if a.opts.DryRun {
				r.done = true
				continue
			}
			if first.IsZero() {
				first, last = time.Unix(0, db.before.mtime).UTC(), time.Unix(0, db.before.mtime).UTC()
			}
			if !relatedRead {
				// The related databases (Cursor's workspaces) are read
				// once a session has rows to archive; their rows about
				// it come first.
				relatedRead = true
				var problems []string
				related, problems = relatedRows(dctx, s.Path, loc.SQLite)
				for _, p := range problems {
					a.opts.Logger.Warn("archive: a related database not read", "database", s.Path, "problem", p)
				}
			}
			input := db.factsLine(loc, ds, since)
			input = append(input, related[ds.Key]...)
			r.input, r.first, r.last = append(input, rows...), first, last
			size += len(r.input)
		}
		// The read transaction ends before anything is archived.
		closeDB()
		a.writeRows(ctx, loc, list, reads[:i], func(j int) string { return links[j].parent }, func(j int) *childLink {
			l := links[j]
			if l.parent == "" {
				return nil
			}
			link := &childLink{iteration: l.iteration}
			if pe := a.ledger.ByPath(dbSessionPath(s.Path, l.parent)); pe != nil && !pe.Closed && pe.Parts > 0 {
				link.parentRunID = pe.RunID
			}
			return link
		})
		if stop {
			break
		}
	}
	for _, r := range reads {
		if r.done {
			outs = append(outs, r.out)
		}
	}
	return outs, paths, complete
}

// writeRows archives the sessions of a batch that have rows to archive
// (or only a cursor to move), on the archiver's workers: each session is
// a run of its own, as the sessions of different files are. A
// sub-agent's session is archived after its parent's, whose run it is a
// child of (link is asked once the parent's run is begun): the batch is
// written wave by wave, the sessions whose parent is not in the batch
// first, then their children, and so on. A database's sessions were
// archived one after the other before, each waiting on its fsyncs: a
// first sync of a database was a fifth to a third slower than of the same
// sessions as files.
func (a *Archiver) writeRows(ctx context.Context, loc *Location, list []dbSession, reads []dbRead, parentOf func(j int) string, link func(j int) *childLink) {
	write := func(j int) {
		r := &reads[j]
		r.done = true
		if r.cursorOnly {
			e := *r.prev
			e.Offset = r.ds.Cursor
			if err := a.ledger.Put(&e); err != nil {
				r.out.Action, r.out.Reason = ActionFailed, err.Error()
			}
			return
		}
		r.out = a.writeRowsPart(ctx, r.out, loc, r.ds, r.prev, r.since, r.input, r.first, r.last, link(j))
		r.input = nil
		if !loc.Keyed && r.prev == nil && r.out.RunID != "" && r.out.Action != ActionFailed && !a.opts.DryRun && a.keyedDBs(ctx, loc.Provider) {
			note, err := a.supersedeKeyedDB(ctx, loc.Provider, r.out.Path, r.ds.Key, r.out.RunID)
			if err != nil {
				note = "ending the session's run of another database: " + err.Error()
			}
			if note != "" {
				r.out.Reason = strings.TrimPrefix(r.out.Reason+"; "+note, "; ")
			}
		}
	}
	// The depth of each session to write: 0 unless its parent is written
	// in this batch too (a cycle, which a database should not hold, is
	// cut where it closes).
	todo := map[string]int{}
	for j := range reads {
		if r := &reads[j]; !r.done && (r.input != nil || r.cursorOnly) {
			todo[list[j].Key] = j
		}
	}
	depth := make([]int, len(reads))
	for j := range depth {
		depth[j] = -1
	}
	var depthOf func(j, guard int) int
	depthOf = func(j, guard int) int {
		if depth[j] >= 0 {
			return depth[j]
		}
		d := 0
		if p, ok := todo[parentOf(j)]; ok && p != j && guard < len(reads) {
			d = depthOf(p, guard+1) + 1
		}
		depth[j] = d
		return d
	}
	waves := [][]int{}
	for _, j := range todo {
		d := depthOf(j, 0)
		for len(waves) <= d {
			waves = append(waves, nil)
		}
		waves[d] = append(waves[d], j)
	}
	for _, wave := range waves {
		slices.Sort(wave) // the listing's order, as far as the workers keep it
		work := make(chan int)
		var wg sync.WaitGroup
		for range min(a.workers(), len(wave)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range work {
					write(j)
				}
			}()
		}
		for _, j := range wave {
			work <- j
		}
		close(work)
		wg.Wait()
	}
}

// treeRun is the open run of the session key archived from a tree store
// (the agent's older file tree) that its database now holds too.
func (a *Archiver) treeRun(provider, key string) (*Entry, bool) {
	for _, e := range a.ledger.ByHead(dbSessionHead(provider, key)) {
		if isTreeSession(&e) && !e.Closed && e.Parts > 0 {
			return &e, true
		}
	}
	return nil, false
}

// factsLine is the facts line (abi.SourceFacts) before a SQLite
// session's rows.
func (d *sqliteDB) factsLine(loc *Location, ds dbSession, since int64) []byte {
	rel, err := filepath.Rel(loc.Dir, d.path)
	if err != nil {
		rel = filepath.Base(d.path)
	}
	cur := ds.Cursor
	b, _ := json.Marshal(abi.SourceFacts{Type: abi.SourceFactsType, Store: loc.Name, Path: filepath.ToSlash(rel), Name: filepath.Base(d.path),
		Size: d.before.size, MTime: time.Unix(0, d.before.mtime).UTC().Format(time.RFC3339Nano),
		Session: ds.Key, Since: &since, Cursor: &cur, UserVersion: &d.userVersion, SchemaVersion: &d.schemaVersion, QuerySHA256: d.querySum,
		Project: loc.Project})
	return append(b, '\n')
}

// writeRowsPart archives one part of a SQLite session: the run's raw
// capture so far is replayed into the plugin (output dropped), then the
// facts line and the rows changed since are fed; since a row may come
// again as a newer version, the filter compares with what the run holds
// by the provider's ids (as for a rewritten document): what is unchanged
// is dropped, what changed is kept in its new version.
// childLink links a sub-agent session's new run to its parent session's
// open run (parentRunID "": the parent has none, the run stands alone).
type childLink struct {
	parentRunID string
	iteration   int
	// at, when set, is where the link is made instead (a folder or tree
	// session whose store names the tool call that started it,
	// abi.Store.SubAgentCall: at that call, parentLink); else it is at
	// SubagentPath, at iteration.
	at *runctl.Link
}

// link is where the child run is linked in the parent's run.
func (l *childLink) link() runctl.Link {
	if l.at != nil {
		return *l.at
	}
	return runctl.Link{ParentID: l.parentRunID, Path: SubagentPath, Iteration: l.iteration}
}

// SubagentPath is the step path, in a parent session's run, of the link
// to a sub-agent session's run.
const SubagentPath = "subagent"

func (a *Archiver) writeRowsPart(ctx context.Context, out Outcome, loc *Location, ds dbSession, prev *Entry, since int64, input []byte, first, last time.Time, link *childLink) Outcome {
	fail := func(err error) Outcome {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	provider := loc.Provider
	plugin, err := a.opts.Plugin(ctx, provider)
	if err != nil {
		return fail(err)
	}
	redactOn := a.opts.Redact || prev != nil && prev.Redact
	clk := &clock{t: first}
	log := a.opts.Logger
	var masker *redact.Redactor
	var recMask func(*transcript.Event)
	if redactOn {
		masker = redact.New()
		recMask = masker.Mask
	}
	head := dbSessionHead(provider, ds.Key)
	e := Entry{Head: head, Provider: provider, Path: out.Path, Size: -1, Redact: redactOn, Pending: true}
	var run *lifecycle.Run
	if prev == nil || prev.Closed {
		e.RunID = runid.New()
		src := SourceRef{Provider: provider, Path: e.Path, Head: head}
		if prev != nil {
			src.Continues = prev.RunID
		}
		b, _ := json.Marshal(src)
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
		var holds []Entry // ended runs of another database this one holds again
		if prev == nil && !loc.Keyed && a.keyedDBs(ctx, provider) {
			holds = endedKeyedDB(a.ledger, provider, out.Path, ds.Key)
		}
		stamp := sourceStamp{runID: e.RunID, src: b, next: recMask}
		for _, h := range holds {
			stamp.supersedes = append(stamp.supersedes, h.RunID)
		}
		ropts := lifecycle.RunOptions{
			Name: provider + " session " + ds.Key, RunID: e.RunID, Producer: a.opts.Producer, Logger: log,
			Recorder: recorder.Options{Clock: clk.now, Logger: log, Mask: stamp.Mask},
		}
		if len(holds) > 0 {
			var what []string
			for _, h := range holds {
				what = append(what, "run "+h.RunID+" of "+h.Path)
			}
			out.Reason = strings.TrimPrefix(out.Reason+"; the same session archived and ended before as "+strings.Join(what, ", ")+": this run stands for it", "; ")
		}
		if link != nil && link.parentRunID != "" && prev == nil {
			// A sub-agent session: a child run of its parent's.
			e.Parent = link.parentRunID
			if err := a.ledger.Put(&e); err != nil {
				return fail(err)
			}
			run, err = runctl.BeginChild(ctx, a.opts.Store, link.parentRunID, SubagentPath, link.iteration, ropts)
		} else {
			run, err = lifecycle.Start(ctx, a.opts.Store, ropts)
		}
		if err != nil {
			return fail(err)
		}
		e.First = first
		out.RunID = e.RunID
	} else {
		e = *prev
		e.Pending, e.Redact = true, redactOn
		if isTreeSession(prev) {
			// The session moves from the older file tree to the
			// database: its tree files are no longer read.
			e.Path, e.Files, e.Facts, e.Size, e.ModTime = out.Path, nil, nil, -1, 0
		}
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
		run, err = lifecycle.Attach(ctx, a.opts.Store, prev.RunID, lifecycle.RunOptions{Producer: a.opts.Producer, Logger: log,
			Recorder: recorder.Options{Clock: clk.now, Logger: log, Mask: recMask}})
		if err != nil {
			return fail(err)
		}
	}
	part := 0
	var prevTotals *Totals
	if prev != nil && !prev.Closed {
		part, prevTotals = prev.Parts, prev.Totals
	}
	out.Part = part
	seen := newArchived()
	seen.rewrite = true
	if prev != nil {
		if err := seen.add(a.opts.Store.Root, prev.RunID); err != nil {
			return fail(errors.Join(err, run.Detach()))
		}
	}
	var res *transcript.AgentResult
	var totals *Totals
	stepErr := run.StepAt(ctx, "agent", part, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		copts := capture.Options{Provider: provider, Store: a.opts.Store, Plugin: plugin, Logger: log, Now: clk.now, Filter: seen.filter, SubAgentFilter: seen.filterSubAgent, Replayed: seen.replayed, Supersede: seen.subs}
		if masker != nil {
			copts.Mask, copts.Masked, copts.Split = masker.MaskBytes, masker.Counts, redact.NewStream()
		}
		if prev != nil && !prev.Closed {
			copts.ContinueRaw = prev.Raw
		}
		copts.StreamBuffers = a.streams.get()
		defer a.streams.put(copts.StreamBuffers)
		agent, err := capture.Start(ctx, s, copts)
		if err != nil {
			return err
		}
		var feedErr error
		if prev != nil && prev.Raw != "" {
			// The raw capture holds what was fed (masked as it was):
			// the plugin's state after it is the one renormalize
			// reaches.
			f, err := rawfile.OpenAll(filepath.Join(a.opts.Store.Root, filepath.FromSlash(prev.Raw)))
			if err != nil {
				feedErr = err
			} else {
				feedErr = agent.Replay(ctx, f, nil)
				f.Close()
			}
		}
		if feedErr == nil {
			feedErr = agent.Feed(ctx, input)
		}
		clk.set(last)
		fin, err := agent.Finish(context.WithoutCancel(ctx), nil)
		if fin == nil {
			return errors.Join(feedErr, err)
		}
		res = fin.AgentResult
		totals = totalsOf(res)
		subtract(res, prevTotals)
		facts, _, _ := bytes.Cut(input, []byte("\n"))
		src := PartRef{Path: e.Path, From: since, To: ds.Cursor, SHA256: sum(input), Redact: redactOn, Totals: totals,
			Changed: seen.changed, Facts: json.RawMessage(facts)}
		if serr := s.SetResult(partResult{res: res, src: src}); serr != nil {
			return errors.Join(feedErr, err, serr)
		}
		if feedErr != nil || err != nil {
			return errors.Join(feedErr, err)
		}
		return capture.ResultError(res)
	})
	// A session of a database stays open: it ends when the agent deletes
	// it (CloseGone).
	var endErr error
	if ctx.Err() != nil {
		endErr = run.Finish(context.WithoutCancel(ctx), stepErr)
		e.Closed = true
	} else {
		endErr = run.Detach()
	}
	if a.opts.Written != nil {
		a.opts.Written(e.RunID)
	}
	if res == nil {
		return fail(errors.Join(stepErr, endErr))
	}
	e.Offset, e.Parts, e.Raw, e.Last, e.Status, e.Totals, e.Pending = ds.Cursor, part+1, rawPath(res), clk.now(), res.Status, totals, false
	e.SHA256 = sum(input)
	if err := a.ledger.Put(&e); err != nil {
		return fail(err)
	}
	out.Status, out.Result = res.Status, res
	for _, n := range res.Unmapped {
		out.Unmapped += n
	}
	if stepErr != nil && !errors.Is(stepErr, capture.ErrAgent) || endErr != nil {
		return fail(errors.Join(stepErr, endErr))
	}
	if n := len(seen.changed); n > 0 {
		out.Reason = fmt.Sprintf("%d earlier item(s) changed in place (%s): this part holds their new version", n, strings.Join(seen.changed[:min(n, 5)], ", "))
	}
	if out.Unmapped > 0 {
		out.Reason = strings.TrimPrefix(out.Reason+"; ", "; ") + fmt.Sprintf("%d line(s) the plugin could not map, kept in the raw capture", out.Unmapped)
	}
	if res.FailedLines > 0 {
		out.Reason = strings.TrimPrefix(out.Reason+"; ", "; ") + fmt.Sprintf("%d line(s) lost to a plugin fault", res.FailedLines)
	}
	return out
}

// ExpandDatabases replaces each SQLite database among sessions by the
// sessions it lists, read-only (what doctor counts): Path is a session's
// dbSessionPath and Size its cursor, so that a ledger entry whose Offset
// reached Size holds all of it. The stores' session counts follow; a
// database that cannot be read is a problem of its store.
func ExpandDatabases(ctx context.Context, stores []StoreReport, sessions []Session) ([]StoreReport, []Session) {
	byKey := map[string]int{}
	for i := range stores {
		byKey[stores[i].Key()] = i
	}
	var out []Session
	for _, s := range sessions {
		if s.Loc.Kind != abi.StoreKindSQLite {
			out = append(out, s)
			continue
		}
		i, ok := byKey[s.Loc.Key()]
		list, err := listDatabase(ctx, s)
		if ok {
			stores[i].Sessions += len(list) - 1
			if err != nil {
				stores[i].Problems = append(stores[i].Problems, err.Error())
			}
		}
		for _, ds := range list {
			out = append(out, Session{Loc: s.Loc, Path: dbSessionPath(s.Path, ds.Key), Size: ds.Cursor, ModTime: s.ModTime})
		}
	}
	return stores, out
}

func listDatabase(ctx context.Context, s Session) ([]dbSession, error) {
	dctx, cancel := context.WithTimeout(ctx, DefaultSQLiteLimit)
	defer cancel()
	db, err := openSQLite(dctx, s.Path, s.Loc.SQLite)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	list, err := db.sessions(dctx, s.Loc.SQLite)
	if err == nil {
		err = db.verify()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Path, err)
	}
	return list, nil
}
