package recorder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/fanout"
	"github.com/twasm/twasm/internal/durable"
	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/oneopt"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/transcript"
)

// FsyncPolicy says when the transcript is flushed to stable storage.
type FsyncPolicy int

// The fsync policies.
const (
	// FsyncOnBoundary (the default, the zero value) syncs after
	// step.completed, step.call_workflow.completed and run.completed,
	// before Record returns: a finished step survives a power loss.
	FsyncOnBoundary FsyncPolicy = iota
	// FsyncNever leaves flushing to the operating system: a kill loses
	// nothing (the page cache survives a process), a power loss may.
	FsyncNever
	// FsyncAlways syncs after every event, before Record returns.
	FsyncAlways
)

type options struct {
	fsync       FsyncPolicy
	mask        func(ev *transcript.Event)
	bufSize     int
	logger      *slog.Logger
	now         func() time.Time
	noCreate    bool
	lockTimeout time.Duration
	lockWarn    time.Duration
	// dirSync, when set (tests), replaces durable.SyncDir.
	dirSync func(dir string) error
}

// Options configures a [Recorder]. The zero value is the default; [Open]
// and [Store.Open] take at most one.
type Options struct {
	// Fsync says when the transcript is flushed to stable storage
	// (default [FsyncOnBoundary]).
	Fsync FsyncPolicy
	// Mask, when set, rewrites secrets in every event, in place, before
	// it is validated and written (opt-in; twasm's --redact installs its
	// redactor here). It is called outside the recorder's lock, possibly
	// from several goroutines at once, so it must be safe for concurrent
	// use. It must not change the run id.
	Mask func(ev *transcript.Event)
	// Logger receives repairs, lock waits and dropped live events. Nil
	// means slog.Default(); a logger over slog.DiscardHandler discards.
	Logger *slog.Logger
	// Clock stamps the events that come without a timestamp. Nil means
	// time.Now.
	Clock func() time.Time
	// MustExist makes Open fail (wrapping fs.ErrNotExist) instead of
	// creating a transcript that does not exist: for continuing a run.
	MustExist bool
	// LockTimeout makes waiting for the file lock held by another process
	// fail with [ErrLockTimeout] after it. 0 waits as long as the context
	// allows.
	LockTimeout time.Duration
	// LockWarnAfter is how long a writer waits for the file lock before it
	// logs which process holds it: 0 means 3 s, negative never.
	LockWarnAfter time.Duration
	// SubscriberBuffer is how many events each [Recorder.Subscribe] feed
	// holds before it drops the newest: 0 means 256.
	SubscriberBuffer int
}

// resolve returns o with the defaults filled in.
func (o Options) resolve() options {
	r := options{
		fsync: o.Fsync, mask: o.Mask, bufSize: o.SubscriberBuffer, logger: o.Logger, now: o.Clock,
		noCreate: o.MustExist, lockTimeout: o.LockTimeout, lockWarn: o.LockWarnAfter,
	}
	if r.bufSize <= 0 {
		r.bufSize = fanout.DefaultBufferSize
	}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	switch {
	case r.lockWarn == 0:
		r.lockWarn = defaultLockWarnAfter
	case r.lockWarn < 0:
		r.lockWarn = 0
	}
	return r
}

// Errors callers branch on.
var (
	// ErrClosed is returned by Record, RecordBatch and RecordFunc after Close.
	ErrClosed = errors.New("recorder closed")
	// ErrRunMismatch: an event, or the file being opened, belongs to
	// another run. For an event it comes together with
	// transcript.ErrInvalidEvent.
	ErrRunMismatch = errors.New("run id mismatch")
	// ErrNotDurable: the event was written (and published) but the fsync
	// the policy asked for failed, so it may not survive a power loss.
	ErrNotDurable = errors.New("written but not synced")
	// ErrRunFinished: the run's transcript already holds run.completed,
	// after which nothing may be written.
	ErrRunFinished = errors.New("run already finished")
)

// tornSuffix is appended to a transcript's path to name the sidecar file
// that receives torn tails moved out of the transcript.
const tornSuffix = ".torn"

// tornRepair reports a torn tail moved out of the transcript into the
// sidecar.
type tornRepair struct {
	// Offset is where the torn bytes started in the transcript (the
	// transcript was truncated to Offset).
	Offset int64
	// Bytes is how many bytes were moved.
	Bytes int
	// Line is the 1-based line number the torn bytes occupied.
	Line int
	// Reason says when and why the repair was made.
	Reason string
}

