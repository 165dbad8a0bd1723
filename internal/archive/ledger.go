package archive

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// Entry is what the archive knows of one session run: where its bytes
// came from, how much of them the run holds, and the hash that proves a
// file still starts with exactly those bytes.
type Entry struct {
	RunID    string `json:"run_id"`
	Provider string `json:"provider"`
	// Head is the sha256 of the session's first complete lines (64
	// bytes at least): its content identity, whatever path the bytes are
	// found at.
	Head string `json:"head"`
	// Path, Size and ModTime are the source file as last seen: a file
	// whose size and mtime did not change is skipped without reading it.
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	// Offset is how many bytes of the source the run holds; SHA256 is the
	// hash of those bytes.
	Offset int64  `json:"offset"`
	SHA256 string `json:"sha256"`
	// Parts is the number of agent steps (one per sync that found new
	// bytes); Raw the run's raw capture (relative to the storage root).
	Parts int    `json:"parts"`
	Raw   string `json:"raw,omitempty"`
	// Redact is whether the parts were masked: a grown part is masked
	// the same way.
	Redact bool `json:"redact,omitempty"`
	// Closed is set once run.completed is written: the session can only
	// continue in a new run.
	Closed bool `json:"closed,omitempty"`
	// SupersededBy is the run that holds the session again, when this
	// run's run.completed says one does (lifecycle.SupersededByField): a
	// session file is never matched to such a run (a run whose raw
	// capture was damaged, archived again by `twasm sync --repair`).
	SupersededBy string `json:"superseded_by,omitempty"`
	// Seal marks an ended run of several parts whose raw capture is to
	// be sealed (rawfile.Seal): set in the same line as Closed, cleared
	// once the capture is sealed (or found not to need it). A ledger
	// loaded with it set finds a seal that a kill cut short (perhaps
	// leaving the partial copy beside the capture) or that a cancelled
	// sync skipped: the next sync seals it (Recover).
	Seal bool `json:"seal,omitempty"`
	// Pending marks an entry written before its run's step was: on load
	// it is checked against the transcript. Resume says what that part
	// was to do, so that a part interrupted by a kill is continued as its
	// command would have (see recover.go).
	Pending bool      `json:"pending,omitempty"`
	Resume  *Resume   `json:"resume,omitempty"`
	First   time.Time `json:"first,omitzero"`
	Last    time.Time `json:"last,omitzero"`
	Status  string    `json:"status,omitempty"`
	// Totals are the session's cumulative figures after the last part.
	Totals *Totals `json:"totals,omitempty"`
	// Facts are the facts lines (abi.SourceFacts) the run's raw capture
	// holds, each with the offset of the bytes it introduced: a part that
	// replays the earlier ones feeds them where they were.
	Facts []FactsAt `json:"facts,omitempty"`
	// Files is, for a session folder, what the run holds of each of its
	// files (FileState).
	Files []FileState `json:"files,omitempty"`
	// Parent is the run a sub-agent file's run is a child run of (its
	// session's: abi.Store.SubAgents).
	Parent string `json:"parent_run_id,omitempty"`
	// LooseAt, for a sub-agent file's child run linked at its session's
	// latest part because the session's records did not name its call
	// yet (abi.Store.SubAgentCalls: Gemini CLI records a call once it
	// completed, so a sub-agent's chat synced while its call ran is
	// linked before the call is), no result of its run named the file yet
	// (abi.Store.SubAgentResult: Kimi Code's foreground Agent call), or
	// no call of its run stated the prompt
	// the file starts with yet (abi.Store.SubAgentPrompt: the Kimi CLI
	// writes a Task call to the session's file once its sub-agent has
	// answered), is the number of parts the session's
	// run had when the call was last looked for: a sync that finds the
	// session's run with more parts looks again (looseOf), and once the
	// session's run holds the call the file is archived again, whole,
	// as a child run linked at the call, superseding this one. 0
	// otherwise; a ledger rebuilt from the transcripts has lost it (such
	// a run stays where it is linked).
	LooseAt int `json:"loose_at,omitempty"`
	// Also are the other files found holding the start of the session
	// (the file it was first synced from before it moved on, a copy of
	// it, a copy made before it grew), most recent first, at most
	// maxAlso: a file whose size and mtime are those seen, or that holds
	// exactly the bytes noted, is already archived in this run.
	Also []Seen `json:"also,omitempty"`
}

// Seen is a file found holding the first Offset bytes of a run's
// session, whose hash is SHA256, with its size and mtime then.
type Seen struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	Offset  int64  `json:"offset"`
	SHA256  string `json:"sha256"`
}

// maxAlso bounds Entry.Also.
const maxAlso = 8

// moveTo notes that the session is now read from path: the file it was
// last read from, when another, becomes one of its copies (it holds the
// bytes it held then), and path is no longer one.
func (e *Entry) moveTo(path string, size, mtime int64) {
	if e.Path != path && e.Path != "" && e.Size >= 0 {
		also := []Seen{{Path: e.Path, Size: e.Size, ModTime: e.ModTime, Offset: e.Offset, SHA256: e.SHA256}}
		for _, s := range e.Also {
			if s.Path != path && s.Path != e.Path && len(also) < maxAlso {
				also = append(also, s)
			}
		}
		e.Also = also
	} else if i := slices.IndexFunc(e.Also, func(s Seen) bool { return s.Path == path }); i >= 0 {
		e.Also = slices.Delete(slices.Clone(e.Also), i, i+1)
	}
	e.Path, e.Size, e.ModTime = path, size, mtime
}

