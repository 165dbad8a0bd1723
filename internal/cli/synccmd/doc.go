// Package synccmd implements `twasm sync` (archive every agent's native
// session stores into runs, once, growing a run as its session grows) and
// `twasm doctor` (which stores exist, what is not archived yet, and what
// an agent's retention will delete soon). The archive itself is package
// internal/archive. Sync first settles what a killed sync or import left
// unfinished (archive.Archiver.Recover) and prints it as any outcome;
// doctor names it. A part whose plugin understood none of its lines is
// said on stderr, as record and import say it, and makes sync exit 1.
// Doctor checks every session run's raw capture against its source
// (archive.CheckRaw) and reports each damaged run as an error; sync
// --repair archives those whose file holds their bytes again
// (archive.Archiver.Repair) and exits 1 when one is kept damaged. A
// repair killed at any step, its ledger kept or lost, is finished by
// the next sync, a plain one as much as a repair (archive.Archiver.Recover:
// the new run's run.started names the damaged run it supersedes,
// archive.SourceRef.Repair), so that every reader counts the session
// once; the e2e TestKilledRepair kills one at each step.
// Each session's outcome is printed as it comes and not kept
// (archive.Options.Streamed): a round's report holds its counts and its
// failures, so that what a first sync of a whole home holds until its
// archiving ends is the ledger, not a report of every session too; the
// archiver, ledger and all, is closed and dropped before the index
// catches up with the round.
//
// The search index is brought up to date after each round (the index's
// change journal: Options.Indexed). While a round archives, the runs it
// writes are indexed too, a batch at a time, on a goroutine of their own
// with a connection of their own (liveIndex), so that a first sync of a
// whole home builds its index beside the archiving rather than after it;
// that goroutine ends, its last batch committed, before the round's own
// update, which indexes what it left. Indexing never decides what is
// archived: an index that cannot be opened or written loses no run.
package synccmd
