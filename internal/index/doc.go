// Package index is the search index of a storage root: a SQLite database
// (<storage>/index.db, pure-Go driver modernc.org/sqlite, FTS5) built from
// the transcripts, for everything that reads across runs (`twasm search`,
// and listings that would otherwise read every file).
//
// # Model
//
// One row per run (name, status, times, providers, models, project,
// counts, its errors counted as its documents are read), which List
// pages newest first by a key (start time, run id) so that a listing
// never reads a transcript nor a document, and one
// document per searchable piece of an event: each text, thinking, command
// and stream block of a message (tool_use and tool_result blocks are left
// to the tool events, so a call is found once), each tool.call (name,
// command, and its input's keys and values, strings unescaped, one a
// line: file paths are in it; a value that repeats the command is left
// out, toolCallText) and tool.result (output, error),
// and the errors of steps and runs. A document knows its run (by the
// run's number in the index, runs.rid, kept while the run is there: the
// run id's 36 bytes of text in every document and in its indexes were
// an eighth of the index), seq, step path, iteration, time, kind, role and
// tool name, and where its text is: the offset of its transcript line
// and its place among the line's documents (docsOf); a tool call, its
// call id until its result comes (by which the result finds it and
// gives it its outcome; then cleared, as nothing reads it: the ids were
// 82 KB of BenchmarkStoreSize's 2,363 KB index; an older index keeps
// settled calls' ids, which no lookup reads either). The text (up to
// 1 MiB) is tokenized into a contentless FTS5 table, which keeps the
// terms and no copy of the text (0.99x the transcripts' bytes with one,
// 0.33x without, on a 128 MiB benchmark archive; on the 64 MiB one,
// 0.33x before schema 10 and 0.26x since): a hit shown is read back
// from its line, checked to hold the seq indexed (a transcript
// rewritten since leaves the hit out until the next update), and its
// snippet cut there, the matches marked by FTS5's token rules (tokens).
// The table keeps every term's positions (detail=full), which a "quoted
// phrase" and a word FTS5 splits (main.go) are matched by, and bm25
// counts a term's instances by (TestSearchPhrases,
// TestSearchRanksByRelevance): with detail=column a build took 0.92x
// the CPU and its index 0.73x the bytes, but on a contentless table
// bm25 then scores every row 0 (it counts instances by tokenizing the
// row's text again), so it is not taken (see pendingBytes).
// Hits are folded by kind and a hash of the text (docs.thash), so that
// only the hits shown are read. Each FTS5
// row also has a tags column, one term per kind, role and tool of its
// document (filterTags: zq, a letter and the value in hex), which a
// search filtered by them matches beside its words (ftsExpr) when its
// words may match more documents than are ranked, so that FTS5 leaves
// out what the filter does not keep before any document is read (a
// common word among the user's messages read every match from docs). A
// word is matched in the text column alone when it could match a tag,
// rank gives tags a weight of 0, and the filters are still applied to
// docs: the tags narrow the work, never the answer.
//
// A run's texts are indexed once each: a document whose text, kind,
// role and tool an earlier document of its run has (context injected
// again, a system prompt sent with every turn, a tool's output
// repeated: by the text's hash, docs.thash) has no fts row of its own
// and shares that document's (docs.fid, found through docs_shared), so
// that bm25 counts the text once per run: in how many rows a word is,
// how many rows there are, and their mean length. Every document is
// still a hit of its own (its step, time, outcome, place; folded as
// before), and a match of a row is a match of each document sharing it.
// The rule is the run's alone: a run indexed as it grew shares the rows
// a run read whole would (a text not met in the part being read is
// looked up by its hash in docs_run, which holds it for that: reading
// the run's rows instead took a grown run of 20,000 documents from 2 to
// 25 ms an update), and a run removed or read again takes its rows
// along. A build took 0.94-0.98x the CPU (TestIndexChild on a 128 MiB
// BenchmarkIndexBuild archive, 5.1% of whose documents repeat in their
// run) and its index 0.92x the bytes (0.95x with thash in docs_run).
//
// An injected text (a system prompt, injected context: crossRun, the
// documents search ranks below the rest) is indexed once for the whole
// index: every run's document with that text, kind, role and tool
// shares one fts row, noted in the texts table (found by the text's
// hash, texts_hash; docs.fid below 0), so that bm25 counts the
// instructions sent in every session once, as it counts a run's
// repeated text once. The rule is the text's alone: a build from
// nothing, in any order, and one made as runs grew share the same rows.
// Every document is still a hit of its own (its run, step, time,
// outcome), filtered by its own fields. A row lives while a document
// shares it: a run removed or read again deletes the rows of texts no
// other document shares (removeTx, through docs_shared: the documents
// count the row's users, no count to keep), and keeps the others. The
// rows of texts are numbered below 0 (from textBase up), never a
// document's id, so that a row kept for other runs is never a new
// document's (documents are numbered from the largest id, which a run
// removed may have held). Any other text keeps a row per run: a new
// session's answer that repeats an old one must count as new for the
// newest ranked (below), and a shared row is told by its number. A
// build took 0.86-0.89x the CPU of schema 12's (TestIndexChild on a
// 256 MiB BenchmarkIndexBuild archive, 36% of whose tokens are system
// prompts and 4.5% injected context; see pendingBytes).
//
// Hits are ranked by FTS5's rank (bm25), which SQLite computes for every
// match before the first row: a word in 200,000 messages took 0.3 s of
// CPU for a page of 50. So a query whose words and filters match more
// documents than Query.RankAmong (DefaultRankAmong, 2,000) and that asks
// for fewer rows ranks only the newest that many, by fts row (a
// document's own row is its id, the order the index read them): the
// rows a run owns come first, newest first, then the rows shared across
// runs (texts, below 0: injected text, which ranks below the rest
// anyway), newest first, however new the runs that share them, so a
// bounded ranking spends its budget on what a person or the model wrote
// (TestSearchRanksSharedAcrossRunsLast). Its first page is one FTS5 statement
// (newestRanked): the matches of its words, tags and filters read in
// FTS5's order of ids, newest first, each with its rank, up to the
// (RankAmong+1)th; the newest RankAmong of them (all, when fewer match;
// a shared row that bound falls within is ranked with all its
// documents) are put in the ranked order here, and the rows a page
// reads are read whole by their ids. FTS5 merges the lists of every term a prefix word
// ("test" finds tests, testing) starts, again for each statement that
// matches it and for bm25's weights: this was three statements (the
// words' newest alone, the same with the filters, then the ranking),
// and the merging most of a search's CPU. The scores are bm25's over the
// whole index; only the set ranked is bounded, and Results.RankedAmong
// says so, which twasm search and serve's page tell the user. A query
// matching fewer documents, or asking for as many rows (twasm search
// without --limit), ranks every match as before.
//
// A page of hits after the first starts from the Cursor the page before
// ended at (Results.Next, Query.From): its last row's order key (the
// order is total: injected, rank, time, document id), the range of ids
// the first page ranked and the newest id then. The next page ranks the
// same matches in one statement (searchSQL, sorted by SQLite in the
// order the first page sorted them) and skips the rows up to the cursor
// by their keys,
// folding into what the pages before showed, so that it costs what the
// first did and the pages together are the hits of one query asking for
// all, in order, each once (while the index is unchanged: bm25's scores
// count the whole index).
//
// A run superseded by another, which holds again what it holds, is left
// out of searches and listings (List, unless ListQuery.Superseded) with
// its sub-runs, so that each thing said is found once and each session
// listed once: a sub-agent's run of an interrupted step archived again (the new
// link's step.call_workflow.started names it,
// lifecycle.SupersedesField), an interrupted archive of a session
// archived whole in another run (its run.completed names that run,
// lifecycle.SupersededByField), a session's run ended before another
// store's copy of the session was archived (the new run's run.started
// names it, lifecycle.SupersedesRunsField). The runs stay (view and tree show them
// as they are, ls --superseded and serve's ?superseded=1 list them); the
// superseded table notes what each transcript said. So are the runs
// views.Superseded finds by what no transcript says of another (Held),
// as ls, stats and usage leave them out: a run recorded from an agent's
// output (twasm record) whose every session a top-level run archived
// from the agent's store holds, and the original of a renormalize
// rebuild (or the rebuild, when the original's tree was written after
// it). The index notes what that rule reads of each run (the sessions
// its agent steps name, the sessions table; the run a rebuild was made
// from, rebuilt; whether it archives a session, runs.session), and
// applies views.Superseded itself (heldOf) as it indexes: each write
// transaction decides the rule again for every run its changes can
// concern (refreshHeld: the runs changed, those their rebuilds link
// them to, their ancestors, whose trees' times they are part of, and
// the runs naming a session whose holders changed, or which a recorded
// run and another came to name or stopped naming) and keeps the answer
// in the held table, which List and Search read (Held). The answer is
// the rule's, applied to the runs that decide it (TestHeldAfterUpdates:
// what a build from nothing holds, after every update), and a search
// no longer applies it to every run sharing a session with a recorded
// one (on 9,347 runs of BenchmarkSearchIndex's archive, 157 MiB, whose
// copies of the same recorded sessions all share them, a query took
// 179-204 ms of CPU doing so, and 21-27 ms since; grep -rlF 269 ms).
// ListQuery.Superseded and Query.Superseded list and find them too
// (ListedRun.Superseded marks them).
//
// Beside the search documents, a derived table caches what a command
// computes from each whole transcript (ls's listing line and stats'
// counts: views.RunDigest; usage's priced ledgers: usage.Ledger, under a
// kind naming the price table's digest; as JSON the command defines, see
// Derived),
// keyed by the file's size and mtime and checked against the file on
// every use, so `ls`, `stats --all` and `usage` read only the runs that
// changed and answer what reading every file answers (DerivedOf does it
// for some runs, a page of serve's listing, and keeps the others'
// entries). Derived stats every file; DerivedCurrent, for a caller that
// has just run Update (usage's ledgers), takes each file's size and mtime
// from the runs table, as the documents are checked: by the journal,
// stat'ing only the runs being written and those the index does not know.
//
// # Invariants
//
//   - The transcripts are the source of truth; the index is derived. Delete
//     index.db and the next Update builds it again. An index that is not a
//     database, is damaged or has another schema is deleted and rebuilt,
//     and Open says why; an earlier schema that differs from this one by
//     its SQL indexes alone is migrated in place instead, in one
//     transaction (migrations: none today, since schema 15 keeps what
//     Held decides (held, sessions.flags), which 14 decided on every
//     search, and needs a rebuild, as 14's reading of what 13 did not
//     read of every run did, and 13's change of what goes into fts,
//     and 12's, 11's and 10's). Whose file index.db is is decided
//     before anything writes to it: a link (symbolic or hard) at
//     index.db or at its -wal or -shm, or a database holding other
//     tables (read read-only, as an immutable file), is not the index:
//     the link is replaced and the file it names left as it is (SQLite's
//     first write, the journal mode, would otherwise change another
//     database). The usual case takes one connection (openCurrent: no
//     link, and meta read on the connection the Index keeps says this
//     schema, before the journal mode is set); anything else closes it,
//     having written nothing, and is decided as above, on a read-only
//     connection of its own.
//   - Update learns what changed from the storage's change journal
//     (internal/journal: every recorder notes when it opens and closes a
//     run's transcript), read from the position the index keeps (meta:
//     journal_off, journal_tail), not by a stat of every transcript. It
//     checks the runs the entries name, the runs being written (watch: an
//     open entry without its close; a run found new in a listing that no
//     entry names, until it finishes; a run whose last line was partial),
//     and lists the transcripts directory (names, no stat) when its mtime
//     moved since the last listing (a recent mtime is not trusted: the
//     next update lists again), for runs added or removed by any writer.
//     Truth first: the journal is read before the files, so a write not
//     seen has its close entry after the position kept; a journal that
//     does not continue that position (missing, cut by a crash, rewritten,
//     a line that does not parse) or an index that never read it makes
//     Update check every file (Check, `twasm index --check`, does always:
//     for a tool that appends to a transcript without the journal). The
//     position is committed with the files it covers; a journal past
//     1 MiB read to its end is replaced by an empty one (journal.Compact).
//   - A file checked whose size and mtime are what the index saw is
//     skipped; grown, read from the offset where indexing
//     stopped once the line ending there still holds the seq indexed;
//     anything else (rewritten, shrunk, replaced), read again from the
//     start, as is a grown file whose new lines hold a revised call or
//     result (transcript.RevisedField: a new version of an earlier one,
//     which a settled call's documents, their call id cleared, cannot be
//     found by): read whole, a revised call is no call more (runs.tools)
//     and its documents join the call's, and a revised result gives the
//     call's documents and its earlier results' its outcome in place of
//     the earlier one (runs.errors counts the failed calls left). Only
//     complete lines are indexed: a line being written is
//     read next time. What the index holds of a file is read again once
//     the write transaction is open (another process may have indexed
//     it meanwhile), so that a file is never indexed twice and a run's
//     documents carry the run's number. Files are indexed in
//     transactions of up to 32 MiB of transcript (a file is never split
//     between two): a crash leaves the index as it was before the
//     transaction, files and run rows together. FTS5 flushes its
//     pending terms into a segment once per transaction: no statement
//     the writer runs may change several rows and abort (a tool call
//     takes its result's outcome by document id; a run's row is saved by
//     an upsert on its number, not INSERT OR REPLACE), since such a
//     statement opens a savepoint, at which FTS5 flushes them. Documents
//     go into docs 64 by one statement (a statement each was a sixth of
//     a build) that cannot abort: OR FAIL, the ids given by SQLite, and
//     checked to be those of their texts in fts (numbered before, in
//     the order read); a call whose result comes before its row is
//     written goes in with its outcome.
//   - UpdateRuns does the same for given runs and the child runs their
//     lines link to (child_run_id, checked to be a run id before it
//     becomes a path), so a command that wrote a run pays for that run,
//     not for the whole storage (record, only when it creates the index;
//     sync's live indexer, 64 runs at a time): what the index saw of each
//     is read by its run id, never the list of every run; other runs are
//     checked by the next Update.
//   - Memory does not grow with the archive: files are streamed line by
//     line, each line decoded on its own into the fields indexed (the
//     same documents transcript.DecodeEvent would give, which a test
//     checks): read from its JSON tape (wire.BuildTape) as json.Unmarshal
//     would read it, or by json.Unmarshal when it holds what twasm does
//     not write (lineDecoder), SQLite's page cache is bounded (2 MiB:
//     import, sync and the readers refresh the index in their own
//     process, and 16 MiB doubled record's peak RSS while building no
//     faster) and so is FTS5's buffer of
//     pending terms: 4 MiB for an Index as Open gives it (the commands
//     that read the index, and build it when it is missing: fewer,
//     larger segments, merged fewer times, 9-10% less CPU for a 1 GiB
//     archive than FTS5's default 1 MiB, for 8 MiB more RSS), 1 MiB for
//     a writer beside other work (sync's live indexer and the refresh
//     of a command that wrote runs: SetPendingKiB). The budget is set
//     in each write transaction and FTS5's own stored again before it
//     commits: FTS5 keeps its settings in the database, for every
//     connection.
//   - Several processes may use one index: SQLite's locks and WAL
//     serialise writers (busy timeout 10 s).
//
// # Threat model
//
// Transcript content is untrusted text: it reaches SQLite only as bound
// parameters, never as SQL. A search query is quoted word by word into an
// FTS5 expression unless the caller asks for raw FTS5 syntax.
package index