// Resume is what a part being written was to do: read the file whole or
// up to its last complete line, end the run after it, with which format
// hint, and for a store that asked for facts lines, which store.
type Resume struct {
	Format string `json:"format,omitempty"`
	Whole  bool   `json:"whole,omitempty"`
	End    bool   `json:"end,omitempty"`
	Store  string `json:"store,omitempty"`
	Dir    string `json:"dir,omitempty"`
	Facts  bool   `json:"facts,omitempty"`
	// Project is the project the store's place names (Location.Project),
	// for the facts line of the part continued.
	Project string `json:"project,omitempty"`
	// SessionStart, for a session of a sections store, is the store's
	// start line prefix: the file is split again to continue it.
	SessionStart string `json:"session_start,omitempty"`
	// Held marks a run an import held open after its part for its
	// sub-agents' files ([Archiver.Hold]), kept on the entry (not
	// pending) until [Archiver.EndHeld] ends the run: a ledger loaded
	// with it set (the import was killed, or interrupted, before it ended
	// the run) finds the run interrupted, and the next sync or import
	// links the session's sub-agents' files found on disk into it, then
	// ends it as the import would have (Recover).
	Held bool `json:"held,omitempty"`
	// Supersedes is the run the first part of this run archives again
	// (fileLink.legacy: a sub-agent's file or a Roo Code sub-task linked
	// again at its call, or a file an older twasm archived as a session
	// of its own), which is ended, superseded by this run, once the part
	// is written. It is kept on the entry (not pending) until that run is
	// ended: a ledger loaded with it set (a sync or import killed between
	// the part and that end) notes the run ([Ledger.superseding]), and
	// the next sync or import ends the other first (Recover), so that the
	// session is never left live in both runs.
	Supersedes string `json:"supersedes,omitempty"`
	// Repair marks a Supersedes that is a run whose raw capture is
	// damaged, archived again by `sync --repair` (replace): it is ended
	// as the repair ends it ([Archiver.replaced]: its sub-agent files'
	// runs with it, each superseded by this run, whose sync archives
	// those files again as its child runs: orphanedOf).
	Repair bool `json:"repair,omitempty"`
	// link, for the first part of a sub-agent file's run, is where the
	// run is linked (not kept: once begun, the run names its parent).
	link *fileLink
	// subAgentOf, for the first part of a sub-agent file's run that
	// cannot be linked, is its session file: the run is named as that
	// session's sub-agent (not kept, as link).
	subAgentOf string
	// replace, for the first part of a run that archives again a run
	// whose raw capture is damaged (Repair), is that run: ended,
	// superseded by the new one, once the part is written (not kept).
	replace string
}

// FactsAt is a facts line fed before the source's bytes from At on.
type FactsAt struct {
	At   int64  `json:"at"`
	Line string `json:"line"`
}

// Ledger is the sync state: every session run by id, found by content
// (Head) and by source path. It is a cache of what the transcripts say
// (run.started's "source" and each part's result): lost or damaged, it is
// rebuilt from them. Its methods may be called from several goroutines
// (a sync archives sessions in parallel, each touching runs of its own).
// It holds a fixed-size record of each run in memory (entries) and reads
// an entry from its line in the file into a new Entry for every method
// that returns one.
type Ledger struct {
	mu    sync.Mutex
	path  string
	runs  *entries // records, the entries read from the file (ledger_store.go)
	lines int
	f     *os.File // appended to (nil: read-only)
	// rf reads the file's lines back (entries.lineAt); end is the
	// file's size, where the next line is appended; gen counts the
	// rewrites (compact), after which a line's offset is another.
	rf  *os.File
	end int64
	gen int
	// interrupted are the runs whose archive a killed sync or import
	// left unfinished, found on load: by run id.
	interrupted map[string]Interrupted
	// supersede are the runs found on load whose first part was written
	// and the run it archives again not yet ended (Resume.Supersedes):
	// by run id.
	supersede []string
	// unbegun are the child runs found on load whose link their parent's
	// transcript holds and whose own transcript was never begun (a kill
	// between the two): begun by the part that continues them, in the
	// same run (Interrupted.Unbegun).
	unbegun map[string]bool
	// lazy is set once a line was written without its fsync (putLazy):
	// Close syncs the file then. fileSync, when set (tests), replaces
	// the file's fsync.
	lazy     bool
	fileSync func(*os.File) error
}

// Interrupted is a run whose archive was interrupted: a part begun and
// never completed (its step still open, or the run begun with no part
// at all), or a run that was to end after its part and did not.
type Interrupted struct {
	// Entry is what the run's completed parts hold (Parts 0: none).
	Entry Entry
	// Open are the step brackets the transcript leaves open, Resume
	// what the interrupted part was to do (nil: not known, the ledger
	// was rebuilt), RawBytes and RawSHA256 what the last completed part
	// says the raw capture holds.
	Open      []string
	Resume    *Resume
	RawBytes  int64
	RawSHA256 string
	// Supersedes is the run the run's first part archives again
	// (Resume.Supersedes; a ledger rebuilt finds it in the transcripts,
	// SourceRef.Supersedes): once the run is settled, that run is ended,
	// superseded by it, or, when the run holds nothing, it is ended
	// superseded by that run (Recover).
	Supersedes string
	// Repair says Supersedes is a damaged run that the run archives
	// again (Resume.Repair, SourceRef.Repair).
	Repair bool
	// Unbegun says the run is a child run whose link its parent's
	// transcript holds and whose own transcript was never begun (a kill
	// came between the two, or while its first line was written): the
	// run is begun, under that link, by the part that continues it,
	// so that the link never names a run with no transcript and the
	// session is not linked a second time.
	Unbegun bool
}

