package index

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/twasm/twasm/internal/journal"
	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// maxDocText bounds the text indexed per document (a huge tool output is
// indexed by its first MiB; the transcript keeps all of it).
const maxDocText = 1 << 20

// maxLine bounds a transcript line read for indexing; a longer one is
// skipped (and counted).
const maxLine = 64 << 20

// Stats say what an Update did.
type Stats struct {
	Runs      int `json:"runs"`      // transcripts in storage
	Indexed   int `json:"indexed"`   // read (new, grown)
	Reindexed int `json:"reindexed"` // changed behind the index's back: read again from the start
	Removed   int `json:"removed"`   // transcripts gone
	Docs      int `json:"docs"`      // documents added
	Skipped   int `json:"skipped"`   // lines that could not be read
	Checked   int `json:"checked"`   // transcripts looked at
}

type fileRow struct {
	rid                  int64 // the run's number (runs.rid)
	size, mtime, indexed int64
	lastSeq              uint64
}

// Update brings the index up to date with the transcripts, learning what
// changed from the storage's change journal (internal/journal) rather
// than checking every file: the runs whose writers the journal names
// since the index last read it, the runs still being written (an open
// entry without its close: checked every time until it comes), and,
// when the transcripts directory's mtime moved, the files added or
// removed (a listing, no stat). A journal that does not continue where
// the index stopped (missing, truncated, rewritten, a line that does not
// parse) or an index that never read it makes Update check every file,
// as Check does. A file to check whose size and mtime are what the index
// saw is skipped; a grown file is read from where the index stopped,
// after checking that the line there still holds the seq it indexed;
// any other change (a file rewritten, shrunk or replaced) is indexed
// again from the start. Only complete lines are indexed.
func (ix *Index) Update(ctx context.Context) (Stats, error) { return ix.update(ctx, false) }

// Check is Update that checks every transcript against the index by
// size and mtime, whatever the journal says: after something other than
// twasm wrote to the storage (`twasm index --check`).
func (ix *Index) Check(ctx context.Context) (Stats, error) { return ix.update(ctx, true) }

// compactBytes is the journal size past which an update that read all of
// it replaces it with an empty one.
const compactBytes = 1 << 20

// racyDir is how recent a directory mtime may be and still be trusted to
// say that nothing was added since: file systems stamp times at a coarse
// tick, so an entry added in the same tick as the mtime read would leave
// it as it was (git's racy-clean problem). A more recent mtime is not
// kept, and the next update lists the directory again.
const racyDir = 2 * time.Second

// listNonce prefixes the watch entry of a run found new in a listing
// with no journal entry (a journal nonce is hex).
const listNonce = "list:"

