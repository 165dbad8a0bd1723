// Package recorder writes twasm transcripts: crash-safe, append-only JSONL
// files with one gap-free seq series per run, shared safely by goroutines
// and by processes, plus a live feed of the events to subscribers.
//
// # Model
//
// A [Recorder] owns one run file, <root>/transcripts/<run-id>.jsonl
// ([Store] lays the paths out; run ids are checked by [ValidRunID]). Each
// [Recorder.Record] call turns one transcript.Event into one line:
//
//  1. outside any lock: fill in the run id and a missing timestamp, mask
//     (opt-in [WithMask]), validate and encode with seq 0 into a pooled
//     buffer, so the expensive work runs in parallel across goroutines;
//  2. in one critical section (the recorder's mutex, and inside it the
//     advisory file lock flock(LOCK_EX)): fstat the file; if its size is
//     not the end we last wrote, another writer appended (or something
//     failed), so read the tail backwards to recover the last seq and
//     repair a torn tail; allocate seq = last + 1; splice it into the
//     line; write the line with exactly one write(2) on the O_APPEND
//     descriptor; release the file lock; publish the event to the
//     subscribers (non-blocking, package fanout);
//  3. fsync as the [FsyncPolicy] says, before returning.
//
// # Invariants
//
//   - Every complete line of the file is one valid event; seq starts at 1
//     and increases by exactly 1 per line in file order, across
//     goroutines, recorders and processes that use this package.
//   - The file only ever grows by whole lines (LF-terminated). A line is
//     never interleaved with another: it is one write(2) under the file
//     lock, O_APPEND puts it at the end.
//   - A failed or short write is undone (ftruncate back to the previous
//     end, under the lock) and consumes no seq; if the undo fails too, the
//     partial line is treated as a torn tail before the next append.
//   - Nothing is ever deleted. A torn last line (bytes after the last LF,
//     left by a writer killed mid-write or a failed undo) is repaired
//     before the next append, under the lock: its bytes are appended,
//     base64-encoded, as one JSON line to the sidecar <path>.torn (0600;
//     fields run_id, offset, bytes, line, reason, repaired_at,
//     data_base64), the sidecar is fsynced, and only then is the
//     transcript truncated to its last complete line. A crash between the
//     two steps leaves the bytes in both files (a duplicate in the sidecar
//     is possible, a loss is not). Every repair is returned by
//     [Recorder.Repairs] and logged as a warning: never silent. We chose
//     moving over truncating because a torn line may be the only record of
//     what a killed agent did, and over leaving it in place because
//     gluing the next line onto it would corrupt a complete event.
//   - Reopening a run continues the series from the last complete line.
//     Complete lines that are not events (foreign writers) are kept and
//     skipped when looking for the last seq.
//   - Subscribers see this recorder's events in seq order (drops leave
//     holes, never reorderings); events written by other processes are
//     not published here.
//   - Files are created 0600, directories 0700 (existing ones keep their
//     mode); the transcript is opened O_APPEND|O_CREATE|O_WRONLY (plus a
//     read-only descriptor for tail recovery), lines are UTF-8 and LF.
//
// # Concurrency contract
//
// Every method of Recorder is safe for concurrent use. Record calls are
// serialised by the critical section, so their seq order is the order in
// which they entered it; Record must not be given the same *Event from two
// goroutines at once, and the caller must not mutate an event during
// Record. Record writes ev.Seq, may set ev.RunID and ev.Timestamp, and the
// masker may rewrite strings in place. Subscribers receive shallow copies
// that share payloads with the recorded event: read-only. A Masker is
// called concurrently from Record callers. Close may race with Record:
// Records that enter the critical section after Close fail with
// [ErrClosed]. The ctx of Record bounds waiting for the file lock held by
// another process (it polls when ctx can be cancelled); waiting behind
// another goroutine of the same recorder is bounded by that goroutine's
// append. Several Recorders on the same file, in one process or many,
// coordinate through the file lock alone.
//
// # Threat model
//
//   - Hostile run id (from a CLI flag, a resume request, a file name):
//     [ValidRunID] accepts only the canonical lower-case UUID v4 spelling,
//     so an id cannot contain "/", "..", NUL or an alias of another run;
//     Store validates before building any path, and Open validates the id
//     it writes into every line.
//   - Hostile files in the storage directory (someone who can write
//     there): a symlink at the transcript or sidecar path is refused
//     (O_NOFOLLOW), a FIFO or device is refused without blocking
//     (O_NONBLOCK + regular-file check), a file of another run is refused
//     at open ([ErrRunMismatch]). Such a party can still truncate, rewrite
//     or delete files, or hold the lock forever: the recorder does not
//     defend data against a writer with the same file permissions, and
//     the advisory lock binds only cooperating writers. Directory
//     components above the file are followed as usual.
//   - Concurrent process (another twasm step on the same run): it takes
//     the same flock, so lines never interleave and seq stays gap-free;
//     its events are not published to this process's subscribers. A
//     process that does not use flock (or NFS without lock support) can
//     interleave lines and break the seq series: not supported.
//   - Crash or SIGKILL: the kernel drops the flock; the page cache keeps
//     every write that returned, so every acknowledged event survives a
//     process kill whatever the policy. A line being written may be torn
//     (rare: only big, multi-page lines can be cut by a signal); the next
//     open or append moves it to the sidecar. A power loss keeps what was
//     fsynced: every event with [FsyncAlways], completed steps with
//     [FsyncOnBoundary] (default), possibly nothing recent with
//     [FsyncNever].
//   - Full disk or I/O error: Record returns the error, the partial line
//     is truncated away and the seq is not consumed, so the series stays
//     gap-free and the caller may retry. A failed fsync is reported with
//     [ErrNotDurable] (the event is written and published). A repair that
//     cannot write the sidecar fails the append instead of discarding
//     the torn bytes.
//   - Hostile event content: the encoder escapes everything, so no string
//     can break out of its line; masking of secrets is opt-in (package
//     redact) and runs before anything is written.
package recorder