// LedgerFile is the ledger's path under the storage root.
func LedgerFile(root string) string { return filepath.Join(root, "archive", "ledger.jsonl") }

// OpenLedger loads the ledger of the storage root, rebuilding it from the
// transcripts when it is missing or unreadable, and checking pending
// entries against their transcripts. rebuilt says which happened. A
// read-only ledger writes nothing (dry runs, doctor); Put fails on it.
func OpenLedger(root string, readOnly bool) (l *Ledger, rebuilt string, err error) {
	l = &Ledger{path: LedgerFile(root), runs: newEntries()}
	l.runs.lineAt = l.lineAt
	f, err := os.Open(l.path)
	var bad int
	if err == nil {
		l.rf = f
		bad, err = l.load(f)
	}
	defer func() {
		if err != nil {
			l.closeFiles()
		}
	}()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rebuilt = "no ledger yet"
	case err != nil:
		return nil, "", fmt.Errorf("ledger: %w", err)
	default:
		if bad > 0 {
			rebuilt = fmt.Sprintf("%d unreadable ledger line(s)", bad)
			l.runs = newEntries()
			l.runs.lineAt = l.lineAt
		}
	}
	tdir := filepath.Join(root, "transcripts")
	if rebuilt != "" {
		if err := l.rebuild(tdir); err != nil {
			return nil, "", err
		}
	}
	var settle []*Entry // the pending entries, and those an import held
	l.runs.each(func(s int32, r *rec) bool {
		if r.flags&(recPending|recResume) != 0 {
			if e := l.runs.get(s); e.Pending || e.Resume != nil && e.Resume.Held {
				settle = append(settle, e)
			} else if e.Resume != nil && e.Resume.Supersedes != "" {
				l.supersede = append(l.supersede, e.RunID)
			}
		}
		return true
	})
	for _, e := range settle {
		{
			tp := filepath.Join(tdir, e.RunID+".jsonl")
			ne, info, err := readTranscript(tp)
			if err != nil || ne == nil || ne.Parts == 0 && info.finished {
				if err == nil && ne == nil && !readOnly {
					removeUnbegun(tp)
				}
				if (err == nil && ne == nil || errors.Is(err, fs.ErrNotExist)) && e.Parent != "" && notExist(tp) && linksChild(tdir, e.Parent, e.RunID) {
					// A child run never begun whose parent links it:
					// kept, to be begun under that link.
					// Nothing of the file archived: looked at again,
					// its first bytes still to come (a part from 0).
					e.Size, e.Offset, e.SHA256 = -1, 0, sum(nil)
					l.noteUnbegun(e)
					if err := l.runs.put(e); err != nil {
						return nil, "", err
					}
					continue
				}
				l.runs.remove(e.RunID) // the run was never begun (or holds nothing and ended)
				continue
			}
			ne.Path, ne.Size, ne.ModTime, ne.Redact = e.Path, e.Size, e.ModTime, e.Redact || ne.Redact
			ne.Size = -1 // unknown how much of the file: look again
			// cut only for a pending entry: the part that wrote the
			// cancelled step did not complete (a step recovery closed
			// as cancelled is followed by the part that continued it,
			// or its entry is not pending).
			if info.interrupted(ne, e.Resume) || info.cut {
				ne.Resume = e.Resume
				l.noteInterrupted(ne, info, e.Resume)
			} else if e.Resume != nil && e.Resume.Supersedes != "" && ne.Parts > 0 {
				// Killed after the part that archives a run again was
				// whole and before the ledger noted it: that run is still
				// to be ended, superseded by this one (Recover).
				ne.Resume = &Resume{Supersedes: e.Resume.Supersedes, Repair: e.Resume.Repair}
				l.supersede = append(l.supersede, ne.RunID)
			}
			if err := l.runs.put(ne); err != nil {
				return nil, "", err
			}
		}
	}
	// The runs an older twasm left interrupted and dropped from its
	// ledger: looked for once per storage (the marker says it was done).
	marker := filepath.Join(filepath.Dir(l.path), orphansMarker)
	_, merr := os.Stat(marker)
	scan := rebuilt == "" && errors.Is(merr, fs.ErrNotExist)
	found := 0
	if scan {
		if found, err = l.findOrphans(tdir); err != nil {
			return nil, "", err
		}
	}
	// The ended runs a seal cut short left a copy beside without a mark
	// (a twasm before Entry.Seal, or a ledger rebuilt, which knows no
	// marks): looked for once per storage and after a rebuild, one stat
	// per ended run of several parts.
	sealMarker := filepath.Join(filepath.Dir(l.path), sealsMarker)
	_, serr := os.Stat(sealMarker)
	sealScan := rebuilt != "" || errors.Is(serr, fs.ErrNotExist)
	if sealScan {
		l.findUnsealed(root)
	}
	if readOnly {
		return l, rebuilt, nil
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return nil, "", fmt.Errorf("ledger: %w", err)
	}
	if found > 0 || rebuilt != "" || l.lines > 2*l.runs.len()+64 {
		if err := l.compact(); err != nil {
			return nil, "", err
		}
	}
	if scan || rebuilt != "" {
		if err := os.WriteFile(marker, []byte("looked for runs an older twasm left interrupted outside the ledger\n"), 0o600); err != nil {
			return nil, "", fmt.Errorf("ledger: %w", err)
		}
	}
	if sealScan {
		if err := os.WriteFile(sealMarker, []byte("looked for raw captures whose sealing was cut short outside the ledger's marks\n"), 0o600); err != nil {
			return nil, "", fmt.Errorf("ledger: %w", err)
		}
	}
	if err := l.openAppend(); err != nil {
		return nil, "", err
	}
	return l, rebuilt, nil
}

