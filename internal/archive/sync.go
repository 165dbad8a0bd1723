package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Actions an Outcome reports.
const (
	ActionNew       = "new"       // a new run
	ActionGrown     = "grown"     // a part appended to the session's run
	ActionContinued = "continued" // the session grew after its run ended: a new run holds the new part
	ActionUnchanged = "unchanged" // nothing new (also: the same bytes at another path)
	ActionClosed    = "closed"    // the run was ended (session idle or deleted)
	ActionPending   = "pending"   // no complete line yet: next time
	ActionSkipped   = "skipped"   // not archived: another store's copy of the session is (keyed.go)
	ActionFailed    = "failed"
)

// Outcome is what happened to one session file.
type Outcome struct {
	Path     string `json:"path"`
	Provider string `json:"provider"`
	Action   string `json:"action"`
	RunID    string `json:"run_id,omitempty"`
	// Part is the zero-based part (step iteration) written.
	Part int `json:"part,omitempty"`
	// Bytes is how many bytes of the source were archived now.
	Bytes int64 `json:"bytes,omitempty"`
	// Status is the agent's status after this part.
	Status string `json:"status,omitempty"`
	// Reason says why, for unchanged, pending, closed and failed, and
	// what else a person must know (a file rewritten, a corrupt tail).
	Reason string `json:"reason,omitempty"`
	// Warnings are the part's step warnings (unmapped lines, dangling
	// calls, lines lost to a plugin fault).
	Unmapped int  `json:"unmapped,omitempty"`
	DryRun   bool `json:"dry_run,omitempty"`
	// Result is the part's step result, when a part was written.
	Result *transcript.AgentResult `json:"-"`
}

// PluginFunc resolves the normalizer for a provider.
type PluginFunc func(ctx context.Context, provider string) (capture.Plugin, error)

// Options configure an Archiver.
type Options struct {
	Store  recorder.Store
	Plugin PluginFunc
	// Declared lists the stores provider's plugin declares (nil: none
	// known): the settling of a run an import held open for its
	// sub-agents' files finds them on disk through them (SubAgentFiles).
	Declared func(ctx context.Context, provider string) []Declared
	Producer transcript.Producer
	Logger   *slog.Logger
	// Redact masks secrets in everything written (raw capture included).
	Redact bool
	// DryRun reports what would happen and writes nothing.
	DryRun bool
	// Whole takes a file as complete: its last line is archived even
	// without a final LF (import of saved files). Without it a tail
	// without LF is left for next time unless the file has not changed
	// for Settle (a session being written ends mid-line).
	Whole  bool
	Settle time.Duration
	// CloseIdle ends the run of a session whose file has not changed for
	// this long (run.completed, dated at its last event); 0 ends it at
	// once, a negative value never.
	CloseIdle time.Duration
	// CloseWrittenOnly applies CloseIdle only to a run a part was just
	// written to (import: the file given is complete), never to the open
	// run of a file found unchanged (sync's, still growing).
	CloseWrittenOnly bool
	// Now is the wall clock (tests).
	Now func() time.Time
	// Written is called with every run a part or a close was written to.
	Written func(runID string)
	// SQLiteLimit bounds each read transaction of one SQLite store's
	// database (default DefaultSQLiteLimit); sqliteAfterRead runs after each
	// session's rows are read, inside the read transaction, with the
	// reading's context (tests).
	SQLiteLimit     time.Duration
	sqliteAfterRead func(context.Context)
	// sqliteBatch, when positive, replaces DefaultSQLiteBatch (tests).
	sqliteBatch int
	// sectionsRead, when set, wraps the file a sections store's file is
	// read through (tests count the bytes read).
	sectionsRead func(io.ReaderAt) io.ReaderAt
	// sectionsWhole splits every sections file whole (tests compare).
	sectionsWhole bool
	// Workers is how many sessions SyncStores archives at once (0:
	// GOMAXPROCS).
	Workers int
	// Streamed has SyncStores give its outcomes to its progress
	// function only: Report.Outcomes keeps the failed and damaged ones
	// (which a summary names), while Counts and Bytes count them all. A
	// report that kept every outcome, each with its part's result, grew
	// by about 1 KiB a session until the sync ended (`twasm sync`, #31:
	// peak RSS at any size).
	Streamed bool
}

// Archiver archives session files into runs. The caller holds the
// archive Lock.
type Archiver struct {
	opts   Options
	ledger *Ledger
	// recovered is set once the interrupted archives found on load are
	// settled (Recover).
	recovered bool
	// sessions caches what linking sub-agents' files reads of their
	// session's run, by run and part count (sessionLinksOf), under
	// sessionsMu (a pointer: recover copies the Archiver).
	sessions   map[string]sessionLinks
	sessionsMu *sync.Mutex
	// held are the session files whose runs are kept open for their
	// sub-agents' files (Hold); shared by copies, as sessionsMu.
	held *heldRuns
	// named are the parts a sync archived whose results may name
	// sub-tasks (noteNaming, subtasks.go); shared by copies, as held.
	named *namedParts
	// own tells the files of the storage itself, its directories
	// resolved once for the whole sync (shared by the workers).
	own *ownStorage
	// sessionHook, when set, runs on the worker before and after each
	// session of SyncStores is archived, with its index (tests).
	sessionHook func(i int, after bool)
	// frames holds the buffers the parts read their session with
	// (firstTime, feedDated, the part's hash), reused by the sessions
	// and the workers.
	frames *keptPool[partBufs]
	// streams holds the normalizers' working buffers (a part's
	// capture.Options.StreamBuffers), reused by the sessions and the
	// workers: grown by each part, they were 100 of the 470 MB a first
	// sync of 500 sessions allocated.
	streams *keptPool[normalize.Buffers]
	// repair holds the damaged runs Repair marked to be archived again
	// by the next sync (nil: none).
	repair *repairSet
}

// Open loads the ledger (rebuilt from the transcripts when needed; the
// reason is returned).
func Open(opts Options) (*Archiver, string, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Settle == 0 {
		opts.Settle = 10 * time.Second
	}
	if w := opts.Written; w != nil {
		// Parts are written by several goroutines (SyncStores).
		var mu sync.Mutex
		opts.Written = func(runID string) {
			mu.Lock()
			defer mu.Unlock()
			w(runID)
		}
	}
	l, rebuilt, err := OpenLedger(opts.Store.Root, opts.DryRun)
	if err != nil {
		return nil, "", err
	}
	a := &Archiver{opts: opts, ledger: l, sessionsMu: &sync.Mutex{}, held: &heldRuns{paths: map[string]*heldRun{}}, named: &namedParts{}, own: newOwnStorage(opts.Store.Root)}
	a.frames = newFramePool(a.workers())
	a.streams = newKeptPool(a.workers(), func() *normalize.Buffers { return new(normalize.Buffers) })
	return a, rebuilt, nil
}

// keptPool holds buffers the workers of a sync use one at a time: as
// many as the workers that archive at once are kept, for the archiver's
// life, and one more asked for at once is made and dropped. A
// sync.Pool, emptied by every collection, made new ones every few
// sessions of a first sync, whose soft memory limit has it collect
// every few MiB allocated (51 frame buffers of a MiB for 500 sessions).
type keptPool[T any] struct {
	free    chan *T
	newItem func() *T
	made    atomic.Int64 // items made (tests)
}

func newKeptPool[T any](keep int, newItem func() *T) *keptPool[T] {
	return &keptPool[T]{free: make(chan *T, max(keep, 1)), newItem: newItem}
}

