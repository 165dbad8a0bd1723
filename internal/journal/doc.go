// Package journal is the change journal of a storage's transcripts: an
// append-only file, <storage>/transcripts/.journal, where every writer of
// a transcript says which run it writes, so that the search index learns
// what changed by reading the journal from where it stopped instead of
// checking every transcript.
//
// # Model
//
// A writer (the recorder, whatever command or library drives it: record,
// sync, import, renormalize, run begin) appends one line when it opens a
// run's transcript and one when it closes it, each with a nonce of its
// own that pairs them:
//
//	o <run-id> <nonce>
//	c <run-id> <nonce>
//
// The reader (package index) keeps the position it has read up to and the
// last line before it ([Pos]); each read returns the entries after it.
// A run with an open entry and no close is being written: the reader
// checks its file every time until the close comes.
//
// # Invariants
//
//   - Order: a writer appends its open entry before its first write to
//     the transcript, and its close entry after its last. A reader reads
//     the journal before it looks at the files, so a write that the
//     reader did not see has its entry (the writer's close) at or after
//     the position the reader keeps, and the next read finds it.
//   - Continuity: a read continues from a position only when the journal
//     still holds the line that ended there (same bytes: every line has a
//     random nonce). A journal that is missing, shorter, rewritten, or
//     holds a line that does not parse is not continued ([Read] says so):
//     the reader checks every file instead, and reads the whole journal
//     for the runs still open.
//   - A writer that cannot append removes the journal (best effort), so
//     that the next reader checks every file rather than trust it.
//   - Appends are single write(2) calls of a short line on an O_APPEND
//     descriptor, under a shared flock of the transcripts directory (and
//     of the file); [Compact] takes the directory's and the file's
//     exclusive flocks without waiting (a busy lock means no compaction
//     this time), and replaces the journal with an empty one only when
//     it is not empty and nothing was appended since the reader's
//     position. A writer therefore never finds the file it opened
//     replaced by this version's compactor; it still compares its file
//     with the path's after locking and writes again to the new one, for
//     an older twasm's compactor, which locked only the file.
//
// # Threat model
//
// Someone who can write the storage can forge or delete the journal: a
// forged entry costs a check of a file; a deleted or rewritten journal
// makes the reader check every file. Appending to a transcript without
// the journal (a tool other than twasm, an older twasm's record growing
// an existing run) is not seen until `twasm index --check`; a new
// transcript is, because the reader lists the directory when its mtime
// changes. The journal is opened without following links and without
// blocking on a FIFO.
package journal