// openAppend opens the ledger's file to append to, and notes its size.
func (l *Ledger) openAppend() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("ledger: %w", err)
	}
	l.f, l.end = f, st.Size()
	if l.rf == nil {
		if l.rf, err = os.Open(l.path); err != nil {
			l.f.Close()
			l.f = nil
			return fmt.Errorf("ledger: %w", err)
		}
	}
	return nil
}

// lineAt reads the file's n bytes at off into buf (entries.lineAt);
// when the file ends before, those up to its end, and io.EOF. After
// Close the file is opened again for the read.
func (l *Ledger) lineAt(off int64, n int, buf []byte) ([]byte, error) {
	buf = slices.Grow(buf[:0], n)[:n]
	rf := l.rf
	if rf == nil {
		f, err := os.Open(l.path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		rf = f
	}
	m, err := rf.ReadAt(buf, off)
	if err != nil {
		return buf[:m], err // io.EOF: the file ends within
	}
	return buf, nil
}

// closeFiles closes the ledger's files.
func (l *Ledger) closeFiles() error {
	var err error
	if l.f != nil {
		if l.lazy {
			// The lines putLazy left to the next Put's fsync.
			err = l.syncFile(l.f)
			l.lazy = false
		}
		err = errors.Join(err, l.f.Close())
		l.f = nil
	}
	if l.rf != nil {
		l.rf.Close()
		l.rf = nil
	}
	return err
}

// load reads the ledger's lines from r, line by line, into l.runs
// (each run's record, a later line of a run replacing an earlier one,
// found again at its offset in r's file: decodeRecord): bad counts
// the lines that are not an entry, each counted in l.lines.
func (l *Ledger) load(r io.Reader) (bad int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	var off int64 // where the line read starts
	e := &Entry{} // each line's, noted before the next is read
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return bad, err
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		at := off
		off += int64(len(line))
		if line = bytes.TrimSuffix(line, []byte("\n")); len(line) > 0 {
			*e = Entry{}
			l.lines++
			// The run's record only: its entry is read from the line
			// when asked for, unless it is held packed, whole
			// (entries.putAt).
			ok := decodeRecord(line, e)
			if ok && l.runs.packs(e.RunID, len(line)) {
				*e = Entry{}
				ok = decodeEntry(line, e)
			}
			unique := ok
			if !ok {
				*e = Entry{}
				ok = json.Unmarshal(line, e) == nil
			}
			if !ok || e.RunID == "" {
				bad++
				continue
			}
			if err := l.runs.putAt(e, at, len(line), unique); err != nil {
				return bad, err
			}
		}
		if err != nil {
			return bad, nil
		}
	}
}

// removeUnbegun removes the transcript of a run a killed sync or import
// created and never began: a file without one complete line (no
// run.started), which holds nothing and would be read as a damaged
// transcript. Anything else is left as it is.
func removeUnbegun(path string) {
	f, err := regfile.Open(path)
	if err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	f.Close()
	if err != nil || bytes.IndexByte(b, '\n') >= 0 || len(b) == 1<<20 {
		return
	}
	_ = os.Remove(path)
}

// orphansMarker is the file (beside the ledger) that says the storage
// was searched once for session runs an older twasm left interrupted and
// dropped from its ledger (findOrphans).
const orphansMarker = "orphans-checked"

// sealsMarker is the file (beside the ledger) that says the storage was
// searched once for raw captures with a seal's copy left beside them
// that no ledger entry marks (findUnsealed).
const sealsMarker = "seals-checked"

// findUnsealed marks (Entry.Seal) the ended runs of several parts whose
// raw capture has a seal's copy beside it (rawfile.SealExt): a seal a
// kill cut short, which the next sync finishes (Recover). The mark is
// set in memory: the line that clears it once sealed is the first
// written.
func (l *Ledger) findUnsealed(root string) {
	var marked []*Entry
	l.runs.each(func(s int32, r *rec) bool {
		if r.flags&recSeal != 0 || !r.closed() || r.parts < 2 {
			return true
		}
		e := l.runs.get(s)
		if !sealDue(e) {
			return true
		}
		if rp, err := rawOf(root, e.RunID, e.Raw); err == nil {
			if _, err := os.Lstat(rp + rawfile.SealExt); err == nil {
				e.Seal = true
				marked = append(marked, e)
			}
		}
		return true
	})
	for _, e := range marked {
		_ = l.runs.put(e) // packed before: packs again
	}
}

// sealDue reports whether the raw capture of e's run is to be sealed
// (rawfile.Seal): the run has ended, and its parts each began a frame.
func sealDue(e *Entry) bool { return e.Closed && e.Parts >= 2 && e.Raw != "" }