// Recorder appends events to one run's transcript. See the package
// documentation for the contract.
type Recorder struct {
	journal     *journalWriter // this writer's entries in the storage's change journal (nil: none)
	path, runID string
	opts        options
	log         *slog.Logger
	fan         *fanout.Fanout[transcript.Event]

	batches sync.Pool // *batch: encoding buffers of RecordBatch
	// encSize is the size of the last batch encoded: the next batch's
	// buffer starts at that size, not grown from nothing (one above
	// maxKeptBuf is not kept, and grew again on every batch).
	encSize atomic.Int64

	mu       sync.Mutex     // the critical section: seq, write, publish
	wf, rf   *os.File       // append-only writer; reader for recovery
	fd       int            // wf's descriptor, for flock/fstat/write/ftruncate
	rfd      int            // rf's descriptor, for the wait signal (lease.go)
	buf      []byte         // the lines being written, reused
	end      int64          // offset after the last complete line read or written
	lines    int64          // complete lines before end
	state    runstate.State // the run as the file says up to end
	cpEnd    int64          // end when the last checkpoint was written
	repairs  []tornRepair
	closed   bool
	closeEr  error
	unsynced bool // this recorder wrote since its last successful fsync
	// dirs are the directory entries the file relies on that this
	// recorder has not made durable yet: synced right after the file's
	// first fsync (syncFile), so that no promise rests on them.
	dirs  durable.Dirs
	dirBG *dirSync // the entry's background sync (startDirSync)

	// The lease (lease.go), under mu: held says the file lock is kept
	// between critical sections.
	held, noLease, wanting, idleArmed bool
	yielded                           time.Time   // when the lock was given up to a waiter
	ignoreWant                        time.Time   // wait signals are ignored until then
	idle                              *time.Timer // set by Open, never changed
	// Shared by the critical sections and the idle timer's tick, which
	// takes no lock while appends keep coming: used says an append kept
	// the lease since the last tick, lookDue that a tick asks the next
	// critical section to look for waiters.
	used, lookDue atomic.Bool

	lastSeq atomic.Uint64

	// cpEvery is checkpointEvery; tests make it small.
	cpEvery int64

	// Test hooks (nil in production): fault injection for the write and
	// truncate system calls.
	writeHook    func(fd int, b []byte) (int, error)
	truncateHook func(fd int, size int64) error
	fileSyncHook func() error // instead of wf.Sync, to watch the fsyncs
}

// maxKeptBuf bounds the buffers kept for reuse, so one huge event does not
// pin megabytes for the life of the recorder.
const maxKeptBuf = 256 << 10

// Open opens the transcript at path for runID, creating it (mode 0600,
// parent directories 0700; see [Options].MustExist) or continuing it: the
// run state is recovered from the checkpoint beside the file and the lines
// after it (the whole file when there is no usable checkpoint), and a torn
// last line is moved to the sidecar <path>.torn and logged. ctx bounds the
// wait for the file lock. runID is a UUID v4 in its canonical lower-case
// spelling (github.com/google/uuid's NewString makes one), else the error
// matches [ErrInvalidRunID]. opts is at most one [Options] (none: the
// defaults).
func Open(ctx context.Context, path, runID string, opts ...Options) (*Recorder, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w", path, err)
	}
	if err := runid.Valid(runID); err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w", path, err)
	}
	return open(ctx, path, runID, oneopt.Get("recorder.Open", opts).resolve())
}

