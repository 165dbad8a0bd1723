// Package recorder writes twasm transcripts: crash-safe, append-only JSONL
// files with one gap-free seq series per run, shared safely by goroutines
// and by processes, plus a live feed of the events to subscribers.
//
// A program writes a transcript with this package, directly or through
// lifecycle: [Open] (or [Store.Open]) a run's file with [Options] (zero
// value: the defaults), [Recorder.Record] events, [Recorder.Subscribe]
// to see them live, [Recorder.Close]. twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Model
//
// A [Recorder] owns one run file, <root>/transcripts/<run-id>.jsonl
// ([Store] lays the paths out; a run id must be the canonical
// spelling of a UUID v4, else [ErrInvalidRunID]). Each
// [Recorder.Record] call turns one transcript.Event into one line, and
// [Recorder.RecordBatch] a batch of events that are ready together into
// consecutive lines:
//
//  1. outside any lock: fill in the run id and a missing timestamp, mask
//     (opt-in [Options].Mask), validate and encode each event with seq 0 into
//     a pooled buffer, so the expensive work runs in parallel across
//     goroutines;
//  2. in one critical section (the recorder's mutex, and inside it the
//     advisory file lock flock(LOCK_EX)): unless the recorder already
//     holds the file lock (see "Lease" below), take it, fstat the file,
//     and if it grew beyond the end we last read or wrote, another writer
//     appended, so read those lines forward (updating the run state) and
//     repair a torn tail; refuse the append if the run has finished
//     ([ErrRunFinished]); allocate the seqs; splice them into the lines;
//     write all the lines with one write(2) on the O_APPEND descriptor;
//     publish the events to the subscribers (non-blocking: a full feed
//     drops the newest events, for that subscriber alone); keep the file
//     lock as a lease or release it;
//  3. fsync as the [FsyncPolicy] says, before returning (a batch is
//     synced when any of its events asks for it; the file's entry in its
//     directory is durable by the first one, see the threat model); the
//     file lock is released first, so other writers never wait for an
//     fsync.
//
// A single event is a batch of one; a batch costs one write(2).
//
// A transcript in a storage (<root>/transcripts/<run-id>.jsonl) has its
// writers noted in the storage's change journal (internal/journal),
// which the search index reads instead of checking every file: Open
// appends an open entry before the recorder's first write, Close a close
// entry after its last. A journal that cannot be written is removed (the
// index then checks every file) and logged, never the recording's
// failure.
//
// # Lease
//
// Invariant: while a recorder holds the file lock, no cooperating writer
// appends, so the file ends exactly where its own last write ended and
// its run state and last seq are the file's. A recorder therefore keeps
// the lock between critical sections (a lease) and skips the flock and
// fstat of the next ones: a stream of Records costs one write(2) each.
// The lease ends, and the next critical section takes the lock and reads
// what others appended as above, when the recorder has made no append
// for 1 to 2 ms (an idle timer ticks every millisecond while the lease is
// held and ends it at a tick that finds no append since the one before;
// a tick that finds one re-arms without taking the recorder's mutex, so
// appends never wait for it and read no clock for it), before an fsync,
// on any error, at Close, and when another writer waits: a recorder
// waiting for the lock sets a wait signal (an OFD read lock on one byte
// at offset 2^62, which no data lock and no flock meets), and the holder
// looks for it at the end of the first critical section after each tick
// (about every millisecond while it appends), releases the lock, and
// lets the waiter take it before it takes it again (waiting for the
// signal to go away, at most 50 ms; a waiter that did not come by then,
// a stopped one, is not waited for again for a second). Waiters poll the
// lock with a back-off capped at 1 ms. Where the system refuses OFD
// locks the lease is off: every critical section takes and releases the
// lock. A writer that takes the flock without setting the signal (a
// tool other than this package) waits until the holder pauses for 1 to
// 2 ms.
// [Recorder.RecordFunc] lets a caller decide what to write from the run
// state inside the same critical section (end the run once, close the
// steps still open).
//
// # Run state and checkpoints
//
// The recorder keeps the run's state as the whole file says it, from every
// writer (internal/runstate, which [Recorder.State] returns and
// [Recorder.RecordFunc] hands to package lifecycle: the first event, the run's name and parent, whether
// run.completed is in the file, the last seq, and the open brackets: every
// step.started and step.call_workflow.started without its completion). It
// updates it from its own appends, and from other writers' lines as it
// reads them. When a recorder is closed on an unfinished run it writes
// the state, with the offset and line count it holds for, to the
// checkpoint <path>.state (0600, replaced by rename); a finished run's
// checkpoint is removed. A writer also checkpoints every 64 MiB it
// appends, so that one killed in a long step leaves at most that much to
// read. Open starts from the checkpoint when it matches the file (same
// run, offset within the file at a line boundary, the line before it
// carrying the checkpoint's last seq) and reads only the lines after it:
// continuing or ending a run costs the same whether it holds 1 MB or
// 10 GB. Without a usable checkpoint (a run written before checkpoints,
// a deleted or stale one, which is logged) the whole file is read once.
//
// # Concurrency contract
//
// Every method of Recorder is safe for concurrent use. Record calls are
// serialised by the critical section, so their seq order is the order in
// which they entered it; Record must not be given the same *Event from two
// goroutines at once, and the caller must not mutate an event during
// Record. Record writes ev.Seq, may set ev.RunID and ev.Timestamp, and the
// masker may rewrite strings in place. Subscribers receive shallow copies
// that share payloads with the recorded event: read-only. [Options].Mask is
// called concurrently from Record callers. Close may race with Record:
// Records that enter the critical section after Close fail with
// [ErrClosed]. Waiting for the file lock held by another process polls
// (backing off to 1 ms), bounded by the ctx of Record and by
// [Options].LockTimeout ([ErrLockTimeout]); after [Options].LockWarnAfter
// (3 s by default) it logs a warning naming the holder (pid, command line, and
// "stopped" for a process stopped by SIGSTOP or Ctrl-Z, from /proc/locks
// and /proc/<pid>). Waiting behind another goroutine of the same recorder
// is bounded by that goroutine's append. Several Recorders on the same
// file, in one process or many, coordinate through the file lock alone.
//
// # Threat model
//
//   - Hostile run id (from a CLI flag, a resume request, a file name):
//     a run id is accepted only in the canonical lower-case UUID v4 spelling,
//     so an id cannot contain "/", "..", NUL or an alias of another run;
//     Store validates before building any path, and Open validates the id
//     it writes into every line.
//   - Hostile files in the storage directory (someone who can write
//     there): a symlink at the transcript, sidecar or checkpoint path is
//     refused (O_NOFOLLOW), a FIFO, socket or device is refused without
//     blocking (O_NONBLOCK + regular-file check, also by twasm's readers),
//     a file or a line of another run is refused
//     ([ErrRunMismatch]). The checkpoint is a cache, trusted only as far
//     as it matches the transcript (run id, offset at a line boundary
//     within the file, the seq of the line before it); one that does not
//     is ignored with a warning and the whole file is read. A checkpoint
//     forged to match can misstate the open steps, which only changes
//     what an end closes or names: such a party can as well truncate,
//     rewrite or delete the transcript itself, or hold the lock forever.
//     The recorder does not defend data against a writer with the same
//     file permissions, and the advisory lock binds only cooperating
//     writers. Directory components above the file are followed as
//     usual.
//   - Stopped or hung lock holder (SIGSTOP, Ctrl-Z, a debugger): other
//     writers wait, and say on the log after a few seconds which process
//     holds the lock; [Options].LockTimeout makes them fail instead. A
//     holder outside this pid namespace is named "another process". A
//     process stopped in a burst of appends holds its lease, so this is
//     likelier than with a lock per append; the handling is the same. A
//     stopped waiter keeps its wait signal: it costs a running holder
//     at most 50 ms each second.
//   - Concurrent process (another twasm step on the same run): it takes
//     the same flock, so lines never interleave and seq stays gap-free;
//     its events are not published to this process's subscribers. A
//     process that does not use flock (or NFS without lock support) can
//     interleave lines and break the seq series: not supported.
//   - Crash or SIGKILL: the kernel drops the flock; the page cache keeps
//     every write that returned, so every acknowledged event survives a
//     process kill whatever the policy. A line or batch being written may
//     be torn (rare: only big, multi-page writes can be cut by a signal);
//     the next open or append keeps its complete lines and moves the
//     partial one to the sidecar <path>.torn (and logs it). The checkpoint
//     of a killed writer is older than the file, never wrong: the next
//     opener reads from it. A power loss keeps what was fsynced: every
//     event with [FsyncAlways], completed steps with [FsyncOnBoundary]
//     (the default), possibly nothing recent with [FsyncNever]. Unless
//     the policy is FsyncNever, nothing is promised before the entries it
//     relies on are durable: Open makes each directory it creates durable
//     in its parent at once (an fsync of the parent, once per directory
//     created), and the file's own entry, whoever created the file, by
//     the file's first fsync: Open starts an fsync of its directory in
//     the background (a run's first promise, its first step's end, comes
//     later and so finds it done), and the first fsync that makes a
//     promise syncs the directory itself, right after the file, when that
//     one has not succeeded by then, before Record or Close returns (a
//     background sync that failed fails that promise with
//     [ErrNotDurable], even when the entry's sync there succeeds: a
//     failed fsync is reported only once); package
//     capture makes the raw captures a step names durable, entries
//     included ([Recorder.Fsync]), before the step's completion is
//     written: a transcript that survives a power loss never names a lost
//     file. A torn tail's sidecar is fsynced, with its entry, before the
//     transcript is truncated, whatever the policy.
//   - Full disk or I/O error: Record returns the real error (ENOSPC,
//     EIO), the partial lines are truncated away and no seq is consumed,
//     so the series stays gap-free and the caller may retry. A failed
//     fsync is reported with [ErrNotDurable] (the event is written and published). A repair that
//     cannot write the sidecar fails the append instead of discarding
//     the torn bytes.
//   - Hostile event content: the encoder escapes everything, so no string
//     can break out of its line; masking of secrets is opt-in
//     ([Options].Mask; twasm's --redact) and runs before anything is
//     written.
package recorder