func (ix *Index) update(ctx context.Context, full bool) (Stats, error) {
	var st Stats
	dir := filepath.Join(ix.root, "transcripts")
	pos, dirMtime, ok, err := ix.position(ctx)
	if err != nil {
		return st, err
	}
	// The journal first, then the files: a write not seen in the files
	// has its journal entry at or after the end read here. Of each entry
	// only what is applied is kept: its run, to check, and the watch
	// list's change, as the last entry of its writer (nonce) leaves it.
	runs := runSet{}
	var entries int
	opens := map[string]string{} // the writers opened and not closed: nonce -> run id
	var closes []string          // the writers closed that opened before pos
	end, cont, jerr := journal.Each(dir, pos, func(e journal.Entry) {
		entries++
		runs.add(e.RunID, runCheck|runNamed)
		if e.Kind == journal.Close {
			if _, ok := opens[e.Nonce]; ok {
				delete(opens, e.Nonce)
			} else {
				closes = append(closes, strings.Clone(e.Nonce))
			}
		} else {
			opens[strings.Clone(e.Nonce)] = strings.Clone(e.RunID)
		}
	})
	if jerr != nil || !cont || !ok {
		full = true
	}
	var dirInfo os.FileInfo
	if di, err := os.Stat(dir); err == nil {
		dirInfo = di
	} else if !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("index: %w", err)
	}
	newMtime := int64(0)
	if dirInfo != nil && time.Since(dirInfo.ModTime()) > racyDir {
		newMtime = dirInfo.ModTime().UnixNano()
	}
	list := full || dirInfo == nil || dirMtime == 0 || dirInfo.ModTime().UnixNano() != dirMtime
	b := &batch{ix: ix}
	defer b.rollback()
	// The runs to check: those the journal names, those still being
	// written, and (listing) the files added or removed.
	var unjournaled [][16]byte // new in the listing, not named by the journal
	watched, err := ix.watched(ctx)
	if err != nil {
		return st, err
	}
	for _, id := range watched {
		runs.add(id, runCheck)
	}
	if list {
		known, err := ix.knownRuns(ctx)
		if err != nil {
			return st, err
		}
		listed := make([]bool, len(known.ids))
		err = listRuns(dir, func(id string) {
			st.Runs++
			k, isID := runid.Key(id)
			seen := false
			if i, found := slices.BinarySearchFunc(known.ids, k, compareKeys); isID && found {
				seen, listed[i] = true, true
			} else if !isID && known.other[id] {
				seen = true
				known.other[id] = false // listed
			}
			if full || !seen {
				runs.add(id, runCheck)
				if !full && !seen && isID && runs[k]&runNamed == 0 {
					unjournaled = append(unjournaled, k)
				}
			}
		})
		if err != nil {
			return st, err
		}
		var gone []string
		for i, k := range known.ids {
			if !listed[i] {
				gone = append(gone, runid.FromKey(k))
			}
		}
		for id, notListed := range known.other {
			if notListed {
				gone = append(gone, id)
			}
		}
		for _, id := range gone {
			if err := b.begin(ctx); err != nil {
				return st, err
			}
			if err := b.touchHeld(ctx, id, true); err != nil {
				return st, err
			}
			if err := b.remove(ctx, id); err != nil {
				return st, err
			}
			if k, isID := runid.Key(id); isID {
				runs[k] &^= runCheck
			}
			st.Removed++
		}
	}
	ids := runs.sorted(runCheck)
	sctx := context.WithoutCancel(ctx) // ctx is checked before each file and line instead (writer.read)
	for _, k := range ids {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		id := runid.FromKey(k)
		row, err := b.file(sctx, id)
		if err != nil {
			return st, err
		}
		if err := ix.updateFile(ctx, b, filepath.Join(dir, id+".jsonl"), id, row, &st); err != nil {
			return st, err
		}
	}
	st.Checked = len(ids)
	// The watch list and the position, with the last files' transaction.
	if entries > 0 || end != pos || newMtime != dirMtime || !ok || len(unjournaled) > 0 || len(watched) > 0 {
		if err := b.begin(ctx); err != nil {
			return st, err
		}
		exec := func(q string, args ...any) error {
			if _, err := b.tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("index: %w", err)
			}
			return nil
		}
		// Each writer's entry as the journal leaves it: closed, or
		// open; a run the journal names is no longer watched as found
		// in a listing.
		for _, nonce := range closes {
			if err := exec(`DELETE FROM watch WHERE nonce = ?`, nonce); err != nil {
				return st, err
			}
		}
		for nonce, id := range opens {
			if err := exec(`INSERT OR REPLACE INTO watch(nonce, run_id) VALUES(?, ?)`, nonce, id); err != nil {
				return st, err
			}
		}
		for _, k := range runs.sorted(runNamed) {
			if err := exec(`DELETE FROM watch WHERE nonce = ?`, listNonce+runid.FromKey(k)); err != nil {
				return st, err
			}
		}
		if full {
			// Every file was checked: a run found new in an earlier
			// listing needs no watching for that (a rebuild watched
			// every session otherwise).
			if err := exec(`DELETE FROM watch WHERE nonce >= ? AND nonce < ?`, listNonce, listNonce+"\xff"); err != nil {
				return st, err
			}
		}
		for _, k := range unjournaled {
			id := runid.FromKey(k)
			if err := exec(`INSERT OR REPLACE INTO watch(nonce, run_id) VALUES(?, ?)`, listNonce+id, id); err != nil {
				return st, err
			}
		}
		if err := exec(`DELETE FROM watch WHERE nonce >= ? AND nonce < ? AND run_id IN (SELECT run_id FROM runs WHERE final != '')`, listNonce, listNonce+"\xff"); err != nil {
			return st, err
		}
		if err := setPosition(ctx, b.tx, end, newMtime); err != nil {
			return st, err
		}
	}
	if err := b.commit(); err != nil {
		return st, err
	}
	if end.Off > compactBytes {
		_, err := journal.Compact(dir, end, func() error {
			_, err := ix.db.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES('journal_off', '0'), ('journal_tail', '')`)
			return err
		})
		if err != nil {
			return st, fmt.Errorf("index: %w", err)
		}
	}
	return st, nil
}

// position is where the index stopped reading the journal and the
// transcripts directory's mtime it last listed (0: list it); ok is false
// when the index never read the journal.
func (ix *Index) position(ctx context.Context) (pos journal.Pos, dirMtime int64, ok bool, err error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('journal_off', 'journal_tail', 'dir_mtime')`)
	if err != nil {
		return pos, 0, false, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return pos, 0, false, fmt.Errorf("index: %w", err)
		}
		switch k {
		case "journal_off":
			pos.Off, _ = strconv.ParseInt(v, 10, 64)
			ok = true
		case "journal_tail":
			pos.Tail = v
		case "dir_mtime":
			dirMtime, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return pos, dirMtime, ok, rows.Err()
}

func setPosition(ctx context.Context, tx *sql.Tx, pos journal.Pos, dirMtime int64) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES('journal_off', ?), ('journal_tail', ?), ('dir_mtime', ?)`,
		strconv.FormatInt(pos.Off, 10), pos.Tail, strconv.FormatInt(dirMtime, 10))
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// watchedQuery reads the watch list and the partial runs by index (a
// UNION ordered its rows by scanning every run: 46 ms for 37,835).
const watchedQuery = `SELECT run_id FROM watch UNION ALL SELECT run_id FROM runs INDEXED BY runs_partial WHERE size < 0`

// watched lists the runs being written: those the journal says are (an
// open entry without its close), those found new in a listing and not
// finished (watched until they finish or the journal names them: a
// writer that keeps no journal, an older twasm's record), and those whose
// last line was partial when read (a writer is in the middle of it).
func (ix *Index) watched(ctx context.Context) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, watchedQuery)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// UpdateRuns brings the given runs up to date (after a command wrote
// them), and the child runs that the lines it reads link to
// (child_run_id: a sub-agent's run, written with its parent), and
// theirs: it is Update limited to those files, so its cost does not grow
// with the number of runs in storage.
//
// What the index saw of each file is read by its run id (batch.file),
// never the whole list of runs (Index.files): a first sync's live
// indexer calls it for every 64 runs written, and reading the list each
// time made that build quadratic in the sessions (on 24,762 runs of
// BenchmarkIndexLiveBatches, a batch of the last tenth cost 2.2 times
// the CPU of one of the first).
func (ix *Index) UpdateRuns(ctx context.Context, runIDs []string) (Stats, error) {
	var st Stats
	b := &batch{ix: ix}
	defer b.rollback()
	seen := map[string]bool{}
	queue := slices.Clone(runIDs)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if seen[id] || runid.Valid(id) != nil {
			continue // a link read from a file is checked before it is a path
		}
		seen[id] = true
		path := filepath.Join(ix.root, "transcripts", id+".jsonl")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		st.Runs++
		b.linked = b.linked[:0]
		row, err := b.file(ctx, id)
		if err != nil {
			return st, err
		}
		if err := ix.updateFile(ctx, b, path, id, row, &st); err != nil {
			return st, err
		}
		queue = append(queue, b.linked...)
	}
	return st, b.commit()
}

// batchBytes is how much transcript one transaction indexes at most
// before it commits (a file is never split): few commits keep FTS5's
// segments few and large (each commit flushes its pending terms into a
// new segment that later merges rewrite), while a writer waiting on the
// lock (busy timeout 10 s) waits one batch at most.
const batchBytes = 32 << 20

// batch is the open write transaction of an update, begun on the first
// file that needs writing and committed every batchBytes, with the
// statements every document uses prepared once.
type batch struct {
	ix        *Index
	tx        *sql.Tx
	doc, text *sql.Stmt
	docChunk  *sql.Stmt // inserts docChunk rows (insertDocsSQL)
	maxDoc    *sql.Stmt // the largest document id (maxDocSQL)
	outcome   *sql.Stmt // finds a tool call's documents when its result comes
	setStatus *sql.Stmt // sets a document's status (a tool call's outcome)
	saveRun   *sql.Stmt // saves a run's row (runRow.save)
	fileRow   *sql.Stmt // reads a run's row (fileSQL)
	// fileTx and fileID are the transaction (nil: none) and the run of
	// the last read of fileRow: updateFile reads the row again inside
	// its transaction only when that read was made outside it.
	fileTx *sql.Tx
	fileID string
	// addSession notes a session a run's agent step names
	// (writer.session): prepared once per transaction, since compiling
	// it for every run was 4% of a build.
	addSession *sql.Stmt
	nextID     int64
	nextRID    int64 // the number of the next run new to the index (runs.rid)
	bytes      int64
	br         *bufio.Reader // reused from file to file
	dec        lineDecoder   // reused from file to file
	linked     []string      // child run ids in the lines read (UpdateRuns)
	// rows are the documents read and not yet in docs, in the order of
	// their ids (one after another), inserted docChunk at a time
	// (flushDocs); args is the chunk's arguments, reused.
	rows []docRow
	args []any
	// texts are the fts rows of the run being read, by their text, kind,
	// role and tool (textKey): a document whose text the run already has
	// shares that row (docs.fid) instead of indexing it again (reused
	// from file to file; writer.shared).
	texts map[textKey]int64
	// textRow finds the fts row a grown run already has for a text
	// (textRowSQL).
	textRow *sql.Stmt
	// textFind and textAdd find and add a row shared across runs
	// (crossRun: texts), nextText the id of the next one added.
	textFind, textAdd *sql.Stmt
	nextText          int64
	// crossRows are the rows shared across runs (texts) found or added
	// in this transaction, by their textKey: each run's injected texts
	// were looked up again in texts (textFindSQL), 2% of a build. Kept
	// while the transaction is open and removes no run (a run removed
	// may take the rows only it shared: batch.remove).
	crossRows map[textKey]int64
	// tags are the fts tags column's values made so far (tagsOf).
	tags map[[3]string]string
	// held are the runs the transaction changes, and before what Held's
	// rule read of them before it did (touchHeld): what refreshHeld
	// decides again from before the transaction commits.
	held   map[string]bool
	before heldTrace
}

// docRow is a document's row in docs.
type docRow struct {
	id, rid, ts, off, thash                  int64
	fid                                      int64 // docs.fid: 0 for NULL, the document's own fts row
	seq                                      uint64
	path, role, tool, origin, status, callID string
	iteration, kind, part                    int
}

// docChunk is how many documents one statement inserts into docs
// (insertDocsSQL). A statement per document was a sixth of an index
// build (TestIndexChild on a 256 MiB archive: 5.2 s of CPU with the
// rows left out, 6.1 with them), much of it each statement's own cost;
// 64 at a time, 5.16-5.65 s against 5.86-6.56 (interleaved, loaded).
const docChunk = 64

// docColumns are the columns of a docs row, in docRow.values' order.
const docColumns = `docs(id, rid, seq, path, iteration, ts, kind, role, tool, origin, status, call_id, off, part, thash, fid)`

// insertDocsSQL inserts docChunk documents, each numbered by SQLite
// (the largest id plus one, one after another: flushDocs checks that
// these are the ids the documents have in fts). A statement that writes
// several rows opens a statement journal when it may abort, and at its
// savepoint FTS5 writes its pending terms as a segment (see outcomeSQL):
// an id given, which SQLite must check is an integer, or the default
// conflict rule ABORT, would make every chunk a segment; OR FAIL, which
// keeps the rows already written when a row fails (none does: nothing
// here is NULL, and the ids are new), needs no journal.
var insertDocsSQL = `INSERT OR FAIL INTO docs(rid, seq, path, iteration, ts, kind, role, tool, origin, status, call_id, off, part, thash, fid) VALUES ` +
	strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), `, docChunk), ", ")