// open is Open with resolved options.
func open(ctx context.Context, path, runID string, o options) (*Recorder, error) {
	dir := filepath.Dir(path)
	// O_NOFOLLOW: a symlink planted at the path cannot redirect the
	// writes. O_NONBLOCK: a FIFO planted there cannot hang the open; it is
	// then rejected as not regular (the flag is harmless on regular files).
	flags := os.O_APPEND | os.O_WRONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	var dirs durable.Dirs
	if o.fsync != FsyncNever {
		dirs.Fsync = durable.SyncDir
		if o.dirSync != nil {
			dirs.Fsync = o.dirSync
		}
	}
	if !o.noCreate {
		// A directory created here (shared by every run) is made durable
		// in its parent at once (internal/durable).
		if err := durable.MkdirAll(dir, 0o700, dirs.Fsync); err != nil {
			return nil, fmt.Errorf("recorder: open %s: %w", path, err)
		}
		flags |= os.O_CREATE
	}
	// The storage's change journal hears of this writer before its first
	// write and after its last (internal/journal), so that the search
	// index reads what changed instead of checking every transcript.
	jw := beginJournal(path, runID, o.logger)
	fail := func(err error) (*Recorder, error) { jw.end(o.logger); return nil, err }
	// The file's entry must be durable by the file's first fsync (see
	// syncFile), whoever created it: another process may not have synced
	// it yet, or been killed before it did. Its sync starts at the end of
	// Open, in the background.
	dirs.Add(dir)
	wf, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ELOOP) {
		// ENXIO: a FIFO without a reader; ELOOP: a symlink. Name it.
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%w (%w)", regfile.NotRegular(fi.Mode()), err)
		}
	}
	if err != nil {
		return fail(fmt.Errorf("recorder: open %s: %w", path, err))
	}
	rf, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail(errors.Join(fmt.Errorf("recorder: open %s for reading: %w", path, err), wf.Close()))
	}
	r := &Recorder{journal: jw, path: path, runID: runID, opts: o, log: o.logger, wf: wf, rf: rf, fd: int(wf.Fd()), rfd: int(rf.Fd()), cpEvery: checkpointEvery, dirs: dirs}
	r.batches.New = func() any { return &batch{} }
	r.newIdleTimer()
	if err := r.checkFiles(); err != nil {
		return fail(errors.Join(err, wf.Close(), rf.Close()))
	}
	r.probeLease()
	if err := r.lockFile(ctx); err != nil {
		return fail(errors.Join(err, wf.Close(), rf.Close()))
	}
	if err := r.recover(); err != nil {
		r.unlockFile()
		return fail(errors.Join(err, wf.Close(), rf.Close()))
	}
	r.fan = fanout.New[transcript.Event](fanout.Options{BufferSize: o.bufSize, Logger: o.logger})
	r.startDirSync(dir)
	// The first append usually follows at once: keep the lock as a lease.
	r.mu.Lock()
	r.endLocked(true)
	r.mu.Unlock()
	return r, nil
}

// recover sets the starting point from the checkpoint and reads the rest.
// Called with the file lock held.
func (r *Recorder) recover() error {
	var st unix.Stat_t
	if err := fstat(r.fd, &st); err != nil {
		return fmt.Errorf("recorder: stat %s: %w", r.path, err)
	}
	r.loadCheckpoint(st.Size)
	r.lastSeq.Store(r.state.LastSeq)
	return r.refreshTail("at open")
}

// checkFiles rejects anything but a regular file, and a path swapped
// between the two opens (both descriptors must be the same file).
func (r *Recorder) checkFiles() error {
	wi, err := r.wf.Stat()
	if err != nil {
		return fmt.Errorf("recorder: open %s: %w", r.path, err)
	}
	if !wi.Mode().IsRegular() {
		return fmt.Errorf("recorder: open %s: %w", r.path, regfile.NotRegular(wi.Mode()))
	}
	ri, err := r.rf.Stat()
	if err != nil {
		return fmt.Errorf("recorder: open %s: %w", r.path, err)
	}
	if !os.SameFile(wi, ri) {
		return fmt.Errorf("recorder: open %s: the path was replaced while opening", r.path)
	}
	return nil
}

// refreshTail reads what other writers appended since r.end (the file is
// bigger than what this recorder last read or wrote), updating the run
// state, and repairs a torn tail. A file that shrank behind the lock
// (another program truncated it) is read again from the start. Called
// with mu and the file lock held.
func (r *Recorder) refreshTail(when string) error {
	var st unix.Stat_t
	if err := fstat(r.fd, &st); err != nil {
		return fmt.Errorf("recorder: stat %s: %w", r.path, err)
	}
	if st.Size == r.end {
		return nil
	}
	if st.Size < r.end {
		r.log.Warn("recorder: the transcript shrank behind the lock (truncated by another program); reading it again from the start",
			"path", r.path, "size", st.Size, "expected", r.end)
		r.end, r.lines, r.state, r.cpEnd = 0, 0, runstate.State{}, 0
	}
	state := r.state.Clone()
	sc := scanner{ra: r.rf, runID: r.runID, st: &state, lines: r.lines}
	end, err := sc.scan(r.end, st.Size)
	if err != nil {
		return fmt.Errorf("recorder: read %s from offset %d: %w", r.path, r.end, err)
	}
	r.end, r.lines, r.state = end, sc.lines, state
	r.lastSeq.Store(state.LastSeq)
	if end < st.Size {
		if err := r.repair(end, st.Size, "torn tail (no trailing LF) found "+when); err != nil {
			return err
		}
	}
	return nil
}