// get is an item, a kept one when there is one.
func (p *keptPool[T]) get() *T {
	select {
	case b := <-p.free:
		return b
	default:
		p.made.Add(1)
		return p.newItem()
	}
}

// put gives an item from get back, kept unless as many are.
func (p *keptPool[T]) put(b *T) {
	select {
	case p.free <- b:
	default:
	}
}

// partBufs are the buffers a part reads its session with: a frame
// (rawfile.FrameBytes) to read into (firstTime, feedDated, the part's
// hash), and feedDated's line cut short by a read (carry) and that line
// joined with the next read (join), up to a read and a line long: made
// for each part longer than a read, join was 16 of the 390 MB a first
// sync of 500 sessions allocated. The two are kept up to a frame's size
// (a line of several MiB does not stay in memory).
type partBufs struct{ frame, carry, join []byte }

// newFramePool holds the parts' buffers (partBufs).
func newFramePool(keep int) *keptPool[partBufs] {
	return newKeptPool(keep, func() *partBufs {
		return &partBufs{frame: make([]byte, rawfile.FrameBytes)}
	})
}

// Close closes the ledger.
func (a *Archiver) Close() error { return a.ledger.Close() }

// Ledger is the archiver's ledger (read-only use).
func (a *Archiver) Ledger() *Ledger { return a.ledger }

// runName names a session's run from its file; a sub-agent's file whose
// run stands alone (subAgentOf: its session file) is named as that
// session's sub-agent.
func runName(provider, path, subAgentOf string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if subAgentOf != "" {
		return provider + " sub-agent " + base + " of session " + stemOf(subAgentOf)
	}
	if base == "events" { // copilot: the session id is the directory
		base = filepath.Base(filepath.Dir(path))
	}
	return provider + " session " + base
}

// SyncFile archives what is new in one session file. It never writes to
// the file; it reads up to its last complete line (or all of it, see
// Options.Whole).
func (a *Archiver) SyncFile(ctx context.Context, provider, path string) Outcome {
	return a.SyncFileAs(ctx, provider, "", path)
}

// SyncFileAs is SyncFile with a format hint for the plugin ("": detect).
func (a *Archiver) SyncFileAs(ctx context.Context, provider, format, path string) Outcome {
	return a.syncFile(ctx, provider, format, path, nil, "", nil)
}

// SyncSession archives what is new in a session found in a store: as
// SyncFile, and when the store's plugin asked for the facts of its
// source (abi.SourceFacts), with a facts line before the bytes of each
// part.
func (a *Archiver) SyncSession(ctx context.Context, s Session) Outcome {
	if s.Loc != nil && s.Loc.Keyed {
		if o, ok := a.syncKeyed(ctx, s); ok {
			return o
		}
	}
	if s.Loc != nil && s.Loc.manyFiles() {
		return a.syncFolder(ctx, s)
	}
	return a.syncFile(ctx, s.Loc.Provider, "", s.Path, s.Loc, s.Parent, &s)
}