// Unsealed returns the ended runs whose raw capture is marked to be
// sealed (Entry.Seal), by run id.
func (l *Ledger) Unsealed() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	l.runs.each(func(s int32, r *rec) bool {
		if r.flags&recSeal != 0 {
			out = append(out, *l.runs.get(s))
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out
}

// findOrphans adds the session runs of tdir that the ledger does not
// know and that are interrupted (unfinished, with a step open or no part):
// an older twasm dropped the pending entry of a run killed in its first
// part and archived the session again, leaving the run listed "running"
// for ever. They are settled as any interrupted run (Recover): most hold
// a session another run holds whole, and are ended as cancelled. Only
// the first line of a run the ledger knows nothing of is read, unless it
// is a session run.
func (l *Ledger) findOrphans(tdir string) (int, error) {
	ents, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	found := 0
	for _, d := range ents {
		id, ok := strings.CutSuffix(d.Name(), ".jsonl")
		if !ok || l.runs.slotOf(id) >= 0 || !d.Type().IsRegular() {
			continue
		}
		p := filepath.Join(tdir, d.Name())
		if !sessionRun(p) {
			continue
		}
		e, info, err := readTranscript(p)
		if err != nil || e == nil || e.Parts == 0 && info.finished || !info.interrupted(e, nil) {
			continue
		}
		e.Size = -1
		l.noteInterrupted(e, info, nil)
		if err := l.runs.put(e); err != nil {
			return found, err
		}
		found++
	}
	return found, nil
}

// sessionRun reports whether the transcript at p starts with the
// run.started of an archived session (one with a "source"), reading its
// first line only.
func sessionRun(p string) bool {
	f, err := regfile.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, 1<<20), 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return false
	}
	var head struct {
		Type    string `json:"type"`
		Payload struct {
			Source json.RawMessage `json:"source"`
		} `json:"payload"`
	}
	return json.Unmarshal(line, &head) == nil && head.Type == string(transcript.RunStarted) && len(head.Payload.Source) > 0
}

// compact rewrites the ledger with one line per run (temp file, rename).
func (l *Ledger) compact() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.path), ".ledger-*")
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	w := bufio.NewWriter(tmp)
	ids := l.runs.ids()
	at := make([]int64, len(ids)+1) // where each line starts, and the end
	for i, is := range ids {
		b, _ := json.Marshal(l.runs.get(is.slot))
		w.Write(b)
		w.WriteByte('\n')
		at[i+1] = at[i] + int64(len(b)) + 1
	}
	err = errors.Join(w.Flush(), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), l.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("ledger: rewrite: %w", err)
	}
	l.lines = len(ids)
	l.gen++
	// The entries are read from the new file from now on.
	rf, err := os.Open(l.path)
	if err != nil {
		// The old file, open still, holds the lines read.
		return fmt.Errorf("ledger: %w", err)
	}
	if l.rf != nil {
		l.rf.Close()
	}
	l.rf = rf
	for i, is := range ids {
		l.runs.moveTo(is.slot, at[i], int(at[i+1]-at[i]-1))
	}
	return nil
}

// rewrite compacts the ledger (one line per run, by run id) and goes on
// appending to the new file: after a sync whose workers appended their
// lines in whatever order they finished, the ledger's lines are in an
// order of their own.
func (l *Ledger) rewrite() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("ledger: opened read-only")
	}
	if err := l.compact(); err != nil {
		return err
	}
	old := l.f
	l.f = nil // not the old file, replaced: Put fails from now on unless opened
	err := l.openAppend()
	return errors.Join(err, old.Close())
}

// Put records e (a new or changed entry) durably. The line is written
// under the ledger's lock and synced outside it, so that the other
// workers of a sync read the ledger meanwhile (an fsync covers every
// line written before it; the entry is the ledger's once it is durable).
func (l *Ledger) Put(e *Entry) error { return l.put(e, true) }

// putLazy records e without syncing the ledger: for a line whose loss a
// crash may cost (the next sync does again what it says was done, and
// finds it done), made durable by the next Put's sync.
func (l *Ledger) putLazy(e *Entry) error { return l.put(e, false) }

func (l *Ledger) put(e *Entry, sync bool) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	f := l.f
	if f == nil {
		l.mu.Unlock()
		return errors.New("ledger: opened read-only")
	}
	at, gen := l.end, l.gen
	n, err := f.Write(b)
	l.end += int64(n)
	l.lazy = l.lazy || !sync
	if err != nil {
		if st, serr := f.Stat(); serr == nil {
			l.end = st.Size()
		}
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if sync {
		if err := l.syncFile(f); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines++
	if gen != l.gen {
		return l.runs.put(e) // the file was rewritten since: held in memory
	}
	return l.runs.putAt(e, at, len(b)-1, true)
}

// syncFile fsyncs the ledger's file f.
func (l *Ledger) syncFile(f *os.File) error {
	if l.fileSync != nil {
		return l.fileSync(f)
	}
	return f.Sync()
}

// Close closes the ledger file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeFiles()
}

// ByPath returns the entry last synced from path (an open run first).
func (l *Ledger) ByPath(path string) *Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.runs.pathSlot(path); s >= 0 {
		return l.runs.get(s)
	}
	return nil
}

// pathSeen is what a sync needs of the run last synced from a path to
// find its file unchanged: ByPath's entry without the copy of it (asked
// of every session of every sync).
type pathSeen struct {
	l           *Ledger
	slot        int32
	id          [16]byte
	uuid        bool
	size, mtime int64
	closed      bool
}

// runID and head are the entry's, made when asked (head read as the
// entry is then: the run's, whose head a sync never changes).
func (s pathSeen) runID() string {
	if s.uuid {
		return runid.FromKey(s.id)
	}
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.l.runs.runID(s.slot)
}

func (s pathSeen) head() string {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.l.runs.get(s.slot).Head
}

// seenAt is ByPath's entry's pathSeen (ok false: none).
func (l *Ledger) seenAt(path string) (s pathSeen, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	slot := l.runs.pathSlot(path)
	if slot < 0 {
		return s, false
	}
	r := &l.runs.recs[slot]
	return pathSeen{l: l, slot: slot, id: r.id, uuid: r.flags&recUUID != 0, size: r.size, mtime: r.mtime, closed: r.closed()}, true
}