func truncateID(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		err := unix.Fstat(fd, st)
		if err != unix.EINTR {
			return err
		}
	}
}

// repair moves the torn bytes [end, size) to the sidecar, makes the
// sidecar durable, and only then truncates the transcript: a crash in
// between leaves the bytes in both places (a duplicate), never in neither.
func (r *Recorder) repair(end, size int64, reason string) error {
	rep := tornRepair{Offset: end, Bytes: int(size - end), Line: int(r.lines) + 1, Reason: reason}
	side := r.path + tornSuffix
	if err := r.writeSidecar(side, rep); err != nil {
		return fmt.Errorf("recorder: repair %s: %w", r.path, err)
	}
	if err := r.truncate(end); err != nil {
		return fmt.Errorf("recorder: repair %s: truncate to %d: %w", r.path, end, err)
	}
	if r.opts.fsync != FsyncNever {
		if err := r.syncFile(); err != nil {
			return fmt.Errorf("recorder: repair %s: %w", r.path, err)
		}
	}
	r.repairs = append(r.repairs, rep)
	r.log.Warn("recorder: repaired a torn last line: moved it to the sidecar",
		"path", r.path, "sidecar", side, "offset", rep.Offset, "bytes", rep.Bytes, "line", rep.Line, "reason", reason)
	return nil
}

// writeSidecar appends one JSON line describing the repair, with the torn
// bytes base64-encoded (they may be any bytes, so base64 keeps them
// exactly). It runs under the transcript's file lock, which every writer of
// the sidecar holds, so sidecar lines do not interleave either.
func (r *Recorder) writeSidecar(side string, rep tornRepair) error {
	sf, err := os.OpenFile(side, os.O_APPEND|os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	defer sf.Close()
	fi, err := sf.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", side, regfile.ErrNotRegular)
	}
	w := bufio.NewWriterSize(sf, 64<<10)
	if n := fi.Size(); n > 0 {
		// A previous repair killed mid-way left a partial sidecar line:
		// start on a fresh line so this record stays parseable.
		var last [1]byte
		if _, err := sf.ReadAt(last[:], n-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			w.WriteByte('\n')
		}
	}
	hdr := []byte(`{"run_id":`)
	hdr = jsonstr.AppendQuoted(hdr, r.runID)
	hdr = append(hdr, `,"offset":`...)
	hdr = strconv.AppendInt(hdr, rep.Offset, 10)
	hdr = append(hdr, `,"bytes":`...)
	hdr = strconv.AppendInt(hdr, int64(rep.Bytes), 10)
	hdr = append(hdr, `,"line":`...)
	hdr = strconv.AppendInt(hdr, int64(rep.Line), 10)
	hdr = append(hdr, `,"reason":`...)
	hdr = jsonstr.AppendQuoted(hdr, rep.Reason)
	hdr = append(hdr, `,"repaired_at":"`...)
	hdr = r.opts.now().UTC().AppendFormat(hdr, vocab.TimeLayout)
	hdr = append(hdr, `","data_base64":"`...)
	w.Write(hdr)
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if _, err := io.Copy(enc, io.NewSectionReader(r.rf, rep.Offset, int64(rep.Bytes))); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	w.WriteString("\"}\n")
	if err := w.Flush(); err != nil {
		return err
	}
	// Always synced, whatever the policy, and its entry too (a new file,
	// or one whose creator may have been killed before it synced): the
	// transcript is truncated next, and the sidecar is then the only copy.
	if err := sf.Sync(); err != nil {
		return err
	}
	return durable.SyncDir(filepath.Dir(side))
}

func (r *Recorder) truncate(size int64) error {
	if r.truncateHook != nil {
		return r.truncateHook(r.fd, size)
	}
	for {
		err := unix.Ftruncate(r.fd, size)
		if err != unix.EINTR {
			return err
		}
	}
}

func (r *Recorder) write(b []byte) (int, error) {
	if r.writeHook != nil {
		return r.writeHook(r.fd, b)
	}
	for {
		n, err := unix.Write(r.fd, b)
		if err == unix.EINTR && n <= 0 {
			continue
		}
		return n, err
	}
}

// seqZero is how AppendEvent starts a line whose seq is 0: Record encodes
// outside the lock with seq 0 and splices the real seq in under the lock,
// so the expensive encoding runs in parallel and the critical section is
// a splice and a write.
var seqZero = []byte(`{"seq":0,`)

// seqRoom is the room a batch keeps before its first line, so that a
// single line's seq (up to 20 digits where seqZero has one) is written in
// place, without copying the line.
const seqRoom = 19