// syncFile archives what is new in a session file; parent, when set, is
// the session file whose sub-agent's file it is (Session.Parent). walked,
// when set, is the session as the store's walk found it: when its size
// and mtime are those the ledger saw last, the file is not even opened
// (a sync with nothing new costs a stat of each file, the walk's).
func (a *Archiver) syncFile(ctx context.Context, provider, format, path string, loc *Location, parent string, walked *Session) Outcome {
	out := Outcome{Path: path, Provider: provider, DryRun: a.opts.DryRun}
	fail := func(err error) Outcome {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	a.recoverFirst(ctx)
	var own bool
	if walked != nil && walked.Path == path {
		own = a.own.holds(walked)
	} else {
		own = a.own.contains(path)
	}
	if own {
		return fail(fmt.Errorf("%s is in twasm's own storage %s: a transcript or capture of twasm, not an agent's session", path, a.opts.Store.Root))
	}
	if walked != nil && !walked.ModTime.IsZero() {
		if o, ok := a.asSeen(ctx, out, loc, path, parent, walked.Size, walked.ModTime); ok {
			return o
		}
	}
	f, err := regfile.Open(path) // a named pipe must not block the sync
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	return a.syncOpened(ctx, out, format, openedSession{f: f, size: st.Size(), mtime: st.ModTime()}, loc, parent)
}

// openedSession is the session syncOpened reads: a file, or one
// session of a file of many (a sections store: f reads its bytes, name
// its path "<file>#<n>", settled says its end is known, start dates
// it).
type openedSession struct {
	f       sessionFile
	size    int64
	mtime   time.Time
	settled bool
	start   time.Time
}

// sessionFile is what a session's bytes are read from: an *os.File,
// or a section of one (sectionFile).
type sessionFile interface {
	io.ReaderAt
	Name() string
}

// syncOpened archives what is new in an opened session (syncFile).
func (a *Archiver) syncOpened(ctx context.Context, out Outcome, format string, sess openedSession, loc *Location, parent string) Outcome {
	fail := func(err error) Outcome {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	path, provider := out.Path, out.Provider
	f, size, mtime := sess.f, sess.size, sess.mtime
	var err error
	if o, ok := a.asSeen(ctx, out, loc, path, parent, size, mtime); ok {
		return o
	}
	idle := a.opts.Now().Sub(mtime)
	closeDue := a.opts.CloseIdle >= 0 && idle >= a.opts.CloseIdle
	legacy := a.legacyOf(path, parent)
	// A sub-agent's run linked before its session's records named its
	// call, which they now do: archived again at the call, as a legacy
	// run is.
	loose := legacy == nil && a.looseOf(loc, path, parent) != nil
	if loose {
		legacy = a.ledger.ByPath(path)
	}
	// A run whose raw capture is damaged, archived again (Repair): the
	// file is read whole into a new run, as if no run held it.
	repairID := a.repairAt(path)
	settled := a.opts.Whole || idle >= a.opts.Settle || sess.settled
	if !settled && isDocument(path) {
		// A whole JSON document is only read whole: its lines mean
		// nothing before its closing brace is written.
		out.Action, out.Reason = ActionPending, "a JSON document changed in the last "+a.opts.Settle.String()+": read once it settles"
		return out
	}
	headLine, ok, err := readHead(f, size, settled)
	if err != nil {
		return fail(err)
	}
	if !ok {
		out.Action, out.Reason = ActionPending, "no complete line yet"
		return out
	}
	end := size
	if !settled {
		if end, err = completeEnd(f, size); err != nil {
			return fail(err)
		}
	}
	head := sum(headLine)
	var match *Entry
	hashes := map[int64]string{}
	prefixHash := func(n int64) (string, error) { // of the first n bytes, each n read once
		if h, ok := hashes[n]; ok {
			return h, nil
		}
		h, err := hashPrefix(f, n)
		if err == nil {
			hashes[n] = h
		}
		return h, err
	}
	for _, c := range a.ledger.ByHead(head) {
		if legacy != nil || repairID != "" {
			continue
		}
		if c.Offset > end {
			// A copy of the session made before it grew, found again
			// (touched, or its size and mtime forgotten): the bytes
			// are archived already.
			for i, s := range c.Also {
				if s.Offset != end || parent != "" {
					continue
				}
				h, err := prefixHash(end)
				if err != nil {
					return fail(err)
				}
				if h != s.SHA256 {
					continue
				}
				if !a.opts.DryRun && end == size {
					c.Also = slices.Clone(c.Also)
					c.Also[i].Size, c.Also[i].ModTime = size, mtime.UnixNano()
					if err := a.ledger.Put(&c); err != nil {
						return fail(err)
					}
				}
				out.Action, out.RunID = ActionUnchanged, c.RunID
				out.Reason = "the same bytes are archived as the start of run " + c.RunID + " (from " + c.Path + ")"
				return out
			}
			continue
		}
		h, err := prefixHash(c.Offset)
		if err != nil {
			return fail(err)
		}
		if h == c.SHA256 {
			match = &c
			break
		}
	}
	if match == nil {
		// A head that grew (a file whose first lines were shorter than
		// minHead when first synced): the file at the same path still
		// starting with what its run holds is that session.
		if e := a.ledger.ByPath(path); legacy == nil && repairID == "" && e != nil && e.Head != head && e.Offset <= end {
			h, err := hashPrefix(f, e.Offset)
			if err != nil {
				return fail(err)
			}
			if h == e.SHA256 {
				match, head = e, e.Head
			}
		}
	}
	// A whole JSON document that the agent rewrote in place (a Gemini CLI
	// chat: every turn rewrites the file, so it never grows by bytes): the
	// same session, by head and path, when its run is open. The new
	// version becomes a part of that run; the filter keeps what is new
	// and what changed.
	rewrite := false
	if match == nil && repairID == "" && isDocument(path) {
		if e := a.ledger.ByPath(path); e != nil && e.Head == head && !e.Closed && e.Provider == provider {
			match, rewrite = e, true
		}
	}
	seen := func(e *Entry) error {
		if a.opts.DryRun || e.Path == path && e.Size == size && e.ModTime == mtime.UnixNano() {
			return nil
		}
		e.moveTo(path, size, mtime.UnixNano())
		if end < size {
			e.Size = -1 // a partial line is left: look again next time
		}
		return a.ledger.Put(e)
	}
	if match != nil && !rewrite && match.Offset == end {
		out.RunID = match.RunID
		from := match.Path
		if err := seen(match); err != nil {
			return fail(err)
		}
		if !match.Closed && closeDue && end == size && !a.opts.CloseWrittenOnly {
			return a.closeRun(ctx, out, match, "idle since "+mtime.UTC().Format(time.RFC3339))
		}
		out.Action = ActionUnchanged
		if from != path {
			out.Reason = "the same bytes are archived as run " + match.RunID + " (from " + from + ")"
		} else {
			out.Reason = "nothing new"
		}
		return out
	}
	out.Bytes = end
	switch {
	case rewrite:
		out.Action, out.RunID, out.Part = ActionGrown, match.RunID, match.Parts
		out.Reason = "the file was rewritten in place (it no longer starts with the bytes run " + match.RunID + " holds): its new version is one more part of the run, with a raw capture of its own"
	case match == nil:
		out.Action = ActionNew
		if olds := a.ledger.ByPath(path); repairID != "" {
			out.Reason = a.repairing(repairID) + ": archived again, whole, as a new run that supersedes run " + repairID
		} else if o := a.orphanedOf(path, parent); o != nil {
			out.Reason = "run " + o.RunID + ", which held this sub-agent's file, was ended superseded by its session's run " + o.SupersededBy + " (sync --repair archived the session again) and no run holds the file now: archived again, whole, as a child run of its session's run"
		} else if olds != nil && olds.Head == head && legacy == nil {
			out.Reason = "the file was rewritten (it no longer starts with what run " + olds.RunID + " holds): archived as a new run"
		}
	case match.Closed:
		out.Action, out.Bytes = ActionContinued, end-match.Offset
		out.Reason = "run " + match.RunID + " had ended"
	default:
		out.Action, out.RunID, out.Part, out.Bytes = ActionGrown, match.RunID, match.Parts, end-match.Offset
	}
	var link *fileLink
	subAgentOf := ""
	if parent != "" && (match == nil || match.Closed) {
		l, wait, why := a.subAgentLink(loc, path, parent)
		if wait {
			out.Action, out.Reason = ActionPending, why
			return out
		}
		link = l
		if l == nil {
			subAgentOf = parent
		}
		switch {
		case why != "":
			out.Reason = joinReason(out.Reason, why)
		case loose && repairID == "":
			link.legacy = legacy.RunID
			if link.Supersedes == "" {
				link.Supersedes = legacy.RunID
			}
			out.Reason = joinReason(out.Reason, "child run "+legacy.RunID+" was linked at its session's latest part, before its session named the call that started it: archived again as a child run linked at that call, which supersedes it")
		case legacy != nil && repairID == "":
			link.legacy = legacy.RunID
			out.Reason = joinReason(out.Reason, "archived by an older twasm as run "+legacy.RunID+", a session of its own: archived again as a child run of its session's run, which supersedes it")
		}
		if link != nil && link.note != "" {
			out.Reason = joinReason(out.Reason, link.note)
		}
	}
	if a.opts.DryRun {
		return out
	}
	var facts []byte
	rs := &Resume{Format: format, Whole: a.opts.Whole, End: closeDue && end == size, link: link, subAgentOf: subAgentOf, replace: repairID}
	if loc != nil && loc.SourceFacts {
		var copied *abi.SourceCopy
		// The run's first part: a new run, or one whose first part a
		// kill cut short (its entry holds nothing yet, Recover).
		first := match == nil || match.Offset == 0 && !rewrite
		if first && repairID == "" && legacy == nil && loc.Kind != KindSections {
			if copied, err = a.copiedFrom(f, path, head, int64(len(headLine)), end); err != nil {
				return fail(err)
			}
			if copied != nil {
				out.Reason = joinReason(out.Reason, fmt.Sprintf("its first %d lines are the first lines run %s holds: the facts line names them", copied.Lines, copied.Run))
			}
		}
		facts = factsLine(loc, path, size, mtime, copied)
		rs.Store, rs.Dir, rs.Facts, rs.Project = loc.Name, loc.Dir, true, loc.Project
	}
	if loc != nil && loc.Kind == KindSections {
		rs.SessionStart, rs.Store, rs.Dir = loc.SessionStart, loc.Name, loc.Dir
	}
	return a.writePart(ctx, out, fileSource{f: f, fl: facts, start: sess.start}, provider, head, match, rewrite, end, size, mtime, closeDue, rs)
}

// asSeen is the outcome of a session file of that size and mtime when
// they are those its ledger entry saw last: unchanged, or its run ended
// when idle long enough; ok is false when the file must be read.
func (a *Archiver) asSeen(ctx context.Context, out Outcome, loc *Location, path, parent string, size int64, mtime time.Time) (_ Outcome, ok bool) {
	e, known := a.ledger.seenAt(path)
	if !known && parent == "" {
		if c := a.ledger.CopyAt(path, size, mtime); c != nil {
			out.Action, out.RunID = ActionUnchanged, c.RunID
			out.Reason = "unchanged since the last sync: the same bytes are archived as the start of run " + c.RunID + " (from " + c.Path + ")"
			return out, true
		}
	}
	if !known || e.size != size || e.mtime != mtime.UnixNano() || a.legacyOf(path, parent) != nil || a.repairAt(path) != "" || a.orphanedOf(path, parent) != nil || a.looseOf(loc, path, parent) != nil {
		return out, false
	}
	closeDue := a.opts.CloseIdle >= 0 && a.opts.Now().Sub(mtime) >= a.opts.CloseIdle
	if !e.closed && closeDue && !a.opts.CloseWrittenOnly {
		// The whole entry, to end its run (a path's sessions are
		// archived by one worker: it is the entry just seen).
		if whole := a.ledger.ByPath(path); whole != nil {
			return a.closeRun(ctx, out, whole, "idle since "+mtime.UTC().Format(time.RFC3339)), true
		}
	}
	out.Action, out.RunID, out.Reason = ActionUnchanged, e.runID(), "unchanged since the last sync"
	return out, true
}

// orphanedOf is the run of a sub-agent's file (parent: its session
// file) that was ended superseded by a run of another file, its
// session's run that `sync --repair` archived again (replaced), while
// no run of the file's own holds it: a repair killed before it archived
// the file again as a child run of that run. The file is archived again
// then, whole, as a child run of its session's run, as the repair would
// have. nil when there is none.
func (a *Archiver) orphanedOf(path, parent string) *Entry {
	if parent == "" {
		return nil
	}
	return a.orphaned(a.ledger.ByPath(path), path) // superseded only when no other run of the file is not
}

// orphaned is e, the latest run of the session at path, when it is a
// child run ended superseded by a run of another session (its
// session's new run, which `sync --repair` archived again: replaced)
// while no run of its own holds the session: a repair killed before it
// archived the session again (a sub-agent's file, orphanedOf; a
// sub-task's folder, syncFolderAs). nil otherwise.
// A run superseded by a later run of the same session (a sub-task first
// archived as a run of its own, then as a child run) leads to that run.
func (a *Archiver) orphaned(e *Entry, path string) *Entry {
	for hops := 0; e != nil && hops < 16; hops++ {
		if e.SupersededBy == "" || e.Pending {
			return nil
		}
		by := a.ledger.byRun(e.SupersededBy)
		if by == nil {
			return nil
		}
		if by.Path != path {
			if e.Parent == "" {
				return nil
			}
			return e
		}
		e = by
	}
	return nil
}

// legacyOf is the run of a sub-agent's file (parent: its session file)
// that an older twasm archived as a session of its own: it is archived
// again, whole, as a child run of its session's, and the old run is
// ended, superseded by it. nil when there is none.
func (a *Archiver) legacyOf(path, parent string) *Entry {
	if parent == "" {
		return nil
	}
	if e := a.ledger.ByPath(path); e != nil && !e.Closed && e.Parent == "" && e.Parts > 0 && !e.Pending {
		if pe := a.ledger.ByPath(parent); pe != nil && !pe.Closed && pe.Parts > 0 && !pe.Pending {
			return e
		}
	}
	return nil
}

// looseOf is the run of a sub-agent's file (parent: its session file,
// in store loc) that was linked at its session's latest part because the
// session's records (abi.Store.SubAgentCalls) named no call of its run
// then, no result of it named the file (abi.Store.SubAgentResult), or no
// call of it stated the prompt the file starts with
// (abi.Store.SubAgentPrompt) (Entry.LooseAt), when they now name one the
// session's run holds, a result of it names the file, or one call of it
// states the prompt:
// the file is archived again, whole, as a child run linked at that call,
// and the old run is ended, superseded by it (as a legacy run is). nil
// otherwise. The session's file is read only when its run has gained a
// part since the call was last looked for; a look that finds none notes
// the parts it looked at, so the next sync does not read it again.
func (a *Archiver) looseOf(loc *Location, path, parent string) *Entry {
	if parent == "" || loc == nil || loc.SubAgentCalls == nil && loc.SubAgentResult == "" && loc.SubAgentPrompt == nil || !a.ledger.looseAt(path) {
		return nil
	}
	e := a.ledger.ByPath(path)
	if e == nil || e.LooseAt == 0 || e.Closed || e.Pending || e.Parent == "" || e.SupersededBy != "" {
		return nil
	}
	pe := a.ledger.ByPath(parent)
	if pe == nil || pe.RunID != e.Parent || pe.Closed || pe.Pending || pe.Parts <= e.LooseAt {
		return nil
	}
	if id := recordCall(parent, stemOf(path), loc.SubAgentCalls); id != "" {
		if in, err := a.sessionLinksOf(pe, loc.SubAgentPrompt); err == nil && len(in.calls[id]) > 0 {
			return e
		}
	}
	if loc.SubAgentResult != "" {
		if in, err := a.sessionLinksOf(pe, loc.SubAgentPrompt); err == nil {
			if _, ok := in.named[resultLine(loc, path)]; ok {
				return e
			}
		}
	}
	if prompt := filePrompt(path, loc.SubAgentPrompt); prompt != "" {
		if in, err := a.sessionLinksOf(pe, loc.SubAgentPrompt); err == nil {
			if n, _ := in.promptCall(prompt); n >= 0 {
				return e
			}
		}
	}
	if !a.opts.DryRun {
		c := *e
		c.LooseAt = pe.Parts
		if err := a.ledger.Put(&c); err != nil {
			a.opts.Logger.Warn("sub-agent link: note the session's parts looked at", "run", e.RunID, "err", err)
		}
	}
	return nil
}

// clock dates the brackets and the events without a time of their own:
// the latest session time fed so far.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) {
	c.mu.Lock()
	if !t.IsZero() && t.After(c.t) {
		c.t = t
	}
	c.mu.Unlock()
}

// sourceStamp writes run.started's "source" (installed as a recorder
// masker, the one hook that sees an event before it is written).
// It also writes, when set, the ended runs the run holds again
// (lifecycle.SupersedesRunsField: endedKeyedDB).
type sourceStamp struct {
	runID      string
	src        []byte
	supersedes []string
	next       func(*transcript.Event)
}

func (m sourceStamp) Mask(ev *transcript.Event) {
	if ev.Type == transcript.RunStarted && ev.RunID == m.runID {
		if p := ev.Step(); p != nil {
			extra := make(map[string]json.RawMessage, len(p.Extra)+2)
			for k, v := range p.Extra {
				extra[k] = v
			}
			extra[SourceField] = m.src
			if len(m.supersedes) > 0 {
				b, _ := json.Marshal(m.supersedes)
				extra[lifecycle.SupersedesRunsField] = b
			}
			p.Extra = extra
		}
	}
	if m.next != nil {
		m.next(ev)
	}
}

// startOptions are the options of the run a session's first part begins
// (e.RunID): named for the session, its run.started stamped with the
// session's source (continuing run continues, when set).
func (a *Archiver) startOptions(e *Entry, head, continues string, rs *Resume, clock func() time.Time, mask func(*transcript.Event)) lifecycle.RunOptions {
	src := SourceRef{Provider: e.Provider, Path: e.Path, Head: head, Continues: continues, Supersedes: rs.Supersedes, Repair: rs.Repair}
	b, _ := json.Marshal(src)
	log := a.opts.Logger
	return lifecycle.RunOptions{
		Name: runName(e.Provider, e.Path, rs.subAgentOf), RunID: e.RunID, Producer: a.opts.Producer, Logger: log,
		Recorder: recorder.Options{Clock: clock, Logger: log, Mask: sourceStamp{runID: e.RunID, src: b, supersedes: a.endedReplaced(rs), next: mask}.Mask},
	}
}

// beginUnbegun begins child run e.RunID of run e.Parent, whose link the
// parent's transcript already holds (Interrupted.Unbegun): no second
// link is written.
func (a *Archiver) beginUnbegun(ctx context.Context, e *Entry, head string, rs *Resume, clock func() time.Time, mask func(*transcript.Event)) (*lifecycle.Run, error) {
	ropts := a.startOptions(e, head, "", rs, clock, mask)
	ropts.ParentRunID = e.Parent
	run, err := lifecycle.Start(ctx, a.opts.Store, ropts)
	if err != nil {
		return nil, fmt.Errorf("begin child run %s of run %s, which links it: %w", e.RunID, e.Parent, err)
	}
	a.ledger.begun(e.RunID)
	return run, nil
}

// partResult is an agent step's result plus where its bytes came from.
type partResult struct {
	res *transcript.AgentResult
	src PartRef
}

// MarshalJSON writes the agent result's members and "source".
func (p partResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(p.res)
	if err != nil {
		return nil, err
	}
	s, err := json.Marshal(p.src)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimRight(b, " \n")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, errors.New("agent result is not an object")
	}
	out := append(b[:len(b)-1:len(b)-1], []byte(`,"`+PartField+`":`)...)
	if len(b) == 2 {
		out = append(b[:1:1], []byte(`"`+PartField+`":`)...)
	}
	out = append(out, s...)
	return append(out, '}'), nil
}