// looseAt reports whether the run last synced from path (ByPath) is a
// sub-agent's run linked loose (Entry.LooseAt set), from its record:
// a sync asks it of every sub-agent file of a store that links them so,
// and reads the entry only for those.
func (l *Ledger) looseAt(path string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.runs.pathSlot(path)
	return s >= 0 && l.runs.recs[s].flags&recLoose != 0
}

// CopyAt returns the run that path is a copy of (Entry.Also) when the
// file's size and mtime are those seen of it then: its bytes are the
// run's start still. nil when path is none's copy, was touched since,
// or a run was last synced from it (ByPath).
func (l *Ledger) CopyAt(path string, size int64, mtime time.Time) *Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	slot, e := l.runs.alsoSlot(path)
	if slot < 0 || l.runs.pathSlot(path) >= 0 {
		return nil
	}
	for _, s := range e.Also {
		if s.Path == path && s.Size == size && s.ModTime == mtime.UnixNano() {
			return e
		}
	}
	return nil
}

// byRun returns the entry of a run (nil: none).
func (l *Ledger) byRun(runID string) *Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runs.byRun(runID)
}

// ByHead returns the runs whose session starts with the line hashed to
// head, longest first.
func (l *Ledger) ByHead(head string) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	for _, e := range l.runs.byHeadOf(head) {
		out = append(out, *e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset > out[j].Offset })
	return out
}

// each calls f with every entry (a copy), in no order, under the
// ledger's lock: f calls no method of the ledger.
func (l *Ledger) each(f func(e *Entry)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs.each(func(s int32, _ *rec) bool {
		f(l.runs.get(s))
		return true
	})
}

// where returns the entries (copies, in no order) for whose path and
// state f returns true, under the ledger's lock: f calls no method of
// the ledger. The paths are read from the file in one pass (entries.paths).
func (l *Ledger) where(f func(path string, closed bool) bool) []Entry {
	return l.whereOf(whereAll, f)
}

// Which runs whereOf asks f about: all, the open ones, or the open
// ones whose path the sync did not list (markListed), or any such.
const (
	whereAll  = 0
	whereOpen = 1 << iota
	whereUnlisted
)

// whereOf is where asking f only about the runs of which (whereOpen,
// whereUnlisted), whose paths alone are read.
func (l *Ledger) whereOf(which int, f func(path string, closed bool) bool) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	keep := func(r *rec) bool {
		return (which&whereOpen == 0 || !r.closed()) && (which&whereUnlisted == 0 || r.flags&recListed == 0)
	}
	l.runs.paths(keep, func(s int32, r *rec, path string) {
		if f(path, r.closed()) {
			out = append(out, *l.runs.get(s))
		}
	})
	return out
}

// markListed marks the runs last synced from the paths of sessions
// (ByPath's), and no other, as listed: where asks whereUnlisted's f
// about the others only, so that a sync that lists every file it
// archived reads no run's path to find those it did not.
func (l *Ledger) markListed(sessions []Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs.each(func(_ int32, r *rec) bool {
		r.flags &^= recListed
		return true
	})
	for i := range sessions {
		if s := l.runs.pathSlot(sessions[i].Path); s >= 0 {
			l.runs.recs[s].flags |= recListed
		}
	}
}

// Entries returns every entry, by run id.
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Entry, 0, l.runs.len())
	for _, is := range l.runs.ids() {
		out = append(out, *l.runs.get(is.slot))
	}
	return out
}

// rebuild reads every transcript's run.started and, for session runs,
// their parts.
func (l *Ledger) rebuild(tdir string) error {
	ents, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ledger: rebuild: %w", err)
	}
	var links [][2]string        // child run, the run it holds again
	repairs := map[string]bool{} // the runs that archive a damaged run again (SourceRef.Repair)
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			continue
		}
		e, info, err := readTranscript(filepath.Join(tdir, d.Name()))
		links = append(links, info.supersedes...)
		if info.repair && e != nil {
			repairs[e.RunID] = true
		}
		if err != nil || e == nil || e.Parts == 0 && info.finished {
			continue
		}
		e.Size = -1
		if info.interrupted(e, nil) {
			// What the part was to do is lost with the ledger: the
			// command that settles it continues it as it does its own.
			l.noteInterrupted(e, info, nil)
		}
		if err := l.runs.put(e); err != nil {
			return err
		}
	}
	// A sub-agent's file (or sub-task) archived again at its call, whose
	// run.started or link says it supersedes the run that held it, while
	// that run is still open: a kill came before its end
	// (Resume.Supersedes, lost with the ledger), which the next sync or
	// import makes (Recover), once. A run whose first part the kill cut
	// short is settled first: the run it was to supersede is noted with
	// it (Interrupted.Supersedes).
	for _, ln := range links {
		c, o := l.runs.byRun(ln[0]), l.runs.byRun(ln[1])
		// A damaged run a repair archives again may have ended before
		// (an import's): it is still to end superseded while no run
		// supersedes it.
		if c == nil || o == nil || o.Closed && !repairs[c.RunID] || o.SupersededBy != "" || c.Closed || c.Path != o.Path || c.RunID == o.RunID {
			continue
		}
		if it, ok := l.interrupted[c.RunID]; ok {
			it.Supersedes, it.Repair = o.RunID, repairs[c.RunID]
			l.interrupted[c.RunID] = it
			continue
		}
		if c.Parts == 0 || c.Pending {
			continue
		}
		c.Resume = &Resume{Supersedes: o.RunID, Repair: repairs[c.RunID]}
		if err := l.runs.put(c); err != nil { // listed as the ledger's own (OpenLedger)
			return err
		}
	}
	return nil
}

// SourceField is the run.started payload field naming the session a run
// archives; PartField is the agent step result field saying which bytes
// of it the step holds.
const (
	SourceField = "source"
	PartField   = "source"
)