// batch holds a batch of events encoded with seq 0, after seqRoom bytes
// of room: line i, its LF included, is buf[offs[i]:offs[i+1]].
type batch struct {
	buf  []byte
	offs []int
}

// Record assigns ev the next seq and appends it. In order, outside the
// lock: the run id is filled in when empty (another run's id is an error
// wrapping [ErrRunMismatch] and transcript.ErrInvalidEvent), a zero
// timestamp is set to now, the masker runs, the event is validated and
// encoded (errors wrap transcript.ErrInvalidEvent). Then, in one critical
// section: the file lock is taken and what other writers appended is read
// (unless the recorder holds the lock as a lease, see the package
// documentation), an append to a finished run is refused
// ([ErrRunFinished]), the seq is allocated, the line written with one
// write(2) and the event published to subscribers. Finally it syncs as
// the policy says. ev.Seq is set on success; Record may also have changed ev's run
// id, timestamp and (through the masker) strings. A failed write leaves
// the file as it was and consumes no seq.
func (r *Recorder) Record(ctx context.Context, ev *transcript.Event) error {
	one := [1]*transcript.Event{ev}
	return r.RecordBatch(ctx, one[:])
}

// RecordBatch records evs as consecutive seqs in one critical section: at
// most one lock and one read of what others appended, and one write(2) of
// all the lines. Each event
// is prepared as by [Recorder.Record]; an invalid event fails the whole batch
// before anything is written, and so does run.completed anywhere but
// last. A failed write leaves the file as it was (see the package
// documentation for the one exception) and consumes no seq. The fsync
// policy applies to the batch: it is synced when any of its events asks
// for it.
func (r *Recorder) RecordBatch(ctx context.Context, evs []*transcript.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("recorder: record %s: %w", typeOf(evs), err)
	}
	b := r.batches.Get().(*batch)
	defer r.putBatch(b)
	if err := r.encode(b, evs); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter(ctx, typeOf(evs)); err != nil {
		return err
	}
	err := r.appendLocked(evs, b)
	sync := err == nil && r.needSync(evs)
	r.endLocked(err == nil && !sync)
	if err != nil {
		return err
	}
	return r.published(evs, sync)
}

// RecordFunc runs decide inside the critical section with the run's
// current state (everything in the file, from every writer) and appends
// the events it returns as one batch, in the same critical section: a
// decision that depends on the state (end the run once; close the steps
// still open) cannot be raced by another writer. decide returning an
// error or no events writes nothing; its error is returned as is. A
// decide that panics writes nothing either, and the file lock is
// released before the panic goes on. The
// state's type is internal: RecordFunc serves package lifecycle, which
// ends runs with it.
func (r *Recorder) RecordFunc(ctx context.Context, decide func(runstate.State) ([]*transcript.Event, error)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("recorder: record: %w", err)
	}
	b := r.batches.Get().(*batch)
	defer r.putBatch(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter(ctx, "events"); err != nil {
		return err
	}
	evs, err := r.decideLocked(decide)
	if err == nil && len(evs) > 0 {
		if err = r.encode(b, evs); err == nil {
			err = r.appendLocked(evs, b)
		}
	}
	sync := err == nil && r.needSync(evs)
	r.endLocked(err == nil && !sync)
	if err != nil || len(evs) == 0 {
		return err
	}
	return r.published(evs, sync)
}

// decideLocked runs RecordFunc's decide with the run's state. A decide
// that panics ends the critical section (the file lock is released, not
// kept as a lease, so other writers do not wait for it until Close)
// before the panic goes on. Called with mu held.
func (r *Recorder) decideLocked(decide func(runstate.State) ([]*transcript.Event, error)) (evs []*transcript.Event, err error) {
	returned := false
	defer func() {
		if !returned {
			r.endLocked(false)
		}
	}()
	evs, err = decide(r.state.Clone())
	returned = true
	return evs, err
}

// State returns the run's state as of this recorder's last critical
// section; other processes may have appended since. [Recorder.RecordFunc] sees the
// current one. Its fields (the first event's type, the run's name and
// parent, whether it finished, the last seq, the open steps and sub-run
// links) can be read; its type is internal, as for RecordFunc.
func (r *Recorder) State() runstate.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.Clone()
}