// partSource is what a part reads: bytes [from, end) of a session file
// (fileSource), or the stream of what changed in a session folder
// (folderSource).
type partSource interface {
	// name is the session's path, in the ledger and run.started.
	name() string
	// times are the earliest and latest session times of [from, end)
	// (the file's: zero last; mtime when it holds none); buf is a
	// frame's buffer (rawfile.FrameBytes) to read into.
	times(from, end int64, mtime time.Time, buf []byte) (first, last time.Time)
	// replay is what the plugin read of the session before from, as the
	// run's raw capture holds it, and the mask of a masked run's first
	// reading (nil: none); a nil reader when there is nothing.
	replay(root string, prev *Entry, from int64, masked bool) (io.ReadCloser, func([]byte) []byte, error)
	// body is the part's bytes, facts is the facts line fed before them
	// (nil: none).
	body(from, end int64) io.Reader
	facts() []byte
	// hash is the sha256 the part's source reference keeps (buf: a
	// frame's buffer to read into), files the state of each file of a
	// folder (nil for a file).
	hash(end int64, buf []byte) (string, error)
	files() []FileState
	// parent links a new run to the run of the session this one was
	// started from (nil: none).
	parent() *childLink
}

// fileSource is a session file.
type fileSource struct {
	f  sessionFile
	fl []byte
	// start, when set, dates the session (a sections store's session
	// start line).
	start time.Time
}