// SourceRef is run.started's "source".
type SourceRef struct {
	Provider string `json:"provider"`
	Path     string `json:"path"`
	Head     string `json:"head_sha256"`
	// Continues names the closed run this one continues, for a session
	// that grew after its run had ended.
	Continues string `json:"continues,omitempty"`
	// Supersedes names the run this one's first part archives again
	// (Resume.Supersedes: a sub-agent's file or a sub-task linked again
	// at its call, or a file an older twasm archived as a session of its
	// own), which is ended, superseded by this run, once the part is
	// written: a ledger rebuilt from the transcripts finds the note
	// again here when a kill came before that end, whether or not the
	// run's link names the run (lifecycle.SupersedesField names the run
	// the log's copy of a Claude Code sub-agent made, when there is one).
	Supersedes string `json:"supersedes,omitempty"`
	// Repair says Supersedes is a run whose raw capture is damaged,
	// archived again whole by `sync --repair` (Resume.Repair): a ledger
	// rebuilt after a kill that came before that run's end ends it as
	// the repair would have.
	Repair bool `json:"repair,omitempty"`
}

// PartRef is a part's result "source": bytes [From, To) of the file at
// Path, and the sha256 of the file's first To bytes.
type PartRef struct {
	Path   string `json:"path"`
	From   int64  `json:"from"`
	To     int64  `json:"to"`
	SHA256 string `json:"sha256"`
	Redact bool   `json:"redact,omitempty"`
	// Totals are the session's cumulative figures after this part.
	Totals *Totals `json:"totals,omitempty"`
	// Rewritten says the part is a new version of a document the agent
	// rewrote in place (From is 0: the whole version was read); Changed
	// names what it changed of the earlier parts (messages, calls,
	// results), empty for a pure append.
	Rewritten bool     `json:"rewritten,omitempty"`
	Changed   []string `json:"changed,omitempty"`
	// Facts is the facts line (abi.SourceFacts) fed before the part's
	// bytes, when the plugin asked for one.
	Facts json.RawMessage `json:"facts,omitempty"`
	// Files is, for a session folder, what the run holds of each of its
	// files after this part; From and To are then offsets in the stream
	// of its parts (the bytes the plugin read, file lines included).
	Files []FileState `json:"files,omitempty"`
}

// factsBytes is a part's facts line as fed (nil: none).
func factsBytes(f json.RawMessage) []byte {
	if len(f) == 0 {
		return nil
	}
	return append(slices.Clone([]byte(f)), '\n')
}

// transcriptInfo is what readTranscript found of a session run beyond
// its entry: whether it ended, the step brackets left open, and the raw
// capture its last completed part names.
type transcriptInfo struct {
	finished bool
	// cut: the last part was interrupted before its bytes were all read
	// (a step completed cancelled with no result after the last part).
	cut       bool
	open      []string
	rawBytes  int64
	rawSHA256 string
	// supersedes are the runs that hold again what another run holds,
	// as the transcript says: the child runs its links name
	// (lifecycle.SupersedesField), and the run itself when its
	// run.started's source names one (SourceRef.Supersedes): run id and
	// the other's.
	supersedes [][2]string
	// repair: the run's run.started says the run it supersedes is a
	// damaged run it archives again (SourceRef.Repair).
	repair bool
}

// interrupted reports whether a run's archive was left unfinished: a
// step still open, no part at all, or a run that was to end after its
// part and did not. (A pending entry whose last part was cut short by an
// interruption is too: OpenLedger checks cut.)
func (t transcriptInfo) interrupted(e *Entry, resume *Resume) bool {
	if t.finished {
		return false
	}
	return len(t.open) > 0 || e.Parts == 0 || resume != nil && resume.End
}

// noteInterrupted notes e's run as interrupted. The entry stays pending
// until the run is settled: a compaction keeps it so, should this
// process die before it settles it.
func (l *Ledger) noteInterrupted(e *Entry, info transcriptInfo, resume *Resume) {
	e.Pending = true
	if l.interrupted == nil {
		l.interrupted = map[string]Interrupted{}
	}
	it := Interrupted{Entry: *e, Open: info.open, Resume: resume, RawBytes: info.rawBytes, RawSHA256: info.rawSHA256}
	if resume != nil {
		it.Supersedes, it.Repair = resume.Supersedes, resume.Repair
	} else if was, ok := l.interrupted[e.RunID]; ok {
		// Noted again (OpenLedger checks the entries a rebuild left
		// pending): what the rebuild found it superseding stays.
		it.Supersedes, it.Repair = was.Supersedes, was.Repair
	}
	l.interrupted[e.RunID] = it
}

// noteUnbegun notes e, a pending child run's entry, as interrupted
// before its run was begun (Interrupted.Unbegun).
func (l *Ledger) noteUnbegun(e *Entry) {
	if l.unbegun == nil {
		l.unbegun = map[string]bool{}
	}
	l.unbegun[e.RunID] = true
	l.noteInterrupted(e, transcriptInfo{}, e.Resume)
	it := l.interrupted[e.RunID]
	it.Unbegun = true
	l.interrupted[e.RunID] = it
}

// isUnbegun reports whether runID is a child run noted on load as never
// begun and not begun since.
func (l *Ledger) isUnbegun(runID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unbegun[runID]
}

// begun forgets that runID was never begun: its transcript exists.
func (l *Ledger) begun(runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.unbegun, runID)
}