// enter checks that the recorder is open, takes the file lock (unless it
// holds it as a lease) and reads what other writers appended. Called with
// mu held; the caller ends the critical section with endLocked.
func (r *Recorder) enter(ctx context.Context, what transcript.EventType) error {
	if r.closed {
		return fmt.Errorf("recorder: record %s: %w", what, ErrClosed)
	}
	if err := ctx.Err(); err != nil { // cancelled while queued on mu
		return fmt.Errorf("recorder: record %s: %w", what, err)
	}
	return r.acquire(ctx, "before an append")
}

// needSync says whether the policy asks for an fsync after evs.
func (r *Recorder) needSync(evs []*transcript.Event) bool {
	switch r.opts.fsync {
	case FsyncAlways:
		return true
	case FsyncOnBoundary:
		for _, ev := range evs {
			if boundary(ev.Type) {
				return true
			}
		}
	}
	return false
}

// published hands the written events to the subscribers and syncs when
// asked. Called with mu held; before an fsync the file lock is released,
// so that other writers do not wait for it.
func (r *Recorder) published(evs []*transcript.Event, sync bool) error {
	for _, ev := range evs {
		r.fan.Publish(*ev)
	}
	if sync {
		if err := r.syncFile(); err != nil {
			last := evs[len(evs)-1]
			return fmt.Errorf("recorder: record %s seq %d: %w: %w", last.Type, last.Seq, ErrNotDurable, err)
		}
	}
	return nil
}

// startDirSync syncs dir, which holds the file's entry, in the
// background: a run's first promise (its first step's end) usually comes
// much later, and the sync then costs it nothing. syncFile relies on it
// only once it has succeeded; a failed one is the first promise's error
// (ErrNotDurable), even though that promise syncs the entry again. Close
// waits for it.
func (r *Recorder) startDirSync(dir string) {
	fsync := r.dirs.Fsync
	if fsync == nil {
		return
	}
	bg := &dirSync{dir: dir, done: make(chan struct{})}
	r.dirBG = bg
	go func() {
		defer close(bg.done)
		bg.err = fsync(dir)
	}()
}

// dirSync is the background sync of the directory of the file's entry.
type dirSync struct {
	dir  string
	done chan struct{}
	err  error
	// settled (under mu) says a promise has taken the sync into account
	// (its success, or its failure reported) or synced the entry itself.
	settled bool
}

// syncFile fsyncs the transcript and then, the first time, its entry in
// its directory (r.dirs), unless the background sync (startDirSync) has
// made it durable already: before the caller is told that anything is
// durable, the file's entry is. File first: a journalling file system
// (ext4) commits every metadata change made so far with the file's fsync,
// so the directory's fsync that follows finds nothing left to commit and
// costs a cache flush; in the other order it would commit on its own. Called with mu held
// (or from Open's recovery, before anyone else holds the recorder).
func (r *Recorder) syncFile() error {
	sync := r.wf.Sync
	if r.fileSyncHook != nil {
		sync = r.fileSyncHook
	}
	if err := sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	var bgErr error
	bg := r.dirBG
	if bg != nil && !bg.settled {
		select {
		case <-bg.done:
			bg.settled = true
			if bg.err == nil {
				r.dirs.Drop(bg.dir)
			} else {
				// Synced again below, but a failed fsync is reported once
				// (the kernel may have dropped what it could not write),
				// so a success now proves nothing: this promise fails.
				bgErr = fmt.Errorf("background sync of the file's entry: %w", bg.err)
			}
		default: // still under way: sync the entry here
		}
	}
	if err := errors.Join(bgErr, r.dirs.Sync()); err != nil {
		return err // still unsynced: Close tries again
	}
	if bg != nil {
		bg.settled = true // the entry is synced: its background sync no longer counts
	}
	r.unsynced = false
	return nil
}

// putBatch keeps b for the next batch; a buffer above maxKeptBuf is let
// go (the next encode starts at the size of this one), its line offsets
// are kept.
func (r *Recorder) putBatch(b *batch) {
	if cap(b.buf) > maxKeptBuf {
		b.buf = nil
	}
	r.batches.Put(b)
}

func typeOf(evs []*transcript.Event) transcript.EventType {
	if len(evs) == 1 && evs[0] != nil {
		return evs[0].Type
	}
	return transcript.EventType(strconv.Itoa(len(evs)) + " events")
}