// maxDocSQL is the largest document id: the one before the id SQLite
// gives the next row inserted without one.
const maxDocSQL = `SELECT coalesce(max(id), 0) FROM docs`

// values appends the row's values in docColumns' order, its id left out
// when withID is false (insertDocsSQL).
func (r *docRow) values(args []any, withID bool) []any {
	if withID {
		args = append(args, r.id)
	}
	var fid any // NULL: its own fts row
	if r.fid != 0 {
		fid = r.fid
	}
	return append(args, r.rid, r.seq, r.path, r.iteration, r.ts, r.kind, r.role, r.tool, r.origin, r.status, r.callID, r.off, r.part, r.thash, fid)
}

// flushDocs inserts the documents read and not yet in docs (batch.rows):
// docChunk by one statement (insertDocsSQL) when the ids SQLite would
// give are theirs, else (the documents of the run with the largest ids
// removed in this transaction, to be read again) and for the rest, one
// by one with their ids. Every statement that reads docs, and the
// commit, come after it.
func (b *batch) flushDocs(ctx context.Context) error {
	rows := b.rows
	for len(rows) >= docChunk {
		var top int64
		if err := b.maxDoc.QueryRowContext(ctx).Scan(&top); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if top+1 != rows[0].id {
			break
		}
		b.args = b.args[:0]
		for i := range rows[:docChunk] {
			b.args = rows[i].values(b.args, false)
		}
		res, err := b.docChunk.ExecContext(ctx, b.args...)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if last, err := res.LastInsertId(); err != nil || last != rows[docChunk-1].id {
			return fmt.Errorf("index: documents numbered up to %d, not %d as in fts (%v)", last, rows[docChunk-1].id, err)
		}
		rows = rows[docChunk:]
	}
	for i := range rows {
		b.args = rows[i].values(b.args[:0], true)
		if _, err := b.doc.ExecContext(ctx, b.args...); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	b.rows = b.rows[:0]
	return nil
}

// pendingRow is the row of document id when it is not in docs yet.
func (b *batch) pendingRow(id int64) *docRow {
	if len(b.rows) == 0 {
		return nil
	}
	if i := id - b.rows[0].id; i >= 0 && i < int64(len(b.rows)) && b.rows[i].id == id {
		return &b.rows[i]
	}
	return nil
}

// outcomeSQL finds the documents of the tool call a result answers, to
// give them its outcome. It runs once per tool result, so it must find
// the call through docs_run's (rid, call_id), never by reading every
// document of the run: that was quadratic in a run's length (a
// 15,000-line session spent 90% of its first sync here). An empty call
// id finds nothing: only a call's document has one. Of a reused id
// (a provider's ids unique per response, not per run), the calls still
// without an outcome are read, and setOutcome takes the one
// transcript.Pairer would: the earliest of the result's step, else the
// earliest.
//
// It is a SELECT, and the status is set by id (setStatusSQL): an UPDATE
// that may change several rows opens a statement journal inside the
// transaction, and at every statement savepoint FTS5 flushes its pending
// terms into a new segment, so one UPDATE per tool result made a segment
// per result and spent most of an index build merging them (45% of
// BenchmarkIndexBuild's CPU). A read from the start of a file does not
// even look: the calls it indexed are known (writer.pairs), and the run
// has no others.
const outcomeSQL = `SELECT id, seq, path, iteration FROM docs WHERE rid = ? AND call_id = ? AND call_id != '' AND status = ''`

// setStatusSQL sets one document's status, by id: an update of one row,
// without a statement journal. It clears the call id: a call with an
// outcome is never looked up again (outcomeSQL reads the calls without
// one), so its id would only take room in docs and docs_run (the
// settled calls' ids were 82 KB of BenchmarkStoreSize's 2,363 KB index).
const setStatusSQL = `UPDATE docs SET status = ?, call_id = '' WHERE id = ?`

func (b *batch) begin(ctx context.Context) error {
	if b.tx != nil {
		return nil
	}
	tx, err := b.ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	b.tx, b.bytes = tx, 0
	clear(b.crossRows)
	// FTS5's settings are in the database, for every connection: this
	// Index's budget of pending terms is set for its transaction alone,
	// and FTS5's own stored again before it commits (commit). Setting
	// one writes FTS5's pending terms first: here there are none, and
	// before the commit they are written anyway.
	if b.ix.pending != defaultPendingBytes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO fts(fts, rank) VALUES('hashsize', ?)`, b.ix.pending); err != nil {
			b.rollback()
			return fmt.Errorf("index: %w", err)
		}
	}
	if err = tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM docs`).Scan(&b.nextID); err != nil {
		b.rollback()
		return fmt.Errorf("index: %w", err)
	}
	if err = tx.QueryRowContext(ctx, `SELECT coalesce(max(rid), 0) + 1 FROM runs`).Scan(&b.nextRID); err != nil {
		b.rollback()
		return fmt.Errorf("index: %w", err)
	}
	if err = tx.QueryRowContext(ctx, `SELECT coalesce(max(id), ?) + 1 FROM texts`, textBase).Scan(&b.nextText); err != nil {
		b.rollback()
		return fmt.Errorf("index: %w", err)
	}
	for _, st := range []struct {
		stmt **sql.Stmt
		q    string
	}{
		{&b.doc, `INSERT INTO ` + docColumns + ` VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&b.docChunk, insertDocsSQL},
		{&b.maxDoc, maxDocSQL},
		{&b.outcome, outcomeSQL},
		{&b.setStatus, setStatusSQL},
		{&b.text, `INSERT INTO fts(rowid, text, tags) VALUES(?, ?, ?)`},
		{&b.saveRun, saveRunSQL},
		{&b.fileRow, fileSQL},
		{&b.textRow, textRowSQL},
		{&b.textFind, textFindSQL},
		{&b.textAdd, `INSERT INTO texts(id, thash, kind, role, tool) VALUES(?, ?, ?, ?, ?)`},
		{&b.addSession, addSessionSQL},
	} {
		if *st.stmt, err = tx.PrepareContext(ctx, st.q); err != nil {
			b.rollback()
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

func (b *batch) closeStmts() {
	for _, s := range []*sql.Stmt{b.doc, b.docChunk, b.maxDoc, b.text, b.outcome, b.setStatus, b.saveRun, b.fileRow, b.textRow, b.textFind, b.textAdd, b.addSession} {
		if s != nil {
			s.Close()
		}
	}
	b.doc, b.docChunk, b.maxDoc, b.text, b.outcome, b.setStatus, b.saveRun, b.fileRow, b.textRow, b.textFind, b.textAdd, b.addSession = nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
}

// commit commits the open transaction, if any.
func (b *batch) commit() error {
	if b.tx == nil {
		return nil
	}
	if err := b.flushDocs(context.Background()); err != nil {
		b.rollback()
		return fmt.Errorf("index: commit: %w", err)
	}
	if err := b.refreshHeld(context.Background()); err != nil {
		b.rollback()
		return fmt.Errorf("index: commit: %w", err)
	}
	b.closeStmts()
	if b.ix.pending != defaultPendingBytes {
		if _, err := b.tx.Exec(`INSERT INTO fts(fts, rank) VALUES('hashsize', ?)`, defaultPendingBytes); err != nil {
			b.rollback()
			return fmt.Errorf("index: commit: %w", err)
		}
	}
	err := b.tx.Commit()
	b.tx = nil
	if err != nil {
		return fmt.Errorf("index: commit: %w", err)
	}
	return nil
}

// rollback abandons the open transaction, if any.
func (b *batch) rollback() {
	b.rows, b.held, b.before = b.rows[:0], nil, heldTrace{}
	if b.tx != nil {
		b.closeStmts()
		b.tx.Rollback()
		b.tx = nil
	}
}

// runSet is a set of run ids, each with flags (runCheck, runNamed), by
// the 16 bytes of its UUID: an update of an index of 20,000 runs holds
// 20,000 of them, not the strings. A run id that is not one is never
// indexed (update skips it) and is not kept.
type runSet map[[16]byte]uint8

const (
	runCheck = 1 << iota // to check
	runNamed             // named by the journal
)

func (s runSet) add(id string, flags uint8) {
	if k, ok := runid.Key(id); ok {
		s[k] |= flags
	}
}

// sorted are the runs with any of flags, by run id.
func (s runSet) sorted(flags uint8) [][16]byte {
	var out [][16]byte
	for k, f := range s {
		if f&flags != 0 {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, compareKeys)
	return out
}

// compareKeys orders run keys as their run ids are ordered.
func compareKeys(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) }

// knownRunIDs are the runs the index holds: the ids, by run id, and any other
// (not a UUID: none an index built by update holds) by itself, true.
type knownRunIDs struct {
	ids   [][16]byte
	other map[string]bool
}

// knownRuns lists the runs the index holds.
func (ix *Index) knownRuns(ctx context.Context) (knownRunIDs, error) {
	k := knownRunIDs{other: map[string]bool{}}
	rows, err := ix.db.QueryContext(ctx, `SELECT run_id FROM runs`)
	if err != nil {
		return k, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var id sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return k, fmt.Errorf("index: %w", err)
		}
		if key, ok := runid.Key(string(id)); ok {
			k.ids = append(k.ids, key)
		} else {
			k.other[string(id)] = true
		}
	}
	if err := rows.Err(); err != nil {
		return k, fmt.Errorf("index: %w", err)
	}
	slices.SortFunc(k.ids, compareKeys)
	return k, nil
}

// listRuns calls f with the run id of each transcript (<id>.jsonl, not
// a directory) in dir, in no order, reading the directory a batch of
// entries at a time (all at once, 20,000 transcripts' entries were 6
// MiB of heap). A missing directory lists none.
func listRuns(dir string, f func(id string)) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer d.Close()
	for {
		ents, err := d.ReadDir(256)
		for _, e := range ents {
			if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && !e.IsDir() {
				f(id)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
}

// fileSQL reads what the index saw of one transcript (batch.file).
const fileSQL = `SELECT rid, size, mtime, indexed, last_seq FROM runs WHERE run_id = ?`

// file returns what the index saw of one transcript (nil: nothing),
// inside the batch's transaction when one is open (the database has one
// connection).
func (b *batch) file(ctx context.Context, id string) (*fileRow, error) {
	var row *sql.Row
	if b.tx != nil {
		row = b.fileRow.QueryRowContext(ctx, id)
	} else {
		row = b.ix.db.QueryRowContext(ctx, fileSQL, id)
	}
	b.fileTx, b.fileID = b.tx, id
	r := &fileRow{}
	err := row.Scan(&r.rid, &r.size, &r.mtime, &r.indexed, &r.lastSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return r, nil
}

// remove removes a run from the index in the batch's transaction
// (removeTx), forgetting the rows shared across runs found so far,
// which the run may have been the last to share.
func (b *batch) remove(ctx context.Context, id string) error {
	clear(b.crossRows)
	return removeTx(ctx, b.tx, id)
}

// removeTx removes a run from the index: its documents, its row, what
// its transcript said of others, and the rows shared across runs
// (texts) that only its documents shared: a row another run's document
// still shares stays (docs_shared finds it), and goes with the last.
func removeTx(ctx context.Context, tx *sql.Tx, id string) error {
	var cross []int64
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT fid FROM docs WHERE rid = (SELECT rid FROM runs WHERE run_id = ?) AND fid < 0`, id)
	if err != nil {
		return fmt.Errorf("index: remove %s: %w", id, err)
	}
	for rows.Next() {
		var fid int64
		if err := rows.Scan(&fid); err != nil {
			rows.Close()
			return fmt.Errorf("index: remove %s: %w", id, err)
		}
		cross = append(cross, fid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: remove %s: %w", id, err)
	}
	for _, q := range []string{
		`DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE rid = (SELECT rid FROM runs WHERE run_id = ?) AND fid IS NULL)`,
		`DELETE FROM docs WHERE rid = (SELECT rid FROM runs WHERE run_id = ?)`,
		`DELETE FROM runs WHERE run_id = ?`,
		`DELETE FROM superseded WHERE src = ?`,
		`DELETE FROM sessions WHERE run_id = ?`,
		`DELETE FROM rebuilt WHERE run_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("index: remove %s: %w", id, err)
		}
	}
	// Each row alone (a statement of one row: see outcomeSQL), once no
	// document shares it.
	for _, fid := range cross {
		var used bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM docs WHERE fid = ?)`, fid).Scan(&used); err != nil {
			return fmt.Errorf("index: remove %s: %w", id, err)
		}
		if used {
			continue
		}
		for _, q := range []string{`DELETE FROM fts WHERE rowid = ?`, `DELETE FROM texts WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, fid); err != nil {
				return fmt.Errorf("index: remove %s: %w", id, err)
			}
		}
	}
	return nil
}

// seqAt returns the seq of the complete line that ends at off (0 when it
// cannot be read back).
func seqAt(f *os.File, off int64) uint64 {
	if off <= 0 {
		return 0
	}
	n := min(off, 1<<20)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off-n); err != nil {
		return 0
	}
	if b[len(b)-1] != '\n' {
		return 0
	}
	line := b[:len(b)-1]
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	} else if n < off {
		return 0 // longer than the window
	}
	ev, _ := transcript.DecodeEvent(line)
	if ev == nil {
		return 0
	}
	return ev.Seq
}

func (ix *Index) updateFile(ctx context.Context, b *batch, path, id string, row *fileRow, st *Stats) error {
	if row != nil {
		// The common case, every search: unchanged, known by a stat.
		if info, err := os.Stat(path); err == nil && row.size == info.Size() && row.mtime == info.ModTime().UnixNano() {
			return nil
		}
	}
	// A named pipe put where a transcript goes must not block the
	// update (and every search, usage or stats behind it): refused, named.
	f, info, err := regfile.OpenInfo(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // removed meanwhile
		}
		return fmt.Errorf("index: %w", err)
	}
	defer f.Close()
	size, mtime := info.Size(), info.ModTime().UnixNano()
	if row != nil && row.size == size && row.mtime == mtime {
		return nil
	}
	if err := b.begin(ctx); err != nil {
		return err
	}
	// The file's statements run without ctx's cancellation, as its
	// lines' do (writer.read, which checks ctx before each line).
	sctx := context.WithoutCancel(ctx)
	// What the index holds of the run, read again inside the write
	// transaction: another process may have indexed the file since row
	// was read, and the run's number (rid) must be the one its
	// documents have. A row read inside this transaction is what it
	// holds (the index has one connection, which the transaction holds):
	// read again, it was 2% of a build from nothing.
	if b.fileTx != b.tx || b.fileID != id {
		if row, err = b.file(sctx, id); err != nil {
			return err
		}
	}
	if row != nil && row.size == size && row.mtime == mtime {
		return nil
	}
	if err := b.touchHeld(sctx, id, row != nil); err != nil {
		return err
	}
	from := int64(0)
	if row != nil && size >= row.indexed && seqAt(f, row.indexed) == row.lastSeq {
		from = row.indexed
	}
	run := &runRow{id: id, providers: ",", models: ","}
	if row != nil {
		run.rid = row.rid // kept while the run is in the index
	} else {
		run.rid = b.nextRID
		b.nextRID++
	}
	if from == 0 {
		if row != nil {
			st.Reindexed++
			if err := b.flushDocs(sctx); err != nil {
				return err
			}
			if err := b.remove(sctx, id); err != nil {
				return err
			}
		}
	} else if err := run.load(sctx, b.tx); err != nil {
		return err
	}
	st.Indexed++
	if b.texts == nil || len(b.texts) > 1<<12 {
		b.texts = map[textKey]int64{} // a long run's map is not kept for the next
	}
	clear(b.texts)
	w := &writer{batch: b, run: run, whole: from == 0, docs: map[int][]int64{}, done: map[int][]int64{}, doneStatus: map[int]string{}, resultDocs: map[int][]int64{}}
	end, err := w.read(ctx, io.NewSectionReader(f, from, size-from), from, st)
	if errors.Is(err, errWhole) {
		// A revised call or result in what the run grew by: the run is
		// read again from its start (its documents removed first).
		st.Reindexed++
		if err := b.flushDocs(sctx); err != nil {
			return err
		}
		if err := b.remove(sctx, id); err != nil {
			return err
		}
		run = &runRow{id: id, rid: run.rid, providers: ",", models: ","}
		from = 0
		clear(b.texts)
		w = &writer{batch: b, run: run, whole: true, docs: map[int][]int64{}, done: map[int][]int64{}, doneStatus: map[int]string{}, resultDocs: map[int][]int64{}}
		end, err = w.read(ctx, io.NewSectionReader(f, 0, size), 0, st)
	}
	if err != nil {
		return err
	}
	run.size, run.mtime, run.indexed = size, mtime, end
	if end < size {
		run.size = -1 // a partial last line: look again next time
	}
	if err := run.save(sctx, b.saveRun); err != nil {
		return err
	}
	if b.bytes += end - from; b.bytes >= batchBytes {
		return b.commit()
	}
	return nil
}

// runRow is a run's row in runs, updated as its events are read.
type runRow struct {
	rid                               int64 // the run's number (runs.rid)
	id, name, parent, status, errText string
	started, ended                    int64
	providers, models                 string
	steps, tools, events              int
	errors                            int // documents whose own outcome is error, calls left out
	size, mtime, indexed              int64
	lastSeq                           uint64
	// final is run.completed's status ("" while there is none). session
	// marks an archived agent session, partStatus its latest part's
	// status, openSteps the steps begun and not completed: status is
	// final, else partStatus for a session with no step open, else
	// "running" (the views' rule, views.RunNode.Open).
	final, partStatus string
	session           bool
	openSteps         int
	// title is the run's first prompt (promptTitle); project the first
	// agent step result's project, else its cwd.
	title, project string
}

func (r *runRow) load(ctx context.Context, tx *sql.Tx) error {
	err := tx.QueryRowContext(ctx, `SELECT name, parent_run_id, status, error, started, ended, providers, models, steps, tools, events, errors, last_seq, final, session, part_status, open_steps, title, project FROM runs WHERE run_id = ?`, r.id).
		Scan(&r.name, &r.parent, &r.status, &r.errText, &r.started, &r.ended, &r.providers, &r.models, &r.steps, &r.tools, &r.events, &r.errors, &r.lastSeq, &r.final, &r.session, &r.partStatus, &r.openSteps, &r.title, &r.project)
	if err != nil {
		return fmt.Errorf("index: load run %s: %w", r.id, err)
	}
	return nil
}

// saveRunSQL writes a run's row: prepared once per transaction
// (batch.saveRun), since compiling it for each of a build's runs was 4%
// of the build. An upsert on the run's number, not INSERT OR REPLACE:
// replacing a row by its rowid in a table with indexes makes SQLite
// open a statement journal, at whose savepoint FTS5 flushes its pending
// terms (a segment per run: 9 segments instead of 3, and 103 free
// pages, after a build of 67 runs).
const saveRunSQL = `INSERT INTO runs(rid, run_id, name, parent_run_id, status, error, started, ended, providers, models, steps, tools, events, errors, size, mtime, indexed, last_seq, final, session, part_status, open_steps, title, project)
VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(rid) DO UPDATE SET (run_id, name, parent_run_id, status, error, started, ended, providers, models, steps, tools, events, errors, size, mtime, indexed, last_seq, final, session, part_status, open_steps, title, project) =
  (excluded.run_id, excluded.name, excluded.parent_run_id, excluded.status, excluded.error, excluded.started, excluded.ended, excluded.providers, excluded.models, excluded.steps, excluded.tools, excluded.events, excluded.errors, excluded.size, excluded.mtime, excluded.indexed, excluded.last_seq, excluded.final, excluded.session, excluded.part_status, excluded.open_steps, excluded.title, excluded.project)`

func (r *runRow) save(ctx context.Context, stmt *sql.Stmt) error {
	switch {
	case r.final != "":
		r.status = r.final
	case r.session && r.partStatus != "" && r.openSteps == 0:
		r.status = r.partStatus
	default:
		r.status = "running"
	}
	_, err := stmt.ExecContext(ctx,
		r.rid, r.id, r.name, r.parent, r.status, r.errText, r.started, r.ended, r.providers, r.models, r.steps, r.tools, r.events, r.errors, r.size, r.mtime, r.indexed, r.lastSeq, r.final, r.session, r.partStatus, r.openSteps, r.title, r.project)
	if err != nil {
		return fmt.Errorf("index: save run %s: %w", r.id, err)
	}
	return nil
}

func addTo(list *string, v string) {
	if v == "" || strings.Contains(*list, ","+v+",") {
		return
	}
	*list += v + ","
}

// writer inserts one file's documents into the batch.
type writer struct {
	*batch
	run  *runRow
	line line // the line being read, its blocks reused
	// whole says the file is read from its start, so pairs has seen
	// every tool call of the run (with a call id and a document: what
	// outcomeSQL can find) and pairs them with their results by
	// transcript.Pairer's rule (a provider may reuse a call id once its
	// call is answered), and docs holds the ids of the documents of each
	// call still without a result, by the call's number.
	whole bool
	pairs transcript.Pairer
	docs  map[int][]int64
	// done and doneStatus are, by number, the documents of each call
	// answered in this read and the outcome they took: a revised result
	// (a new version of the result: transcript.Pairer) gives them its
	// own, and a revised call's new version takes theirs.
	done       map[int][]int64
	doneStatus map[int]string
	// resultDocs are, by number, the documents of the results of each
	// call answered in this read, which a revised result gives its
	// outcome too (their versions, as the call's); resultCall is the
	// number of the call the line being read answers (-1: none).
	resultDocs map[int][]int64
	resultCall int
	// flushed says the documents of the run read before this read of a
	// grown file are in docs, where textRowSQL finds them (shared).
	flushed bool
	// sessions are the session keys noted in this read (session).
	sessions map[string]bool
}

// textKey is what makes two documents of a run one fts row: their
// text (by its hash, docs.thash, as search folds hits) and their kind
// (kindCode), role and tool (the row's tags column), compared as they
// are: tags made of a transcript's strings could be made to collide.
type textKey struct {
	thash      int64
	kind       int
	role, tool string
	cross      bool // a row shared across runs (crossRun: texts)
}

// textBase is below the ids of the rows shared across runs (texts), the
// first of which is textBase+1: below 0, so that no document's id (from
// 1 up, its own fts row's) is ever one of them, and rising, so that the
// newest of them come first among them in FTS5's order (newestRanked).
const textBase = -(1 << 62)

// crossRun says whether a document's fts row is shared across runs
// (texts): an injected text (a system prompt, injected context), which
// the agent's tooling sends again in every session, is indexed once for
// the whole index, where any other text keeps a row per run (shared
// within it). Sharing every text across runs would make the newest
// matches ranked (Query.RankAmong) be told by when a text was first
// indexed: a new session's answer that repeats an old one would count as
// old; injected text ranks below the rest anyway (Hit.Injected).
func crossRun(d *doc) bool {
	return d.origin == string(transcript.OriginSystemPrompt) || d.origin == string(transcript.OriginInjected)
}

// tagsOf is filterTags(kind, role, tool), made once for each of the few
// kinds, roles and tools a build meets.
func (b *batch) tagsOf(kind, role, tool string) string {
	k := [3]string{kind, role, tool}
	if t, ok := b.tags[k]; ok {
		return t
	}
	if b.tags == nil || len(b.tags) > 1<<10 {
		b.tags = map[[3]string]string{}
	}
	t := filterTags(kind, role, tool)
	b.tags[k] = t
	return t
}

// textFindSQL finds the row shared across runs (texts) of a text's
// hash, kind, role and tool.
const textFindSQL = `SELECT id FROM texts WHERE thash = ? AND kind = ? AND role = ? AND tool = ?`

// shared returns the fts row that document id of the run (its kind,
// role, tool and text hash) shares (fid; 0: its own, id) and the row its
// text is to be indexed under (row; 0 when the row is there already).
//
// An injected text (crossRun) shares the row of texts that every run's
// document with that text, kind, role and tool shares, added when none
// has it yet (texts_hash finds it): the rule is the text's alone, so an
// index built in any order, as runs grew or from nothing, shares the
// same rows. Any other text shares the row of its run's earlier
// document with the same text, kind, role and tool, or has its own (and
// notes it for those after it): so bm25 counts a text a run repeats
// verbatim once (a tool's output repeated, an answer said again), and
// an injected one once in the whole index. The rule for these depends
// on the run alone: a file read from its start has every row of its run
// in batch.texts; a grown file read from where indexing stopped asks
// the index for a text it has not met in this read (textRowSQL, through
// docs_run: reading every document of a run of 20,000 for each update
// of it took 25 ms, where the update took 2), so that an index built as
// the run grew shares the rows a build from nothing shares.
func (w *writer) shared(ctx context.Context, kind int, role, tool string, thash, id int64, cross bool) (fid, row int64, err error) {
	key := textKey{thash, kind, role, tool, cross}
	if fid, ok := w.texts[key]; ok {
		return fid, 0, nil
	}
	if cross {
		if fid, ok := w.crossRows[key]; ok {
			w.texts[key] = fid
			return fid, 0, nil
		}
		err := w.textFind.QueryRowContext(ctx, thash, kind, role, tool).Scan(&fid)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			fid, row = w.nextText, w.nextText
			w.nextText++
			if _, err := w.textAdd.ExecContext(ctx, fid, thash, kind, role, tool); err != nil {
				return 0, 0, fmt.Errorf("index: %w", err)
			}
		case err != nil:
			return 0, 0, fmt.Errorf("index: %w", err)
		}
		w.texts[key] = fid
		if w.crossRows == nil {
			w.crossRows = map[textKey]int64{}
		}
		w.crossRows[key] = fid
		return fid, row, nil
	}
	if !w.whole {
		fid, err := w.textRowOf(ctx, kind, role, tool, thash)
		if err != nil {
			return 0, 0, err
		}
		if fid != 0 {
			w.texts[key] = fid
			return fid, 0, nil
		}
	}
	w.texts[key] = id
	return 0, id, nil
}

// textRowSQL finds the document of a run that holds a text's fts row
// (its fid NULL) by the text's hash, kind, role and tool, through
// docs_run: among the documents without a call id, then among the tool
// calls still waiting for their results (a few), whose call id is set.
const textRowSQL = `SELECT id FROM docs WHERE rid = ?1 AND call_id = '' AND thash = ?2 AND fid IS NULL AND kind = ?3 AND role = ?4 AND tool = ?5
UNION ALL
SELECT id FROM docs WHERE rid = ?1 AND call_id > '' AND thash = ?2 AND fid IS NULL AND kind = ?3 AND role = ?4 AND tool = ?5
LIMIT 1`

// textRowOf is the fts row the run being read already has for a text
// (textRowSQL), 0 when it has none. The run's documents still waiting
// in batch.rows (the run read earlier in this transaction) go into
// docs first.
func (w *writer) textRowOf(ctx context.Context, kind int, role, tool string, thash int64) (int64, error) {
	if !w.flushed {
		w.flushed = true
		for i := range w.rows {
			if w.rows[i].rid == w.run.rid {
				if err := w.flushDocs(ctx); err != nil {
					return 0, err
				}
				break
			}
		}
	}
	var fid int64
	err := w.textRow.QueryRowContext(ctx, w.run.rid, thash, kind, role, tool).Scan(&fid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	return fid, nil
}

// read indexes every complete line of r (which starts at file offset
// base) and returns the offset after the last complete line.
//
// A line's statements run under ctx without its cancellation (sctx),
// and ctx is checked before each line instead: given a context that
// can be cancelled, the driver starts a goroutine watching it and
// installs a progress handler for every statement, which made a build
// in a command's process (signal.NotifyContext) cost about a sixth more
// CPU than one under context.Background. A cancelled update still
// stops within a line and rolls its transaction back.
func (w *writer) read(ctx context.Context, r io.Reader, base int64, st *Stats) (int64, error) {
	sctx := context.WithoutCancel(ctx)
	if w.br == nil {
		w.br = bufio.NewReaderSize(r, 256<<10)
	} else {
		w.br.Reset(r)
	}
	br := w.br
	off := base
	var long []byte
	for {
		if err := ctx.Err(); err != nil {
			return off, err
		}
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) <= maxLine {
				long = append(long, chunk...)
			} else {
				long = append(long[:0], 0) // too long: remember to skip it
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return off, fmt.Errorf("index: read: %w", err)
		}
		if len(chunk) == 0 || chunk[len(chunk)-1] != '\n' {
			return off, nil // end, or a partial last line: next time
		}
		line := chunk
		if len(long) > 0 {
			line = append(long, chunk...)
			long = long[:0]
		}
		start := off
		off += int64(len(line))
		if len(line) > maxLine || len(line) > 0 && line[0] == 0 {
			st.Skipped++
			continue
		}
		ts, derr := w.dec.decode(bytes.TrimRight(line, "\r\n"), &w.line)
		if derr != nil {
			st.Skipped++
			continue
		}
		if err := w.event(sctx, &w.line, ts, start, st); err != nil {
			return off, err
		}
		if errors.Is(err, io.EOF) {
			return off, nil
		}
	}
}

// doc is one searchable piece of an event: what it is, and its text
// (trimmed, at most maxDocText bytes).
type doc struct{ kind, role, tool, origin, status, callID, text string }

// kinds are the kinds of documents docsOf makes; docs.kind holds each as
// its place here (kindCode), the commonest first: SQLite stores 0 and 1
// in no byte, the others below 128 in one. The order is the schema's:
// changing it changes schemaVersion.
var kinds = [...]string{
	"tool_call", "tool_result", string(transcript.BlockText), string(transcript.BlockThinking),
	string(transcript.BlockCommand), string(transcript.BlockStream), "error",
}

// kindCode is how docs.kind holds a document's kind: -1 for a name no
// document has (a search filtered by it finds nothing).
func kindCode(kind string) int {
	for i, k := range kinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// kindName is the kind docs.kind's code holds (kindCode).
func kindName(code int) string {
	if code < 0 || code >= len(kinds) {
		return ""
	}
	return kinds[code]
}

// docsOf returns the documents of a decoded line, in a fixed order: a
// document is stored as its line's offset and its place in this list
// (docs.part), and its text is found again by reading the line
// (snippets are cut from the transcript: the index holds no copy).
func docsOf(ev *line) []doc {
	var out []doc
	add := func(d doc, text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		if len(text) > maxDocText {
			text = text[:maxDocText]
		}
		d.text = text
		out = append(out, d)
	}
	errDoc := doc{kind: "error", status: transcript.StatusError}
	p := &ev.Payload
	switch transcript.EventType(ev.Type) {
	case transcript.RunCompleted:
		add(errDoc, p.Error)
	case transcript.StepCompleted:
		if res, ok := p.result(); ok {
			add(errDoc, res.Error)
		}
		add(errDoc, p.Error)
	case transcript.MessageUser, transcript.MessageAssistant:
		for _, b := range p.Blocks {
			var text string
			switch b.Type {
			case transcript.BlockText:
				text = b.Text
			case transcript.BlockThinking:
				text = b.Thinking
			case transcript.BlockCommand:
				text = b.Command
			case transcript.BlockStream:
				text = b.Chunk
			default:
				continue // tool_use and tool_result: indexed as tool.call and tool.result
			}
			add(doc{kind: string(b.Type), role: p.Role, origin: b.Origin}, text)
		}
	case transcript.ToolCall:
		add(doc{kind: "tool_call", role: "tool", tool: p.Name, callID: p.CallID}, toolCallText(p.Name, p.Command, p.Input))
	case transcript.ToolResult:
		text := p.Output
		if p.Error != "" {
			text += "\n" + p.Error
		}
		add(doc{kind: "tool_result", role: "tool", tool: p.Name, status: toolStatus(p)}, text)
	}
	return out
}

// toolCallText is the text of a tool call's document: its name, its
// command, and its input's keys and scalar values, one a line, the
// strings unescaped (inputText).
func toolCallText(name, command string, input []byte) string {
	b := make([]byte, 0, len(name)+len(command)+len(input)+2)
	b = append(b, name...)
	if command != "" {
		b = append(b, '\n')
		b = append(b, command...)
	}
	if len(input) > 0 {
		b = append(b, '\n')
		b = inputText(b, input, command)
	}
	return string(b)
}

// inputText appends the keys and scalar values of the JSON value in (a
// tool call's input, valid JSON: its line was decoded), in their order,
// each followed by a line break: a string unescaped, a number, true,
// false or null as written. A string value equal to command (the
// command a shell tool's input holds again) is left out, its key kept.
//
// The input's JSON text itself was indexed before schema 11: its
// escapes split and glued words (a line that an edit's text begins,
// after "\n", was the token "n" and the word, found by neither), and a
// shell call's command was indexed twice.
func inputText(dst, in []byte, command string) []byte {
	var buf []byte
	for i := 0; i < len(in); {
		switch c := in[i]; c {
		case '{', '}', '[', ']', ',', ':', ' ', '\t', '\r', '\n':
			i++
		case '"':
			j := jsonstr.StringEnd(in, i) - 1 // the closing quote
			if j < 0 {
				j = len(in) // unterminated: the rest (the input was decoded)
			}
			s := in[i+1 : j]
			if bytes.IndexByte(s, '\\') >= 0 {
				var ok bool
				if buf, ok = unescape(buf[:0], s); ok {
					s = buf
				}
			}
			i = j + 1
			k := i
			for k < len(in) && (in[k] == ' ' || in[k] == '\t' || in[k] == '\r' || in[k] == '\n') {
				k++
			}
			isKey := k < len(in) && in[k] == ':'
			if !isKey && command != "" && string(s) == command {
				continue
			}
			dst = append(dst, s...)
			dst = append(dst, '\n')
		default:
			j := i
			for j < len(in) && !strings.ContainsRune("{}[],: \t\r\n\"", rune(in[j])) {
				j++
			}
			dst = append(dst, in[i:j]...)
			dst = append(dst, '\n')
			i = j
		}
	}
	return dst
}

// textHash is what search folds documents by: XXH64 of the text
// (github.com/cespare/xxhash), as a signed 64-bit integer (SQLite's).
// Schema 10 stored FNV-1a, which read the text a byte at a time: 0.5 s
// of a 1 GiB archive's 23.7 s build (pprof of TestIndexChild); its
// indexes are rebuilt, so the two never meet in one index.
func textHash(text string) int64 { return int64(xxhash.Sum64String(text)) }

// toolStatus is a tool result's outcome: its status, else error when it
// has an error, else ok.
func toolStatus(p *linePayload) string {
	switch {
	case p.Status != "":
		return p.Status
	case p.Error != "":
		return transcript.StatusError
	}
	return transcript.StatusOK
}

func (w *writer) event(ctx context.Context, ev *line, t time.Time, off int64, st *Stats) error {
	r := w.run
	r.events++
	if ev.ChildRunID != "" {
		w.linked = append(w.linked, ev.ChildRunID)
	}
	if ev.Seq > r.lastSeq {
		r.lastSeq = ev.Seq
	}
	ts := t.UnixMilli()
	if t.IsZero() {
		ts = 0
	}
	p := &ev.Payload
	w.resultCall = -1
	switch transcript.EventType(ev.Type) {
	case transcript.RunStarted:
		r.name, r.parent, r.started = p.Name, ev.ParentRunID, ts
		r.session = len(p.Source) > 0 && string(p.Source) != "null"
		var from string
		if json.Unmarshal(p.RenormalizedFrom, &from) == nil && from != "" {
			if _, err := w.tx.ExecContext(ctx, `INSERT OR IGNORE INTO rebuilt(run_id, from_run) VALUES(?, ?)`, r.id, from); err != nil {
				return fmt.Errorf("index: %w", err)
			}
		}
		if len(p.SupersedesRuns) > 0 {
			var old []string
			_ = json.Unmarshal(p.SupersedesRuns, &old) // a list that does not read names none
			for _, o := range old {
				if err := w.superseded(ctx, o, r.id); err != nil {
					return err
				}
			}
		}
	case transcript.RunCompleted:
		r.final, r.errText, r.ended = cmp.Or(p.Status, transcript.StatusOK), p.Error, ts
		if err := w.superseded(ctx, r.id, p.SupersededBy); err != nil {
			return err
		}
	case transcript.StepStarted, transcript.StepCallWorkflowStarted:
		r.openSteps++
		if p.Supersedes != "" {
			if err := w.superseded(ctx, p.Supersedes, ev.ChildRunID); err != nil {
				return err
			}
		}
	case transcript.StepCallWorkflowCompleted:
		r.openSteps = max(0, r.openSteps-1)
	case transcript.StepCompleted:
		r.steps++
		r.openSteps = max(0, r.openSteps-1)
		if res, ok := p.result(); ok {
			addTo(&r.providers, res.Provider)
			addTo(&r.models, res.Model)
			if r.project == "" {
				r.project = transcript.ProjectOf(res.Project, res.Cwd)
			}
			if p.Kind == string(transcript.KindAgent) && !strings.Contains(ev.Path, ".") {
				r.partStatus = cmp.Or(res.Status, p.Status, transcript.StatusOK)
			}
			if p.Kind == string(transcript.KindAgent) {
				if err := w.session(ctx, res); err != nil {
					return err
				}
			}
		}
	case transcript.MessageUser, transcript.MessageAssistant:
		addTo(&r.models, p.Model)
	case transcript.ToolCall:
		if p.revised() && p.CallID != "" && !w.whole {
			return errWhole
		}
		if !p.revised() {
			r.tools++ // a revised call is one counted already
		}
	case transcript.ToolResult:
		// The call takes its result's outcome, so that a search of
		// failed calls finds the call (its command, its input) too.
		switch {
		case p.CallID == "":
		case p.revised() && !w.whole:
			return errWhole
		case p.revised():
			if err := w.reviseOutcome(ctx, ev, toolStatus(p)); err != nil {
				return err
			}
		default:
			if err := w.setOutcome(ctx, ev, toolStatus(p)); err != nil {
				return err
			}
		}
	}
	call := -1 // the tool call's number, from its first document
	// doneAs: the outcome the docs of a revised call take, its earlier
	// version's, when that one is answered already.
	doneAs, answered := "", false
	for part, d := range docsOf(ev) {
		if r.title == "" && transcript.EventType(ev.Type) == transcript.MessageUser && d.kind == string(transcript.BlockText) &&
			(d.origin == "" || d.origin == string(transcript.OriginPrompt)) {
			r.title = promptTitle(d.text)
		}
		id := w.nextID
		w.nextID++
		kind, thash := kindCode(d.kind), textHash(d.text)
		fid, row, err := w.shared(ctx, kind, d.role, d.tool, thash, id, crossRun(&d))
		if err != nil {
			return err
		}
		status, callID := d.status, d.callID
		if d.kind == "tool_call" && d.callID != "" && w.whole {
			if call < 0 {
				call, doneAs, answered = w.callNumber(ev, d.callID)
			}
			if answered {
				// A new version of a call answered already: its outcome
				// from here, as the earlier version's (set before the row
				// goes in w.rows, which a full chunk flushes at once).
				status, callID = doneAs, ""
				w.done[call] = append(w.done[call], id)
			} else {
				w.docs[call] = append(w.docs[call], id)
			}
		}
		w.rows = append(w.rows, docRow{id: id, rid: r.rid, seq: ev.Seq, path: ev.Path, iteration: ev.Iteration, ts: ts, kind: kind,
			role: d.role, tool: d.tool, origin: d.origin, status: status, callID: callID, off: off, part: part, thash: thash, fid: fid})
		if len(w.rows) == docChunk {
			if err := w.flushDocs(ctx); err != nil {
				return err
			}
		}
		if row != 0 {
			if _, err := w.text.ExecContext(ctx, row, d.text, w.tagsOf(d.kind, d.role, d.tool)); err != nil {
				return fmt.Errorf("index: %w", err)
			}
		}
		if d.kind == "tool_result" && w.resultCall >= 0 {
			w.resultDocs[w.resultCall] = append(w.resultDocs[w.resultCall], id)
		}
		// A call's status comes with its result (setOutcome), which
		// counts for both; every other document's is its own from here.
		if d.status == transcript.StatusError && d.kind != "tool_call" {
			r.errors++
		}
		st.Docs++
	}
	return nil
}

// setOutcome gives the documents of the tool call that result (a
// tool.result line) answers the status of the result: when the file is
// read from its start, the call writer.pairs pairs it with; else the one
// of the run's calls still without an outcome that transcript.Pairer
// would pair it with (outcomeSQL: of the result's step, the earliest by
// seq, else the earliest).
func (w *writer) setOutcome(ctx context.Context, result *line, status string) error {
	callID := result.Payload.CallID
	var ids []int64
	if w.whole {
		if k, ok := w.pairs.Result(callID, result.Path, result.Iteration); ok {
			ids = w.docs[k]
			delete(w.docs, k)
			w.done[k], w.doneStatus[k], w.resultCall = ids, status, k
		}
	} else {
		if err := w.flushDocs(ctx); err != nil { // the calls read since are looked up too
			return err
		}
		rows, err := w.outcome.QueryContext(ctx, w.run.rid, callID)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		first, own := int64(-1), false
		for rows.Next() {
			var id, seq int64
			var path string
			var iteration int
			if err := rows.Scan(&id, &seq, &path, &iteration); err != nil {
				rows.Close()
				return fmt.Errorf("index: %w", err)
			}
			same := path == result.Path && iteration == result.Iteration
			switch {
			case first < 0 || same && !own || same == own && seq < first:
				first, own, ids = seq, same, append(ids[:0], id)
			case seq == first:
				ids = append(ids, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return w.give(ctx, ids, status)
}

// give sets the status of documents ids (a tool call's outcome).
func (w *writer) give(ctx context.Context, ids []int64, status string) error {
	for _, id := range ids {
		if r := w.pendingRow(id); r != nil {
			// Not in docs yet (most calls: the result comes soon after):
			// the row goes in with its outcome, no update.
			r.status, r.callID = status, ""
			continue
		}
		if _, err := w.setStatus.ExecContext(ctx, status, id); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

// errWhole stops a read of a grown file that meets a revised call or
// result (transcript.RevisedField): the run is read again from its start
// (writer.whole), whose pairing knows the earlier version it replaces
// (a settled call's documents keep no call id to find them by).
var errWhole = errors.New("a revised tool event: read the run whole")

// callNumber is the number of the call a tool.call line of callID makes
// (writer.pairs), a revised one's the number of the call it is a new
// version of; answered says that call has its outcome already, status.
func (w *writer) callNumber(ev *line, callID string) (n int, status string, answered bool) {
	if !ev.Payload.revised() {
		return w.pairs.Call(callID, ev.Path, ev.Iteration), "", false
	}
	n, again := w.pairs.ReviseCall(callID, ev.Path, ev.Iteration)
	if !again {
		return n, "", false
	}
	status, answered = w.doneStatus[n]
	return n, status, answered
}

// reviseOutcome gives a revised result's outcome (a new version of the
// result of its call id: transcript.Pairer) to the documents of the call
// the earlier result answered, in place of the earlier outcome; a
// revised result with no earlier one is a result as any.
func (w *writer) reviseOutcome(ctx context.Context, result *line, status string) error {
	k, again, ok := w.pairs.ReviseResult(result.Payload.CallID, result.Path, result.Iteration)
	if !ok {
		return nil
	}
	w.resultCall = k
	ids := w.done[k]
	if again {
		// The earlier results' documents take the new outcome too: the
		// run's errors count its failed calls.
		old := w.resultDocs[k]
		if w.doneStatus[k] == transcript.StatusError {
			w.run.errors -= len(old)
		}
		if status == transcript.StatusError {
			w.run.errors += len(old)
		}
		if err := w.give(ctx, old, status); err != nil {
			return err
		}
	} else {
		ids = w.docs[k]
		delete(w.docs, k)
		w.done[k] = ids
	}
	w.doneStatus[k] = status
	return w.give(ctx, ids, status)
}

// superseded notes that run is superseded by run by, as the transcript
// being read says.
func (w *writer) superseded(ctx context.Context, run, by string) error {
	if by == "" || runid.Valid(run) != nil {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO superseded(run_id, by_run, src) VALUES(?, ?, ?)`, run, by, w.run.id); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// addSessionSQL notes a session a run names (writer.session).
const addSessionSQL = `INSERT OR IGNORE INTO sessions(key, run_id) VALUES(?, ?)`

// session notes the agent session an agent step's result names
// (views.SessionKey), or the empty key when it names none (views.RunHead's
// Sessions and Unkeyed), each once.
func (w *writer) session(ctx context.Context, res lineResult) error {
	key := ""
	if res.SessionID != "" {
		key = views.SessionKey(res.Provider, res.SessionID)
	}
	if w.sessions[key] {
		return nil
	}
	if _, err := w.addSession.ExecContext(ctx, key, w.run.id); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if w.sessions == nil {
		w.sessions = map[string]bool{}
	}
	w.sessions[key] = true
	return nil
}

// promptTitle is a run's title from its first prompt, as the views make
// it (views.RunNode.Title): on one line, at most 100 runes.
func promptTitle(text string) string {
	t := []rune(strings.Join(strings.Fields(text), " "))
	if len(t) > 100 {
		return string(t[:99]) + "…"
	}
	return string(t)
}
