// Package durable makes the directory entries of a twasm storage survive a
// power loss: a file fsynced in a directory whose own entry (or the file's
// entry in it) was never fsynced can be lost whole after a crash, so a
// transcript that names it would name nothing.
//
// The rule its callers follow, before every promise that relies on an
// entry (telling a caller a file is durable, writing a transcript line
// that names a file): the entry has been fsynced in its directory.
//
//   - A directory that many writers share (a storage's root,
//     transcripts/, raw/: made once per storage) is synced in its parent
//     as soon as it is made ([MkdirAll]); a writer that finds it existing
//     cannot tell whether its entry is durable, so its creator must not
//     wait.
//   - Any other entry (a new file, a run's raw directory) is gathered in
//     a [Dirs] and synced after the file's own fsync, right before the
//     promise ([Dirs.Sync]), not when it is made: on a journalling file
//     system (ext4) the file's fsync commits every metadata change made
//     before it, so the directory fsyncs that follow cost a cache flush,
//     where each one made before would be a journal commit of its own.
//     A writer with time to spare may sync an entry earlier, in the
//     background (the recorder syncs its transcript's from Open on, while
//     the run's first step works), and drop it from its Dirs once that
//     sync has succeeded; the promise never waits for it. An early sync
//     that failed is the promise's error even when the promise's own
//     sync of the entry succeeds: a failed fsync is reported once, so a
//     later success proves nothing.
//     A writer syncs the entries its promise relies on whoever made them
//     (another process may not have synced them yet, or been killed
//     before it did), except those an earlier promise already relied on.
//
// Correctness never rests on ext4's behaviour: every entry is fsynced, as
// POSIX asks; ext4 only makes the order cheaper. A Dirs without Fsync and
// a nil sync function mean no fsync at all (the recorder's FsyncNever).
package durable