// encode prepares and encodes evs with seq 0 into b.
func (r *Recorder) encode(b *batch, evs []*transcript.Event) error {
	if hint := int(r.encSize.Load()); cap(b.buf) < hint {
		b.buf = make([]byte, 0, hint)
	}
	defer func() { r.encSize.Store(int64(len(b.buf))) }()
	b.buf, b.offs = append(b.buf[:0], make([]byte, seqRoom)...), append(b.offs[:0], seqRoom)
	for i, ev := range evs {
		if ev == nil {
			return fmt.Errorf("recorder: record: %w: nil event", transcript.ErrInvalidEvent)
		}
		if ev.Type == transcript.RunCompleted && i != len(evs)-1 {
			return fmt.Errorf("recorder: record: %w: run.completed must be the last event of a batch", transcript.ErrInvalidEvent)
		}
		if err := r.prepare(ev); err != nil {
			return err
		}
		ev.Seq = 0
		var err error
		if b.buf, err = transcript.AppendEvent(b.buf, ev); err != nil {
			return fmt.Errorf("recorder: record %s: %w", ev.Type, err)
		}
		b.buf = append(b.buf, '\n')
		b.offs = append(b.offs, len(b.buf))
	}
	return nil
}

func boundary(t transcript.EventType) bool {
	return t == transcript.StepCompleted || t == transcript.StepCallWorkflowCompleted || t == transcript.RunCompleted
}

func (r *Recorder) prepare(ev *transcript.Event) error {
	if err := r.checkRun(ev); err != nil {
		return err
	}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = r.opts.now()
	}
	if r.opts.mask != nil {
		// The masker gets a copy: a function value could keep what it
		// is given, so handing it ev itself would make every caller's
		// event escape to the heap, masking or not.
		m := *ev
		r.opts.mask(&m)
		*ev = m
		if err := r.checkRun(ev); err != nil {
			return fmt.Errorf("after masking: %w", err)
		}
	}
	return nil
}

func (r *Recorder) checkRun(ev *transcript.Event) error {
	switch ev.RunID {
	case r.runID:
	case "":
		ev.RunID = r.runID
	default:
		return fmt.Errorf("recorder: record %s: %w: %w: event run id %q, recorder run id %q",
			ev.Type, transcript.ErrInvalidEvent, ErrRunMismatch, truncateID(ev.RunID), r.runID)
	}
	return nil
}

// appendLocked refuses an append to a finished run, allocates the seqs,
// splices them into the encoded lines and writes them with one write(2).
// Called with mu and the file lock held, after refreshTail.
func (r *Recorder) appendLocked(evs []*transcript.Event, b *batch) error {
	if r.state.Finished {
		return fmt.Errorf("recorder: record %s: %w: run %s ended with run.completed at seq %d; nothing may follow it",
			typeOf(evs), ErrRunFinished, r.runID, r.state.LastSeq)
	}
	first := r.lastSeq.Load() + 1
	out, err := r.splice(evs, b, first)
	defer func() {
		if cap(r.buf) > maxKeptBuf {
			r.buf = nil
		}
	}()
	if err != nil {
		return err
	}
	if err := r.writeAll(out); err != nil {
		// Undo a partial write so the file keeps only complete lines and
		// no seq is consumed. If even that fails, the next append reads
		// the partial lines: complete ones count as written, a partial
		// one is moved to the sidecar.
		if terr := r.truncate(r.end); terr != nil {
			r.log.Warn("recorder: could not undo a failed write", "path", r.path, "offset", r.end, "err", terr)
		}
		what := string(evs[0].Type)
		if len(evs) > 1 {
			what = fmt.Sprintf("%d events (%s ... %s)", len(evs), evs[0].Type, evs[len(evs)-1].Type)
		}
		return fmt.Errorf("recorder: write %s seq %d to %s: %w", what, first, r.path, err)
	}
	for i, ev := range evs {
		ev.Seq = first + uint64(i)
		if runstate.Brackets(string(ev.Type)) {
			h := runstate.HeadOf(ev)
			r.state.Apply(&h)
		}
	}
	last := first + uint64(len(evs)) - 1
	r.unsynced = true
	r.state.LastSeq = last
	r.end += int64(len(out))
	r.lines += int64(len(evs))
	r.lastSeq.Store(last)
	if r.end-r.cpEnd >= r.cpEvery {
		r.saveCheckpoint()
	}
	return nil
}

