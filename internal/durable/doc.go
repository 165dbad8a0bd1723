// Package durable makes the directory entries of a twasm storage survive a
// power loss: a file fsynced in a directory whose own entry (or the file's
// entry in it) was never fsynced can be lost whole after a crash, so a
// transcript that names it would name nothing.
//
// The rule its callers follow: after adding an entry to a directory (a new
// file or a new subdirectory), fsync that directory before the transcript
// line that relies on the entry is made durable. [MkdirAll] does it for
// the directories it creates (one fsync per directory created, none when
// everything existed); the caller syncs the directory of a file it
// creates ([SyncDir]). A nil sync function means no fsync at all (the
// recorder's FsyncNever).
package durable