func (s fileSource) name() string                   { return s.f.Name() }
func (s fileSource) facts() []byte                  { return s.fl }
func (s fileSource) files() []FileState             { return nil }
func (s fileSource) parent() *childLink             { return nil }
func (s fileSource) body(from, end int64) io.Reader { return io.NewSectionReader(s.f, from, end-from) }
func (s fileSource) hash(end int64, buf []byte) (string, error) {
	return hashPrefixIn(s.f, end, buf)
}

func (s fileSource) times(from, end int64, mtime time.Time, buf []byte) (time.Time, time.Time) {
	if !s.start.IsZero() {
		mtime = s.start
	}
	return firstTime(s.f, from, end, mtime, buf), time.Time{}
}

func (s fileSource) replay(_ string, prev *Entry, from int64, masked bool) (io.ReadCloser, func([]byte) []byte, error) {
	if from == 0 {
		return nil, nil, nil
	}
	var rm func([]byte) []byte
	if masked {
		rm = redact.New().MaskBytes
	}
	return io.NopCloser(replayed(s.f, from, prev.Facts)), rm, nil
}

func (a *Archiver) writePart(ctx context.Context, out Outcome, ps partSource, provider, head string, prev *Entry, rewrite bool, end, size int64, mtime time.Time, closeDue bool, rs *Resume) Outcome {
	format := rs.Format
	fail := func(err error) Outcome {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	if prev != nil && a.ledger.isInterrupted(prev.RunID) {
		return fail(fmt.Errorf("run %s: %w", prev.RunID, ErrInterrupted))
	}
	if err := ctx.Err(); err != nil {
		return fail(err) // interrupted: nothing begun
	}
	facts := ps.facts()
	plugin, err := a.opts.Plugin(ctx, provider)
	if err != nil {
		return fail(err)
	}
	from := int64(0)
	redactOn := a.opts.Redact
	if prev != nil {
		from = prev.Offset
		redactOn = redactOn || prev.Redact
	}
	if rewrite {
		from = 0 // the whole new version, nothing replayed
	}
	frame := a.frames.get()
	first, last := ps.times(from, end, mtime, frame.frame)
	a.frames.put(frame)
	clk := &clock{t: first}
	log := a.opts.Logger
	var masker *redact.Redactor
	var recMask func(*transcript.Event)
	if redactOn {
		masker = redact.New()
		recMask = masker.Mask
	}
	if l := rs.link; l != nil && l.legacy != "" {
		// Noted while the part is written, and after it until that run
		// is ended (supersede): a kill in between leaves the next sync
		// or import to end it (Recover).
		rs.Supersedes = l.legacy
	}
	legacy := "" // a legacy run beside the damaged run a repair replaces: ended after it
	if rs.replace != "" {
		// The damaged run a repair archives again, noted the same way
		// (and in run.started, SourceRef.Repair): a kill before it is
		// ended leaves the next sync or import to end it, as the
		// repair would have (supersede).
		if rs.Supersedes != rs.replace {
			legacy = rs.Supersedes
		}
		rs.Supersedes, rs.Repair = rs.replace, true
	}
	e := Entry{Head: head, Provider: provider, Path: ps.name(), Size: size, ModTime: mtime.UnixNano(), Redact: redactOn, Pending: true, Resume: rs}
	var run *lifecycle.Run
	// begins: this part begins its run (a new one, or one a kill left
	// unbegun), rather than continuing prev's.
	unbegun := prev != nil && !prev.Closed && a.ledger.isUnbegun(prev.RunID)
	begins := unbegun || prev == nil || prev.Closed
	if unbegun {
		// A child run whose link its parent holds and that a kill left
		// never begun: begun now, under that link, as its first part
		// would have begun it.
		e.RunID, e.Parent = prev.RunID, prev.Parent
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
		if run, err = a.beginUnbegun(ctx, &e, head, rs, clk.now, recMask); err != nil {
			return fail(err)
		}
		prev = nil // nothing of it to continue
	} else if begins {
		e.RunID = runid.New()
		continues := ""
		if prev != nil {
			continues = prev.RunID
		}
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
		ropts := a.startOptions(&e, head, continues, rs, clk.now, recMask)
		if l := rs.link; l != nil {
			// A sub-agent's file: a child run of its session's run,
			// linked in the agent step (spec §6.10).
			e.Parent, e.LooseAt = l.ParentID, l.looseAt
			if err := a.ledger.Put(&e); err != nil {
				return fail(err)
			}
			run, err = runctl.BeginChildAt(ctx, a.opts.Store, l.Link, ropts)
		} else if link := ps.parent(); link != nil && link.parentRunID != "" && prev == nil {
			// A sub-agent's session (a folder or tree store's): a child
			// run of its parent's, named in the ledger as a sub-agent
			// file's is.
			e.Parent = link.parentRunID
			if err := a.ledger.Put(&e); err != nil {
				return fail(err)
			}
			run, err = runctl.BeginChildAt(ctx, a.opts.Store, link.link(), ropts)
		} else {
			run, err = lifecycle.Start(ctx, a.opts.Store, ropts)
		}
		if err != nil {
			return fail(err)
		}
	} else {
		e = *prev
		e.Pending, e.Redact, e.Resume = true, redactOn, rs
		e.moveTo(ps.name(), size, mtime.UnixNano())
		if err := a.ledger.Put(&e); err != nil {
			return fail(err)
		}
		opts := recorder.Options{Clock: clk.now, Logger: log, Mask: recMask}
		run, err = lifecycle.Attach(ctx, a.opts.Store, prev.RunID, lifecycle.RunOptions{Producer: a.opts.Producer, Logger: log, Recorder: opts})
		if err != nil {
			return fail(err)
		}
	}
	if begins {
		e.First = first
		out.RunID = e.RunID
	}
	part := 0
	var prevTotals *Totals
	if prev != nil && !prev.Closed {
		part = prev.Parts
		prevTotals = prev.Totals
	}
	out.Part = part
	seen := newArchived()
	seen.rewrite = rewrite
	if redactOn {
		seen.mask = redact.New().Mask
	}
	if prev != nil {
		// What the session's earlier parts hold (of this run, or of the
		// ended run this one continues).
		if err := seen.add(a.opts.Store.Root, prev.RunID); err != nil {
			return fail(errors.Join(err, run.Detach()))
		}
	}
	var res *transcript.AgentResult
	var totals *Totals
	stepErr := run.StepAt(ctx, "agent", part, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		copts := capture.Options{Provider: provider, Format: format, Store: a.opts.Store, Plugin: plugin, Logger: log, Now: clk.now, Filter: seen.filter, SubAgentFilter: seen.filterSubAgent, Replayed: seen.replayed, Supersede: seen.subs}
		if masker != nil {
			copts.Mask, copts.Masked, copts.Split = masker.MaskBytes, masker.Counts, redact.NewStream()
		}
		if prev != nil && !prev.Closed && !rewrite {
			copts.ContinueRaw = prev.Raw
		}
		copts.StreamBuffers = a.streams.get()
		defer a.streams.put(copts.StreamBuffers)
		agent, err := capture.Start(ctx, s, copts)
		if err != nil {
			return err
		}
		var feedErr error
		if prev != nil {
			var r io.ReadCloser
			var rm func([]byte) []byte
			if r, rm, feedErr = ps.replay(a.opts.Store.Root, prev, from, redactOn); r != nil && feedErr == nil {
				feedErr = agent.Replay(ctx, r, rm)
				r.Close()
			}
		}
		if feedErr == nil && facts != nil {
			feedErr = agent.Feed(ctx, facts)
		}
		if feedErr == nil {
			feedErr = feedDated(ctx, agent, ps.body(from, end), clk, a.frames)
			clk.set(last)
		}
		fin, err := agent.Finish(context.WithoutCancel(ctx), nil)
		if fin == nil {
			return errors.Join(feedErr, err)
		}
		if feedErr != nil && ctx.Err() != nil {
			// Interrupted (Ctrl-C) before the part's bytes were all
			// fed: the part claims none of them (no result: cut below).
			return errors.Join(feedErr, err)
		}
		res = fin.AgentResult
		totals = totalsOf(res)
		subtract(res, prevTotals)
		if rewrite {
			seen.changed = append(seen.changed, seen.removed()...)
		}
		src := PartRef{Path: e.Path, From: from, To: end, Redact: redactOn, Totals: totals, Rewritten: rewrite, Changed: seen.changed, Files: ps.files()}
		if facts != nil {
			src.Facts = json.RawMessage(bytes.TrimSuffix(facts, []byte("\n")))
		}
		// (err stays Finish's: a capture that finished with its result
		// and an error, a raw capture not synced, is not a whole part.)
		frame := a.frames.get()
		digest, herr := ps.hash(end, frame.frame)
		a.frames.put(frame)
		if herr != nil {
			return errors.Join(feedErr, err, herr)
		}
		src.SHA256 = digest
		e.SHA256 = src.SHA256
		if serr := s.SetResult(partResult{res: res, src: src}); serr != nil {
			return errors.Join(feedErr, err, serr)
		}
		if feedErr != nil || err != nil {
			return errors.Join(feedErr, err)
		}
		return capture.ResultError(res)
	})
	// Interrupted before the part had a result, however far it got (its
	// feed cut short, its capture not even started, its step refused):
	// the part claims none of its bytes and is left as a kill leaves it,
	// for the next sync or import to settle (readTranscript: cut), never
	// a run ended cancelled and empty beside the one the next sync or
	// import makes of the file.
	cut := res == nil && ctx.Err() != nil
	var endErr error
	ending := closeDue && end == size && (stepErr == nil || errors.Is(stepErr, capture.ErrAgent))
	held := false
	ended := false // by this part, in a sync not cancelled
	switch {
	case cut:
		// Neither ended nor noted done: the ledger entry stays pending,
		// the run open, as after a kill (Recover settles it).
		endErr = run.Detach()
	case ending && a.held.keep(e.Path, e.RunID, stepErr):
		// EndHeld ends it, after its sub-agents' files (or, the import
		// interrupted, leaves it held for the next one).
		endErr = run.Detach()
		held = true
	case ending || ctx.Err() != nil:
		endErr = a.finishRun(ctx, run, &e, stepErr, clk.now())
		e.Closed, ended = true, endErr == nil && ctx.Err() == nil
	default:
		endErr = run.Detach()
	}
	if a.opts.Written != nil {
		a.opts.Written(e.RunID)
	}
	if cut {
		return fail(fmt.Errorf("interrupted before its bytes were all read: the next sync or import archives them in run %s: %w", e.RunID, errors.Join(stepErr, endErr)))
	}
	if res == nil {
		return fail(errors.Join(stepErr, endErr))
	}
	e.Offset, e.Parts, e.Raw, e.Last, e.Status, e.Totals, e.Pending = end, part+1, res.Raw.Path, clk.now(), res.Status, totals, false
	e.Resume = nil
	if held {
		// Noted in the ledger until EndHeld ends the run: killed before,
		// the import leaves it for the next sync or import to end.
		r := *rs
		r.End, r.Held = true, true
		e.Resume = &r
	}
	// The run this part archives again is ended below, superseded by
	// this one, unless the part failed (a step error that is not the
	// agent's status: nothing stands for it then). Noted until it is.
	supersedes := ""
	if rs.Supersedes != "" && (stepErr == nil || errors.Is(stepErr, capture.ErrAgent)) {
		supersedes = rs.Supersedes
		r := Resume{Supersedes: supersedes, Repair: rs.Repair}
		if e.Resume != nil {
			r = *e.Resume
		}
		e.Resume = &r
	}
	e.Facts = nextFacts(e.Facts, prev == nil || prev.Closed || rewrite, from, facts)
	e.Files = ps.files()
	e.Seal = sealDue(&e)
	if end < size {
		e.Size = -1
	}
	// A part that leaves its run open with nothing more to do (no
	// Resume, no seal) is noted without an fsync of its own: its
	// pending line was synced before the run was written, and the
	// transcript holds the part whole (its step.completed synced), so a
	// crash that loses this line leaves the pending one, which the next
	// load settles from the transcript as after a kill here. The next
	// Put's fsync, or the ledger's Close, makes it durable: one fsync a
	// run less (a first sync of 2,000 sessions made about 8 a run).
	put := a.ledger.Put
	if e.Resume == nil && !e.Closed && !e.Seal {
		put = a.ledger.putLazy
	}
	if err := put(&e); err != nil {
		return fail(err)
	}
	if ended {
		_, _ = a.seal(ctx, &e)
	}
	if supersedes != "" {
		if err := a.supersede(ctx, e.RunID, supersedes, rs.Repair); err != nil {
			return fail(err)
		}
		if legacy != "" {
			if err := a.supersede(ctx, e.RunID, legacy, false); err != nil {
				return fail(err)
			}
		}
	}
	out.Status, out.Result = res.Status, res
	for _, n := range res.Unmapped {
		out.Unmapped += n
	}
	if stepErr != nil && !errors.Is(stepErr, capture.ErrAgent) || endErr != nil {
		return fail(errors.Join(stepErr, endErr))
	}
	if rewrite {
		if n := len(seen.changed); n > 0 {
			out.Reason += fmt.Sprintf("; %d earlier item(s) changed (%s): this part holds their new version, the earlier parts and raw captures keep the old one (raw %s and %s)",
				n, strings.Join(seen.changed[:min(n, 5)], ", "), prev.Raw, rawPath(res))
		} else {
			out.Reason += "; only new messages (what the run holds is unchanged)"
		}
	}
	if out.Unmapped > 0 {
		kinds := make([]string, 0, len(res.Unmapped))
		for k, n := range res.Unmapped {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(kinds)
		out.Reason = strings.TrimPrefix(out.Reason+"; ", "; ") + fmt.Sprintf("%d line(s) the plugin could not map, kept in the raw capture (%s)", out.Unmapped, strings.Join(kinds, ", "))
	}
	if res.FailedLines > 0 {
		out.Reason = strings.TrimPrefix(out.Reason+"; ", "; ") + fmt.Sprintf("%d line(s) lost to a plugin fault", res.FailedLines)
	}
	return out
}

// factsLine is the facts line (abi.SourceFacts) of a session file of
// loc, as read: its path relative to the store, its name, size and
// modification time, the project the store's place names, and the
// first lines another run holds (copied, nil: none; see copiedFrom).
func factsLine(loc *Location, p string, size int64, mtime time.Time, copied *abi.SourceCopy) []byte {
	rel, err := filepath.Rel(loc.Dir, p)
	if err != nil {
		rel = filepath.Base(p)
	}
	b, _ := json.Marshal(abi.SourceFacts{Type: abi.SourceFactsType, Store: loc.Name, Path: filepath.ToSlash(rel),
		Name: filepath.Base(p), Size: size, MTime: mtime.UTC().Format(time.RFC3339Nano), Project: loc.Project, Copied: copied})
	return append(b, '\n')
}

// replayed is what the run's raw capture holds of the file's first from
// bytes: those bytes, with the facts line of each earlier part before the
// bytes it introduced, so that the plugin's state after the replay is the
// one renormalize reaches by reading the raw capture.
func replayed(f io.ReaderAt, from int64, facts []FactsAt) io.Reader {
	var rs []io.Reader
	pos := int64(0)
	for _, fa := range facts {
		if fa.At >= from || fa.At < pos {
			continue
		}
		rs = append(rs, io.NewSectionReader(f, pos, fa.At-pos), strings.NewReader(fa.Line+"\n"))
		pos = fa.At
	}
	return io.MultiReader(append(rs, io.NewSectionReader(f, pos, from-pos))...)
}

// nextFacts is the facts lines of the run's raw capture after a part
// from offset from, introduced by facts (nil: none): a new run or a new
// version of a rewritten document starts a new raw capture.
func nextFacts(cur []FactsAt, fresh bool, from int64, facts []byte) []FactsAt {
	if fresh {
		cur = nil
	}
	if facts == nil {
		return cur
	}
	return append(slices.Clone(cur), FactsAt{At: from, Line: string(bytes.TrimSuffix(facts, []byte("\n")))})
}

// isDocument reports whether the session file is one JSON document (a
// Gemini CLI chat, rewritten whole at every turn) rather than JSON Lines.
func isDocument(path string) bool { return strings.EqualFold(filepath.Ext(path), ".json") }

func rawPath(res *transcript.AgentResult) string {
	if res.Raw == nil {
		return ""
	}
	return res.Raw.Path
}

// firstTime is the earliest session time in the first MiB of [from, end),
// else the file's mtime. buf (a frame's buffer, rawfile.FrameBytes) is
// where the bytes are read: a buffer made for each part, as large as
// the part up to a MiB, was 53 of the 610 MB a first sync of 500
// sessions (86 MiB) allocated, each collected, its pages given back
// and taken again.
func firstTime(f io.ReaderAt, from, end int64, mtime time.Time, buf []byte) time.Time {
	b := buf[:min(end-from, 1<<20, int64(len(buf)))]
	n, _ := f.ReadAt(b, from)
	first, _ := timestamps(b[:n], time.Time{}, time.Time{})
	if first.IsZero() {
		return mtime.UTC()
	}
	return first
}

// feedDated feeds r in chunks cut at line ends, moving the clock to the
// latest session time of each chunk before feeding it.
//
// r is read a frame (rawfile.FrameBytes) at a time, by reads of 256 KiB
// into a frame's buffer, and each frame read is written to the raw
// capture at once (capture.Agent.Ahead): the raw capture is made of whole
// frames, as record's is, instead of a frame per chunk (the first event
// made of a chunk flushes its bytes). The stream is fed the chunks it was
// fed when r was read and fed 256 KiB at a time: each read, after the
// line cut short at the end of the one before, cut after its last line
// end, dated by the session times in it; a chunk holding the end of a
// frame's last line waits for the next frame, whose bytes are written
// before it is fed. So the plugin gets the same batches, each at the
// same clock (the time of an event without one of its own), whatever
// the frame size.
func feedDated(ctx context.Context, agent *capture.Agent, r io.Reader, clk *clock, frames *keptPool[partBufs]) error {
	// A frame's buffer (of frames), for a part smaller than a read too:
	// a read's buffer made for each part (most sessions are smaller than
	// a read) was 128 of the 610 MB a first sync of 500 sessions
	// allocated.
	pooled := frames.get()
	frame := pooled.frame
	type read struct {
		n   int
		err error
	}
	reads := make([]read, 0, rawfile.FrameBytes/chunkBytes)
	// A chunk is a read, or, after a line cut short, built in a buffer
	// of its own: were it carry's (append reuses carry's array when it
	// has room: after a line of 256 KiB cut short), moving the next carry
	// to the front would overwrite the chunk's first bytes before they
	// were fed.
	carry, buf := pooled.carry[:0], pooled.join[:0]
	defer func() {
		// Kept unless a long line grew them past a frame.
		pooled.carry, pooled.join = keepUpTo(carry, len(frame)), keepUpTo(buf, len(frame))
		frames.put(pooled)
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Fill the frame with reads of 256 KiB, as long as one fits.
		reads = reads[:0]
		filled := 0
		for filled+chunkBytes <= len(frame) {
			n, err := r.Read(frame[filled : filled+chunkBytes])
			reads = append(reads, read{n, err})
			filled += n
			if err != nil {
				break
			}
		}
		if err := agent.Ahead(frame[:filled]); err != nil {
			return err
		}
		p := frame[:filled]
		for _, rd := range reads {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := p[:rd.n]
			p = p[rd.n:]
			if len(carry) > 0 {
				chunk = append(append(buf[:0], carry...), chunk...)
				buf = chunk
			}
			carry = carry[:0]
			if rd.err == nil {
				if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 && i < len(chunk)-1 {
					carry = append(carry, chunk[i+1:]...)
					chunk = chunk[:i+1]
				}
			}
			if len(chunk) > 0 {
				_, last := timestamps(chunk, time.Time{}, time.Time{})
				clk.set(last)
				if ferr := agent.Feed(ctx, chunk); ferr != nil {
					return ferr
				}
			}
			if rd.err == io.EOF {
				return nil
			}
			if rd.err != nil {
				return fmt.Errorf("%w: %w", capture.ErrRead, rd.err)
			}
		}
	}
}

// keepUpTo is b to be kept for reuse, or nil when it holds room for
// more than n bytes.
func keepUpTo(b []byte, n int) []byte {
	if cap(b) > n {
		return nil
	}
	return b
}

// chunkBytes is the most bytes feedDated reads at once: the stream is
// fed a chunk of each read.
const chunkBytes = 256 << 10

// closeRun ends a session's run, dated at its last event, with the last
// part's status.
func (a *Archiver) closeRun(ctx context.Context, out Outcome, e *Entry, why string) Outcome {
	out.Action, out.RunID, out.Reason = ActionClosed, e.RunID, why
	if a.opts.DryRun {
		return out
	}
	var runErr error
	if e.Status != "" && e.Status != transcript.StatusOK {
		runErr = agentEnded(e.Status)
	}
	return a.endEntry(ctx, out, e, runErr)
}

// agentEnded is the error a session's run is ended with when its latest
// part's agent status (spec §7) is not ok: it states that status, so an
// incomplete session's run ends incomplete, as the part's own end would
// have (capture's agent error), not as a failure.
type agentEnded string

func (s agentEnded) Error() string  { return "agent " + string(s) }
func (s agentEnded) Status() string { return string(s) }

// endEntry ends the run of ledger entry e (runErr: how, nil ok), dated at
// its last event, and notes it ended in the ledger (closeRun, EndHeld).
func (a *Archiver) endEntry(ctx context.Context, out Outcome, e *Entry, runErr error) Outcome {
	last := e.Last
	if last.IsZero() {
		last = time.Unix(0, e.ModTime).UTC()
	}
	// A part killed mid-way may have left its step open: it is closed
	// as cancelled, in the same critical section as run.completed.
	err := a.endRun(ctx, e.RunID, runErr, last)
	if err != nil && !errors.Is(err, recorder.ErrRunFinished) {
		out.Action, out.Reason = ActionFailed, "end run: "+err.Error()
		return out
	}
	if a.opts.Written != nil {
		a.opts.Written(e.RunID)
	}
	e.Closed, e.Resume = true, nil
	e.Seal = sealDue(e)
	if err := a.ledger.Put(e); err != nil {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	_, _ = a.seal(ctx, e)
	return out
}

// seal rewrites the raw capture of a run just ended (its end written,
// and its ledger entry saying so and marking the capture to be sealed,
// Entry.Seal) in whole frames (rawfile.Seal), when the run holds
// several parts: each part's bytes began a frame, and a session archived
// a little at every sync had its capture in small frames, which zstd
// compresses worse (the real captures of BenchmarkStoreSize in frames of
// 16 KiB: 0.30 of the logs' bytes, against 0.17 in frames of a MiB).
// Nothing extends an ended run's capture, and no Cut needs its parts'
// frame boundaries any more (a continued session is a new run). A run of
// one part is in whole frames already and is not read. The capture is
// left as it was when it cannot be sealed (err, said in the log): it is
// whole either way. Once tried, the mark is cleared (tried); a sync
// being cancelled leaves the mark for the next sync, which seals it
// first (Recover), as it does one a kill cut short: a copy left beside
// the capture is removed, never taken, and the capture sealed again.
func (a *Archiver) seal(ctx context.Context, e *Entry) (tried bool, err error) {
	if !e.Seal || a.opts.DryRun || ctx.Err() != nil {
		return false, nil
	}
	p, err := a.rawCapture(e.RunID, e.Raw)
	if err == nil {
		_, err = rawfile.Seal(p)
	}
	if err != nil {
		a.opts.Logger.Warn("archive: seal the raw capture of an ended run", "run", e.RunID, "path", e.Raw, "err", err)
	}
	e.Seal = false
	if perr := a.ledger.putLazy(e); perr != nil {
		a.opts.Logger.Warn("archive: note the raw capture of an ended run sealed", "run", e.RunID, "path", e.Raw, "err", perr)
	}
	return true, err
}

// endRun ends a run archived earlier by runctl.End (runErr: how, nil
// ok), dated last: the steps and sub-runs left open are closed as
// cancelled, and a child run's link in its parent is completed.
func (a *Archiver) endRun(ctx context.Context, runID string, runErr error, last time.Time) error {
	return runctl.End(ctx, a.opts.Store, runID, runErr, runctl.EndOptions{CancelOpen: true, RunOptions: lifecycle.RunOptions{
		Producer: a.opts.Producer, Logger: a.opts.Logger,
		Recorder: recorder.Options{Clock: func() time.Time { return last }, Logger: a.opts.Logger}}})
}

// finishRun ends the run a part was just written to (stepErr: the
// part's). A child run this archiver linked into its session's run (a
// sub-agent's file, e.Parent) is ended by endRun, which also completes
// the link in the session's run, as a sync's end of it would (Finish
// would leave the link open, to be closed as cancelled when the session's
// run ends); any other by Finish.
func (a *Archiver) finishRun(ctx context.Context, run *lifecycle.Run, e *Entry, stepErr error, last time.Time) error {
	ctx = context.WithoutCancel(ctx)
	if e.Parent == "" {
		return run.Finish(ctx, stepErr)
	}
	return errors.Join(run.Detach(), a.endRun(ctx, e.RunID, stepErr, last))
}

// StoreDir is a store's directory and the provider its sessions are
// read as: CloseGone closes only that provider's runs there.
type StoreDir struct{ Provider, Dir string }

// CloseGone ends the open runs whose source file is gone from a store
// that is still there (the agent deleted the session: nothing more can
// come). A store that vanished as a whole closes nothing, and a store
// closes only the runs of its own provider: a project directory holds
// one agent's store (Aider's history) and another's files (Crush's
// .crush/crush.db), which the first does not look for.
func (a *Archiver) CloseGone(ctx context.Context, present func(string) bool, stores []StoreDir) []Outcome {
	return a.closeGone(ctx, present, stores, whereOpen)
}

// closeGone is CloseGone asking present about the open runs of which
// (whereOpen, and whereUnlisted: those whose path SyncStores did not
// list, markListed).
func (a *Archiver) closeGone(ctx context.Context, present func(string) bool, stores []StoreDir, which int) []Outcome {
	// The open runs whose file the sync did not find, by run id: the
	// others are neither copied nor sorted.
	gone := a.ledger.whereOf(which, func(path string, closed bool) bool { return !closed && !present(path) })
	sort.Slice(gone, func(i, j int) bool { return gone[i].RunID < gone[j].RunID })
	var outs []Outcome
	for _, e := range gone {
		inStore := slices.ContainsFunc(stores, func(d StoreDir) bool {
			return d.Provider == e.Provider && strings.HasPrefix(e.Path, d.Dir+string(filepath.Separator))
		})
		if !inStore {
			continue
		}
		if _, err := os.Lstat(e.Path); err == nil || !errors.Is(err, os.ErrNotExist) {
			continue
		}
		outs = append(outs, a.closeRun(ctx, Outcome{Path: e.Path, Provider: e.Provider, DryRun: a.opts.DryRun}, &e, "the session file was deleted"))
	}
	return outs
}

// joinReason appends why to an outcome's reason.
func joinReason(reason, why string) string {
	if reason == "" {
		return why
	}
	return reason + "; " + why
}