// splice returns the lines of b with their seqs, from first, as one
// buffer to write. A single line's seq goes in place, into the room
// before it; a batch is copied into r.buf.
func (r *Recorder) splice(evs []*transcript.Event, b *batch, first uint64) ([]byte, error) {
	if len(evs) == 1 && bytes.HasPrefix(b.buf[b.offs[0]:], seqZero) {
		var pre [len(`{"seq":,`) + 20]byte
		p := append(pre[:0], `{"seq":`...)
		p = strconv.AppendUint(p, first, 10)
		p = append(p, ',')
		start := b.offs[0] + len(seqZero) - len(p)
		copy(b.buf[start:], p)
		return b.buf[start:b.offs[1]], nil
	}
	// Sized at once: a batch's seqs add at most 19 bytes a line to its
	// lines. A buffer grown line by line copied the batch once per
	// doubling, and one above maxKeptBuf, not kept, grew again from
	// nothing on every batch.
	if need := len(b.buf) - b.offs[0] + (seqRoom+1)*len(evs); cap(r.buf) < need {
		r.buf = make([]byte, 0, need)
	}
	r.buf = r.buf[:0]
	for i, ev := range evs {
		line := b.buf[b.offs[i]:b.offs[i+1]]
		if rest, ok := bytes.CutPrefix(line, seqZero); ok {
			r.buf = append(r.buf, `{"seq":`...)
			r.buf = strconv.AppendUint(r.buf, first+uint64(i), 10)
			r.buf = append(r.buf, ',')
			r.buf = append(r.buf, rest...)
			continue
		}
		// The encoder's layout changed: encode again with the seq.
		ev.Seq = first + uint64(i)
		var err error
		r.buf, err = transcript.AppendEvent(r.buf, ev)
		ev.Seq = 0
		if err != nil {
			return nil, fmt.Errorf("recorder: record %s: %w", ev.Type, err)
		}
		r.buf = append(r.buf, '\n')
	}
	return r.buf, nil
}

// writeAll writes b with one write(2). When the kernel takes only part of
// it (a full disk, a signal), the rest follows under the same lock, so a
// short write either completes the lines or ends with the real error
// (ENOSPC, EIO) rather than a bare "short write".
func (r *Recorder) writeAll(b []byte) error {
	for len(b) > 0 {
		n, err := r.write(b)
		if err != nil {
			return err
		}
		if n <= 0 {
			return io.ErrShortWrite
		}
		b = b[n:]
	}
	return nil
}

// Subscribe returns a live feed of the events this recorder writes from
// now on (not those of other processes), in seq order, and stop, which
// ends it. The feed holds [Options].SubscriberBuffer events; when the
// reader falls that far behind, the newest events are dropped for it alone
// (and the drops logged), so a slow reader never slows the writers. The
// channel is closed, after the events already in it, by stop or by
// [Recorder.Close]. The events share their payload with the caller of
// Record: treat them as read-only.
func (r *Recorder) Subscribe() (events <-chan transcript.Event, stop func()) {
	sub := r.fan.Subscribe()
	return sub.C(), sub.Close
}

// repairsMade returns the torn tails repaired so far, oldest first.
func (r *Recorder) repairsMade() []tornRepair {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.repairs)
}

// Fsync returns the recorder's fsync policy, which a writer of files the
// transcript names (package capture's raw captures) follows too.
func (r *Recorder) Fsync() FsyncPolicy { return r.opts.fsync }

// Path returns the transcript path.
func (r *Recorder) Path() string { return r.path }

// closeLockWait bounds how long Close waits for the file lock to write the
// checkpoint; without the lock it skips it (the next opener reads more).
const closeLockWait = time.Second

// Close writes the run's checkpoint (or removes it once the run has
// finished), syncs what this recorder wrote since its last fsync (unless
// the policy is FsyncNever), closes the file and
// closes every subscription. It is idempotent: later calls return the
// first result.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.closeEr
	}
	r.closed = true
	r.idle.Stop()
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), closeLockWait)
	err := error(nil)
	if !r.held {
		err = r.lockFile(ctx)
	}
	if err == nil {
		if err := r.refreshTail("at close"); err != nil {
			errs = append(errs, err)
		} else if r.cpEnd != r.end || r.state.Finished {
			r.saveCheckpoint()
		}
		r.release()
	} else {
		r.log.Info("recorder: no checkpoint written: the lock is busy", "path", r.path, "err", err)
	}
	cancel()
	if r.opts.fsync != FsyncNever && r.unsynced {
		if err := r.syncFile(); err != nil {
			errs = append(errs, fmt.Errorf("recorder: close %s: %w", r.path, err))
		}
	}
	if r.dirBG != nil {
		<-r.dirBG.done // nothing outlives the recorder
	}
	if err := r.wf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("recorder: close %s: %w", r.path, err))
	}
	if err := r.rf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("recorder: close %s (reader): %w", r.path, err))
	}
	r.fan.Close()
	r.journal.end(r.log)
	r.closeEr = errors.Join(errs...)
	return r.closeEr
}