// notExist reports whether nothing is at path.
func notExist(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// linksChild reports whether the transcript of run parent (under tdir)
// holds a link (step.call_workflow.started) to child run child.
func linksChild(tdir, parent, child string) bool {
	if runid.Valid(parent) != nil {
		return false
	}
	f, err := regfile.Open(filepath.Join(tdir, parent+".jsonl"))
	if err != nil {
		return false
	}
	defer f.Close()
	r := transcript.NewReader(f)
	for r.Next() {
		if ev := r.Event(); ev != nil && ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == child {
			return true
		}
	}
	return false
}

// Interrupted returns the runs whose archive a killed sync or import
// left unfinished, as found when the ledger was opened and not settled
// since, by run id.
func (l *Ledger) Interrupted() []Interrupted {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Interrupted, 0, len(l.interrupted))
	for _, it := range l.interrupted {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Entry.RunID < out[j].Entry.RunID })
	return out
}

// Superseding returns the entries of the runs found on load whose first
// part was written and the run it archives again not ended
// (Resume.Supersedes: a sync or import killed between the two) that
// still say so, by run id: the next sync or import ends that run
// (Recover).
func (l *Ledger) Superseding() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	for _, id := range l.supersede {
		if e := l.runs.byRun(id); e != nil && !e.Pending && e.Resume != nil && e.Resume.Supersedes != "" {
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.RunID, b.RunID) })
	return out
}

func (l *Ledger) isInterrupted(runID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.interrupted[runID]
	return ok
}

// settled forgets an interrupted run once it is settled.
func (l *Ledger) settled(runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.interrupted, runID)
}

// readTranscript reads what a transcript says about its session (nil
// when it is not a session run) and what else the recovery of an
// interrupted archive needs: the entry holds the completed parts only.
func readTranscript(path string) (*Entry, transcriptInfo, error) {
	var info transcriptInfo
	f, err := regfile.Open(path)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	r := transcript.NewReader(f)
	var e *Entry
	type key struct {
		path string
		iter int
	}
	open := map[key]int{}
	isStep := map[key]bool{}
	var order []key
	for r.Next() {
		ev := r.Event()
		if ev == nil {
			continue
		}
		if e == nil {
			p := ev.Step()
			if ev.Type != transcript.RunStarted || p == nil || p.Extra[SourceField] == nil {
				return nil, info, nil
			}
			var src SourceRef
			if json.Unmarshal(p.Extra[SourceField], &src) != nil {
				return nil, info, nil
			}
			e = &Entry{RunID: ev.RunID, Provider: src.Provider, Head: src.Head, Path: src.Path, First: ev.Timestamp, Parent: ev.ParentRunID}
			if src.Supersedes != "" {
				info.supersedes = append(info.supersedes, [2]string{ev.RunID, src.Supersedes})
				info.repair = src.Repair
			}
			continue
		}
		e.Last = ev.Timestamp
		k := key{ev.Path, ev.Iteration}
		switch ev.Type {
		case transcript.RunCompleted:
			e.Closed, info.finished = true, true
			if p := ev.Step(); p != nil && len(p.Extra[lifecycle.SupersededByField]) > 0 {
				_ = json.Unmarshal(p.Extra[lifecycle.SupersededByField], &e.SupersededBy)
			}
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			open[k]++
			order = append(order, k)
			if ev.Type == transcript.StepStarted {
				isStep[k] = true
			} else if p := ev.Step(); p != nil && ev.ChildRunID != "" && len(p.Extra[lifecycle.SupersedesField]) > 0 {
				var old string
				if json.Unmarshal(p.Extra[lifecycle.SupersedesField], &old) == nil && old != "" {
					info.supersedes = append(info.supersedes, [2]string{ev.ChildRunID, old})
				}
			}
		case transcript.StepCallWorkflowCompleted:
			if open[k] > 0 {
				open[k]--
			}
		case transcript.StepCompleted:
			if open[k] > 0 {
				open[k]--
			}
			p := ev.Step()
			if p != nil && ev.Path == "agent" && p.Status == transcript.StatusCancelled && len(p.Result) == 0 {
				// A part interrupted before its bytes were all read
				// (writePart: cut), which holds none of them.
				info.cut = true
			}
			if p == nil || len(p.Result) == 0 {
				continue
			}
			var res struct {
				Source *PartRef           `json:"source"`
				Raw    *transcript.RawRef `json:"raw"`
				Status string             `json:"status"`
			}
			if json.Unmarshal(p.Result, &res) != nil || res.Source == nil {
				continue
			}
			e.Parts++
			info.cut = false
			e.Facts = nextFacts(e.Facts, res.Source.Rewritten, res.Source.From, factsBytes(res.Source.Facts))
			e.Offset, e.SHA256, e.Redact, e.Status, e.Totals = res.Source.To, res.Source.SHA256, res.Source.Redact, res.Status, res.Source.Totals
			e.Files = res.Source.Files
			if res.Raw != nil {
				e.Raw, info.rawBytes, info.rawSHA256 = res.Raw.Path, res.Raw.Bytes, res.Raw.SHA256
			}
		}
	}
	if e == nil {
		return nil, info, r.Err()
	}
	steps := false // a step left open, not only a link to a child run
	for _, k := range order {
		if open[k] > 0 {
			open[k]--
			info.open = append(info.open, fmt.Sprintf("%s#%d", k.path, k.iter))
			steps = steps || isStep[k]
		}
	}
	if !steps {
		// Only links to child runs that are still open (a sub-agent's
		// session, which may grow): nothing a killed part left.
		info.open = nil
	}
	if e.Parts == 0 {
		// Begun, nothing archived: the session's first bytes are
		// still to come (a part from offset 0).
		e.SHA256 = sum(nil)
	}
	return e, info, nil
}
