package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	_ "modernc.org/sqlite" // pure-Go SQLite with FTS5: twasm stays one static binary
)

// schemaVersion changes whenever the tables or what goes into them change:
// an index of another version is rebuilt, unless a migration brings it
// to this one. A change both an older and a newer twasm read alike is
// not one: a settled tool call's call id, cleared since schema 10 was
// first built (docs.call_id), left it at 10.
const schemaVersion = "15"

// migration brings an index of one schema version to the next without
// reading a transcript again: a change of the tables alone (an index of
// SQL), not of what goes into them.
type migration struct{ to, sql string }

// migrations by the version they start from; an index of a version not
// here (nor this twasm's) is rebuilt. None today: schema 15 keeps
// Held's answer (the held table, and sessions.flags by which a write
// finds the runs its changes concern), decided as runs are indexed,
// where 14 decided it on every listing and search: an index of 14 is
// rebuilt so that every run has them. Schema 14 notes the
// agent sessions a run's steps name (sessions) and the run a rebuild was
// made from (rebuilt), which 13 did not read: an index of 13 is rebuilt
// so that every run has them. Schema 13 indexes an
// injected text (a system prompt, injected context) once for every run
// that has it (a row of texts, docs.fid below 0), where 12 gave each run
// a row of its own: what goes into fts changed, so an index of 12 is
// rebuilt. Schema 12 indexes a
// text a run repeats once (docs.fid), where 11 gave every document an
// fts row of its own: what goes into fts changed, so an index of 11 is
// rebuilt. Schema 11 indexes a
// tool call's input as its keys and values, unescaped (toolCallText),
// where 10 indexed its JSON text: what goes into fts changed, so an
// index of 10 is rebuilt. Schema 10 names a
// document's run by the run's number (runs.rid, docs.rid) instead of
// its id and its kind by a code (kindCode), and keeps a call id on tool
// calls alone: what goes into docs changed, so an index of 9 is rebuilt
// (a copy of its tables would keep their pages, where a rebuild gives
// the space back). Schema 9 added
// runs_project, which alone 8's indexes could take in place (CREATE
// INDEX runs_project ON runs(parent_run_id, project); TestOpenMigrates
// migrates so from the version before this one).
var migrations = map[string]migration{}

// File is the index's path under a storage root: beside the transcripts.
func File(root string) string { return filepath.Join(root, "index.db") }

