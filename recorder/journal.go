package recorder

import (
	"log/slog"

	"github.com/twasm/twasm/internal/journal"
)

// journalWriter is a recorder's pair of entries in the change journal of
// its storage (internal/journal); nil for a transcript outside a
// storage's transcripts directory.
type journalWriter struct{ w *journal.Writer }

// beginJournal appends this writer's open entry, before its first write
// to the transcript at path. A journal that cannot be written is removed,
// so that the index checks every file: logged, never the recording's
// failure.
func beginJournal(path, runID string, log *slog.Logger) *journalWriter {
	dir := journal.DirOf(path)
	if dir == "" {
		return nil
	}
	w, err := journal.Begin(dir, runID)
	if err != nil {
		log.Warn("recorder: change journal not written: the search index will check every transcript", "err", err)
	}
	return &journalWriter{w}
}

// end appends the writer's close entry, after its last write.
func (j *journalWriter) end(log *slog.Logger) {
	if j == nil {
		return
	}
	if err := j.w.End(); err != nil {
		log.Warn("recorder: change journal not written: the search index will check every transcript", "err", err)
	}
}