const schema = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(
  -- rid: the run's number in this index, by which its documents name it
  -- (docs.rid), kept while the run is in the index (a run read again
  -- from its start keeps it): an integer of a byte or two where the run
  -- id's text took 36, in every document and in docs_run's every entry.
  rid INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  parent_run_id TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'running',
  final TEXT NOT NULL DEFAULT '',
  session INTEGER NOT NULL DEFAULT 0,
  -- title: the run's first prompt on one line (views.RunNode.Title).
  title TEXT NOT NULL DEFAULT '',
  -- project: the first agent step result's project, else its cwd
  -- (spec: where the provider data or the session's location gives them).
  project TEXT NOT NULL DEFAULT '',
  part_status TEXT NOT NULL DEFAULT '',
  open_steps INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  started INTEGER NOT NULL DEFAULT 0,
  ended INTEGER NOT NULL DEFAULT 0,
  providers TEXT NOT NULL DEFAULT ',',
  models TEXT NOT NULL DEFAULT ',',
  steps INTEGER NOT NULL DEFAULT 0,
  tools INTEGER NOT NULL DEFAULT 0,
  events INTEGER NOT NULL DEFAULT 0,
  -- errors: the run's documents whose own outcome is error, its tool
  -- calls left out (a call and its result count once): List's Errors,
  -- counted as they are indexed, not by reading every document of every
  -- run listed.
  errors INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL,
  mtime INTEGER NOT NULL,
  indexed INTEGER NOT NULL,
  last_seq INTEGER NOT NULL
);
CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  rid INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  path TEXT NOT NULL,
  iteration INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  -- kind: the document's kind (docsOf makes seven) as its place in
  -- kinds (kindCode): a byte or none where its name took up to 11.
  kind INTEGER NOT NULL,
  role TEXT NOT NULL,
  tool TEXT NOT NULL,
  -- origin: a user text block's origin ('' for a prompt; injected_context,
  -- system_prompt), ranked below what a person or the model wrote.
  origin TEXT NOT NULL DEFAULT '',
  -- status: the document's own outcome where it has one: a tool call's
  -- and its result's (ok, error, denied, cancelled), error for an error.
  status TEXT NOT NULL DEFAULT '',
  -- call_id: a tool call's call id while the call waits for its result,
  -- by which the result finds it (outcomeSQL); '' once the call has its
  -- outcome (setStatusSQL clears it: nothing looks a settled call up, and
  -- the ids, about 30 bytes each, held here and in docs_run, were a
  -- sixth of docs), and '' for every other document (a result's call id
  -- is in its line, and nothing looks a result up by it). An index an
  -- older twasm wrote keeps settled calls' ids, which outcomeSQL skips
  -- (their status is set): either reads the other's index alike.
  call_id TEXT NOT NULL DEFAULT '',
  -- off and part: where the text is, the index keeping no copy of it
  -- (fts is contentless): the offset of the transcript line, and the
  -- document's place among its line's documents (docsOf).
  off INTEGER NOT NULL,
  part INTEGER NOT NULL,
  -- thash: a hash of the text (textHash), what search folds hits by
  -- without reading them (the same instructions in every session).
  thash INTEGER NOT NULL,
  -- fid: NULL when the document's text is its own fts row (rowid = id);
  -- above 0, the id of the earlier document of its run whose fts row
  -- holds the same text, kind, role and tool (a text the run repeats: a
  -- repeated tool output, an answer said again), which the document
  -- shares: bm25 counts a run's text once; below 0, the row of texts
  -- (and of fts) that every run's injected document with that text,
  -- kind, role and tool shares (a system prompt, injected context:
  -- crossRun), counted once in the whole index.
  fid INTEGER
);
-- texts: the fts rows shared across runs (crossRun: injected text), by
-- their text's hash, kind, role and tool, through which a run finds the
-- row of an injected text another run has (texts_hash). Their ids are
-- their fts rowids, below 0 (from textBase up, never a document's id,
-- so that a row kept for other runs is never a new document's), and a
-- row lives while a document shares it: a run removed or read again
-- deletes the rows no other document names (removeTx, by docs_shared).
CREATE TABLE texts(id INTEGER PRIMARY KEY, thash INTEGER NOT NULL, kind INTEGER NOT NULL, role TEXT NOT NULL, tool TEXT NOT NULL);
CREATE INDEX texts_hash ON texts(thash);
-- docs_run: a run's documents (removeTx), by its call id a tool call's
-- (outcomeSQL), and by its text's hash the document of a grown run whose
-- fts row a new one shares (textRowSQL): one index for all three, the
-- call id '' for every document but a call waiting for its result.
CREATE INDEX docs_run ON docs(rid, call_id, thash);
-- docs_shared: the documents sharing another's fts row, by that row,
-- through which a match of the row finds them all (searchWhere) and a
-- run removed finds whether another still shares a row of texts; the
-- others (fid NULL) are not in it.
CREATE INDEX docs_shared ON docs(fid) WHERE fid IS NOT NULL;
CREATE INDEX runs_started ON runs(started DESC, run_id);
-- runs_project: the projects of the top-level runs (Projects) read from
-- the index alone, not from every row of runs.
CREATE INDEX runs_project ON runs(parent_run_id, project);
-- runs_partial: the runs whose last line was partial when read (size
-- -1), checked on every update.
CREATE INDEX runs_partial ON runs(size) WHERE size < 0;
-- superseded: runs whose content another run holds again (a sub-agent's
-- run of an interrupted step archived again, an interrupted archive of a
-- session archived whole elsewhere, a session's run ended before another
-- store's copy was archived), as src's transcript says
-- (lifecycle.SupersedesField, SupersededByField, SupersedesRunsField): search
-- leaves them and their sub-runs out.
CREATE TABLE superseded(run_id TEXT NOT NULL, by_run TEXT NOT NULL, src TEXT NOT NULL);
CREATE INDEX superseded_src ON superseded(src);
-- sessions: the agent sessions a run's agent steps name, each once, by
-- their views.SessionKey (provider and session id); key '' says one of
-- its agent steps names none (views.RunHead.Sessions, Unkeyed). rebuilt:
-- the run a rebuild by twasm renormalize was made from
-- (views.RenormalizedFromField). With the runs' session column and the
-- superseded table they are what views.Superseded decides by (Held): a
-- run recorded from an agent's output whose sessions a run archived from
-- the agent's store holds, the original of a rebuild, are left out of
-- listings and searches as ls, stats and usage leave them out.
-- flags: what the rule asks of the run naming the session (sessRecorded:
-- a top-level run not archived from an agent's store; sessHolds: a
-- top-level run that may hold a recorded run's sessions, archived or a
-- rebuild), kept with the run's rows (refreshHeld) so that a session
-- named by many runs is not read whole; sessions_holds finds the runs
-- that may hold a session.
CREATE TABLE sessions(key TEXT NOT NULL, run_id TEXT NOT NULL, flags INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(key, run_id)) WITHOUT ROWID;
CREATE INDEX sessions_run ON sessions(run_id);
CREATE INDEX sessions_holds ON sessions(key) WHERE flags & 2;
CREATE TABLE rebuilt(run_id TEXT PRIMARY KEY, from_run TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX rebuilt_from ON rebuilt(from_run);
-- held: the runs views.Superseded finds another stands for (Held), as
-- decided when the runs that decide it were indexed (refreshHeld), so
-- that a listing or a search reads this and no run.
CREATE TABLE held(run_id TEXT PRIMARY KEY) WITHOUT ROWID;
-- watch: the runs being written, as the change journal says (an open
-- entry, by its nonce, without its close), and runs found new in a
-- listing that no journal entry names (nonce 'list:' and the run id),
-- until they finish or the journal names them: checked on every update.
CREATE TABLE watch(nonce TEXT PRIMARY KEY, run_id TEXT NOT NULL);
-- fts holds the terms alone (content=''): a snippet and a hit's text are
-- cut from the transcript line (docs.off, docs.part); contentless_delete
-- lets a run read again leave it. tags holds one term per value of the
-- document's kind, role and tool (filterTags), so that a search filtered
-- by them finds its matches in FTS5 instead of reading every match of
-- its words from docs; a word that could match a tag is matched in text
-- alone (ftsExpr), and rank weighs tags 0, so they never score.
CREATE VIRTUAL TABLE fts USING fts5(text, tags, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO fts(fts, rank) VALUES('rank', 'bm25(1.0, 0.0)');
-- Merge segments 8 at a time, not 4: building a 1 GiB archive spent a
-- quarter of its time in automerge; searches were no slower.
INSERT INTO fts(fts, rank) VALUES('automerge', 8);
`

// Index is the search index of one storage root: a SQLite database built
// from the transcripts, which stay the source of truth.
type Index struct {
	db   *sql.DB
	root string
	// pending is the budget of FTS5's pending terms for this Index's
	// writes, in bytes (SetPendingKiB).
	pending int
}

// FTS5 gathers the terms of the documents a transaction inserts in
// memory, its pending terms, and writes them as a new segment of the
// index when they pass a budget (its hashsize) and at commit; the
// segments are merged, 8 at a time (automerge), into larger ones as
// they accumulate. A larger budget makes fewer, larger segments, so each
// term is merged fewer times, at the cost of the memory the terms take
// until they are written (FTS5's hash table: about twice the budget).
// A build of a 1 GiB archive (BenchmarkIndexBuild's, 42,224 runs;
// TestIndexChild, CPU of the child, 2 runs each in turn at a load of
// 8-12) took 9-10% less CPU with 4 MiB than with FTS5's default 1 MiB
// (26.4 and 25.6 s against 23.8 and 23.3 s) and 7.6 MiB more peak RSS
// (38.8 to 46.4 MiB); 8 MiB saved no more. So an index is written with
// pendingBytes, and a writer that runs beside other work that needs the
// memory (sync's live indexer, a command refreshing the index after it
// wrote runs) asks for less (SetPendingKiB).
//
// Other settings of a build from nothing measured against these
// (#31 goal 4; TestIndexChild on a 128 MiB archive of
// BenchmarkIndexBuild's kind, farm-bench --vs, 4-5 interleaved pairs,
// median ratio of the child's CPU): none is taken. FTS5's pgsz 8000
// 1.02x, automerge 16 1.00x, crisismerge 64 0.99x, remove_diacritics 1
// 1.04x, synchronous OFF 0.98x, a 16 MiB page cache 1.02x (+26 MiB
// RSS): noise. automerge 0 0.94x leaves the segments unmerged for
// every search to read, and an optimize at the end costs 1.11x.
// Transactions of 64 and 256 MiB 0.98x and 0.93-0.95x, but a writer
// waiting on the lock would wait that much longer (busy timeout 10 s).
// columnsize=0 is refused beside contentless_delete=1 (and bm25 needs
// the column sizes); detail=column would lose the positions that
// "quoted phrases" and NEAR need. Half of the CPU is FTS5's tokenizer
// and its hash of pending terms, a cost per token indexed.
//
// Measured since, the same way (5 pairs): FTS5's ascii tokenizer in
// place of unicode61 0.96x, so text split into tokens in Go, which
// FTS5 would still tokenize, could gain no more; SQLite pages of 16
// and 8 KiB 0.94x (+8 MiB RSS) and 1.05x; no FTS5 row at all 0.43x.
// The cost is FTS5's per token: with GODEBUG=asyncpreemptoff=1 (without
// it a fifth of the samples fall on runtime.asyncPreempt) the hash of
// pending terms (sqlite3Fts5HashWrite) is 20% flat, the tokenizer 10%.
// Fewer tokens is what is left. Leaving out of fts a text already
// indexed with the same kind, role and tool: within its run 0.92x
// (10.2% of the archive's tokens: system prompts sent again each turn;
// 0.85x on copies of three real sessions, Claude, Codex and Copilot,
// 17.1% of whose tokens repeat in their run), system prompts and
// injected context across the archive 0.83x (41% of its tokens), every
// text across the archive 0.49x (94.6% of its tokens repeat an earlier
// document: the archive is its inputs copied). Within its run is done
// since schema 12 (docs.fid: bm25 counts a run's repeated text once).
// Across runs, since schema 13, for injected text alone (crossRun:
// texts, docs.fid below 0; a row lives while a document shares it, and
// the rows shared across runs come after a run's own in RankAmong's
// newest, see doc.go): 0.867, 0.864 and 0.894x schema 12's CPU
// (TestIndexChild on a 256 MiB archive, perf stat task-clock, the two
// builds side by side, 3 rounds, load 44-58 on 2 cores: 14.5-15.8 s
// against 16.8-18.0 s). Tool outputs shared across runs as well:
// 0.72-0.74x, not taken: 95% of the archive's tool-output tokens
// repeat another run's because it is its inputs copied, where across
// its 595 distinct seed sessions 6.6% do, and a new session's output
// would count as old for RankAmong's newest. Measured on top of schema 12 (an experiment:
// one map of texts for the whole build, no lookup in the index, so not
// what an incremental build would share; farm-bench -n 7 --vs schema
// 12's build, 128 MiB archive): injected context and system prompts
// (origin set) shared across runs 0.80x (8,553 of 81,935 documents
// sharing a row, against 4,196 within their run; 1.88 s of CPU, 15.0
// cpu-s/GiB, against 2.31 s), every text 0.49x (77,213). What is left
// of a build's CPU at schema 12 (pprof, GODEBUG=asyncpreemptoff=1):
// FTS5's insert 41% (its hash of pending terms 27%, the unicode61
// tokenizer itself 6%), line decoding 13%, docs rows 12% (a third of
// it binding 64x15 values), syscalls 9%, commits 6% (segments, WAL
// checkpoints), allocation and GC 6%.
//
// detail=column (FTS5 keeps the columns a term is in, no positions),
// measured at schema 15 (TestIndexChild on a 256 MiB archive of
// BenchmarkIndexBuild's kind, 15,390 runs, the two builds in turn, load
// 17-24 on 2 cores): 0.85-0.98x the CPU, median 0.92x (4 pairs, 13.7 s
// against 15.3 s), and 0.90-0.92x by perf stat task-clock (3 rounds:
// 13.4-14.2 s against 14.6-15.7 s); an index of 0.73x the bytes (41 MB
// against 57 MB; fts_data 18 against 30 MB). So about 30 cpu-s/GiB where
// goal 4 asks for 15: the tokenizer and the hash of pending terms are
// paid per token whatever FTS5 keeps of it. Not taken, as it would cost
// the search its ranking: without positions FTS5 refuses a phrase of
// more than one token ("phrase queries are not supported (detail!=full)":
// a "quoted phrase", and a word it splits, main.go), which could be
// matched as its tokens and checked against each candidate's text
// (TestSearchPhrases says what must match), but bm25 scores every row 0
// on a contentless table: for a detail other than full, FTS5 finds a
// row's instances of a term by tokenizing the row's text again
// (fts5CsrPoslist), and a contentless table has none, so every term
// frequency is 0 and hits come newest first (TestSearchRanksByRelevance).
// On that archive "config" matched 5,463 rows with 173 distinct ranks,
// and one, 0, with detail=column; of 12 queries of one or two words
// (Limit 20), none kept its order and 0 to 11 of their hits were the same.
const (
	pendingBytes        = 4 << 20
	defaultPendingBytes = 1 << 20 // FTS5's own, stored again at commit
)

// Open opens (or creates) the index of a storage root. An index that is
// not a database, is damaged or has another schema version is deleted and
// created empty; rebuilt says why, for the caller to report. The next
// Update fills it from the transcripts.
func Open(ctx context.Context, root string) (ix *Index, rebuilt string, err error) {
	return openWith(ctx, root, migrations)
}

// openWith is Open with the migrations ms (tests give their own).
func openWith(ctx context.Context, root string, ms map[string]migration) (ix *Index, rebuilt string, err error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, "", fmt.Errorf("index: %w", err)
	}
	path := File(root)
	// The usual case, the index this twasm made, takes one connection.
	if ix := openCurrent(ctx, path, root); ix != nil {
		return ix, "", nil
	}
	// Whose file it is is decided before anything writes to it: SQLite's
	// first write (the journal mode) would change another database that
	// index.db links to.
	why, err := notOurs(ctx, path)
	if err != nil {
		return nil, "", err
	}
	if why != "" {
		if err := Remove(root); err != nil {
			return nil, "", err
		}
		if ix, err = open(ctx, path, root, ms); err != nil {
			return nil, "", err
		}
		return ix, why, nil
	}
	_, statErr := os.Stat(path)
	ix, err = open(ctx, path, root, ms)
	if err == nil {
		return ix, "", nil
	}
	if statErr != nil {
		return nil, "", err
	}
	reason := err.Error()
	if err := Remove(root); err != nil {
		return nil, "", err
	}
	ix, err = open(ctx, path, root, ms)
	if err != nil {
		return nil, "", err
	}
	return ix, reason, nil
}

// fileSuffixes name the index's files: index.db and what SQLite keeps
// beside it.
var fileSuffixes = []string{"", "-wal", "-shm", "-journal"}

// notOurs says why the file at path cannot be this storage's index,
// found without writing to it: a link (symbolic or hard: another file
// shares its bytes) or not a regular file, at index.db or at its -wal,
// -shm or -journal (SQLite writes a rollback journal before the WAL mode
// is set, and plays back and deletes a hot one it finds), or a database with tables and no index schema (read read-only,
// as an immutable file). "" when it may be the index (missing, empty,
// or with the index's schema, or content only in its WAL yet).
func notOurs(ctx context.Context, path string) (string, error) {
	if why, err := linked(path); why != "" || err != nil {
		return why, err
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return "", nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&tables); err != nil {
		return "index.db is not a database this twasm can read: " + err.Error(), nil
	}
	if tables == 0 {
		return "", nil
	}
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil {
		return "index.db is a database whose index tables missing (" + err.Error() + "): not this storage's index", nil
	}
	return "", nil
}

// linked says why index.db cannot be this storage's index by what its
// file and SQLite's beside it are (notOurs' first check), without
// opening any: a link or not a regular file. "" when each is missing or
// a regular file of its own.
func linked(path string) (string, error) {
	for _, suffix := range fileSuffixes {
		p := path + suffix
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("index: %w", err)
		}
		name := filepath.Base(p)
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			return fmt.Sprintf("%s was a symbolic link to %s, not this storage's index: the link is replaced, the file it names left as it is", name, target), nil
		case !st.Mode().IsRegular():
			return fmt.Sprintf("%s was not a regular file (%s), not this storage's index", name, st.Mode().Type()), nil
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
			return fmt.Sprintf("%s had %d hard links (another file shares its bytes), not this storage's index: it is replaced, the other names left as they are", name, sys.Nlink), nil
		}
	}
	return "", nil
}

// openCurrent opens the index at path on one connection when it is
// plainly this twasm's, of this schema: no link at index.db or beside it
// (linked), and a database whose meta says schemaVersion, read on the
// connection the Index then keeps before the journal mode, SQLite's
// first write, is set (WAL, as open sets it; the index has it already).
// Anything else (no file yet, another schema, damaged, foreign, a
// failed read) is nil with the connection closed and nothing written,
// and Open decides as it did before this: notOurs on a read-only
// connection of its own, then open, rebuilding what must be. A re-sync
// opened the index twice a sync for the projects it knows (8% of the
// CPU of a sync with nothing new).
func openCurrent(ctx context.Context, path, root string) *Index {
	if why, err := linked(path); why != "" || err != nil {
		return nil
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		return nil
	}
	// open's settings but the journal mode, which is set once the
	// schema is known: none of them writes.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-2000)&_txlock=immediate")
	if err != nil {
		return nil
	}
	db.SetMaxOpenConns(1)
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil || v != schemaVersion {
		db.Close()
		return nil
	}
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil {
		db.Close()
		return nil
	}
	return &Index{db: db, root: root, pending: pendingBytes}
}

func open(ctx context.Context, path, root string, ms map[string]migration) (*Index, error) {
	// Create the file 0600 before SQLite does (it would use the umask),
	// never through a link.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600); err == nil {
		f.Close()
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-2000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	db.SetMaxOpenConns(1)
	ix := &Index{db: db, root: root, pending: pendingBytes}
	if err := ix.init(ctx, ms); err != nil {
		db.Close()
		return nil, err
	}
	return ix, nil
}

func (ix *Index) init(ctx context.Context, ms map[string]migration) error {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v)
	switch {
	case err == nil && v == schemaVersion:
		return nil
	case err == nil && migrates(ms, v):
		return ix.migrate(ctx, ms)
	case err == nil:
		return fmt.Errorf("index schema %s, this twasm writes %s", v, schemaVersion)
	case !strings.Contains(err.Error(), "no such table"):
		return fmt.Errorf("index damaged: %w", err)
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return fmt.Errorf("index damaged: %w", err)
	}
	if n != 0 {
		return errors.New("index damaged: tables missing")
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("index: create: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('schema', ?)`, schemaVersion); err != nil {
		return fmt.Errorf("index: create: %w", err)
	}
	return tx.Commit()
}

// migrates reports whether the migrations ms lead from version v to this
// twasm's.
func migrates(ms map[string]migration, v string) bool {
	for range len(ms) {
		m, ok := ms[v]
		if !ok {
			return false
		}
		if v = m.to; v == schemaVersion {
			return true
		}
	}
	return false
}

// migrate brings the index to this twasm's schema version by ms, one
// migration after another, in one transaction: the version is read
// again once the write lock is held, so that an index another process
// migrated meanwhile is left as it is.
func (ix *Index) migrate(ctx context.Context, ms map[string]migration) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: migrate: %w", err)
	}
	defer tx.Rollback()
	var v string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil {
		return fmt.Errorf("index damaged: %w", err)
	}
	for v != schemaVersion {
		m, ok := ms[v]
		if !ok || !migrates(ms, v) {
			return fmt.Errorf("index schema %s, this twasm writes %s", v, schemaVersion)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("index: migrate %s to %s: %w", v, m.to, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema'`, m.to); err != nil {
			return fmt.Errorf("index: migrate %s to %s: %w", v, m.to, err)
		}
		v = m.to
	}
	return tx.Commit()
}

// Remove deletes the index of a storage root (the next Open creates it
// empty and Update fills it from the transcripts).
func Remove(root string) error {
	for _, suffix := range fileSuffixes {
		if err := os.Remove(File(root) + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

// Close closes the database.
func (ix *Index) Close() error { return ix.db.Close() }

// SetCacheKiB sets the page cache of the index's connection to kib KiB
// (SQLite's cache_size; Open's is 2,000 KiB): a connection that runs
// beside other work that needs the memory (sync's indexing while it
// archives) takes less, at the cost of reading pages again.
func (ix *Index) SetCacheKiB(ctx context.Context, kib int) error {
	if _, err := ix.db.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", max(kib, 1))); err != nil {
		return fmt.Errorf("index: cache size: %w", err)
	}
	return nil
}

// SetPendingKiB sets the budget of FTS5's pending terms for this
// Index's writes to kib KiB (Open's is 4 MiB; FTS5's own, 1 MiB): a
// writer that runs beside other work that needs the memory takes less,
// at the cost of merging more. The budget is set in each write
// transaction and FTS5's own stored again before it commits, so that
// another connection, which reads FTS5's settings from the database,
// keeps its own.
func (ix *Index) SetPendingKiB(kib int) { ix.pending = max(kib, 64) << 10 }

// IsCorrupt reports whether err says the database file is damaged (the
// caller deletes it and opens again: the transcripts rebuild it).
func IsCorrupt(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "malformed") || strings.Contains(s, "not a database") || strings.Contains(s, "corrupt") || strings.Contains(s, "index damaged")
}
