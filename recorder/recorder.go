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
	"github.com/twasm/twasm/transcript"
)

// FsyncPolicy says when the transcript is flushed to stable storage.
type FsyncPolicy int

// The fsync policies.
const (
	// FsyncNever leaves flushing to the operating system: a kill loses
	// nothing (the page cache survives a process), a power loss may.
	FsyncNever FsyncPolicy = iota
	// FsyncOnBoundary (the default) syncs after step.completed,
	// step.call_workflow.completed and run.completed, before Record
	// returns: a finished step survives a power loss.
	FsyncOnBoundary
	// FsyncAlways syncs after every event, before Record returns.
	FsyncAlways
)

func (p FsyncPolicy) String() string {
	switch p {
	case FsyncNever:
		return "never"
	case FsyncOnBoundary:
		return "on-boundary"
	case FsyncAlways:
		return "always"
	}
	return "FsyncPolicy(" + strconv.Itoa(int(p)) + ")"
}

// Masker rewrites secrets in an event before it is validated and written.
// It is called outside the recorder's lock, possibly from several
// goroutines at once, so it must be safe for concurrent use. It must not
// change the run id.
type Masker interface{ Mask(ev *transcript.Event) }

type options struct {
	fsync   FsyncPolicy
	mask    Masker
	bufSize int
	logger  *slog.Logger
	now     func() time.Time
}

// Option configures a [Recorder].
type Option func(*options)

// WithFsync sets the fsync policy (default [FsyncOnBoundary]).
func WithFsync(p FsyncPolicy) Option { return func(o *options) { o.fsync = p } }

// WithMask installs a masker (opt-in; see package redact).
func WithMask(m Masker) Option { return func(o *options) { o.mask = m } }

// WithBufferSize sets the default per-subscriber buffer of the fan-out
// (default [fanout.DefaultBufferSize]).
func WithBufferSize(n int) Option { return func(o *options) { o.bufSize = n } }

// WithLogger sets the logger for repairs and drop warnings (default
// slog.Default()); nil discards.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		o.logger = l
	}
}

// WithClock sets the clock that stamps events without a timestamp.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// Errors callers branch on.
var (
	// ErrClosed is returned by Record and Sync after Close.
	ErrClosed = errors.New("recorder closed")
	// ErrRunMismatch: an event, or the file being opened, belongs to
	// another run. For an event it comes together with
	// transcript.ErrInvalidEvent.
	ErrRunMismatch = errors.New("run id mismatch")
	// ErrNotDurable: the event was written (and published) but the fsync
	// the policy asked for failed, so it may not survive a power loss.
	ErrNotDurable = errors.New("written but not synced")
	// ErrNotRegular: the transcript path is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
)

// TornSuffix is appended to a transcript's path to name the sidecar file
// that receives torn tails moved out of the transcript.
const TornSuffix = ".torn"

// Repair reports a torn tail moved out of the transcript into the sidecar.
type Repair struct {
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
	path, runID string
	opts        options
	log         *slog.Logger
	fan         *fanout.Fanout[transcript.Event]
	encBufs     sync.Pool // *[]byte: per-call encoding buffers, reused

	mu      sync.Mutex // the critical section: seq, write, publish
	wf, rf  *os.File   // append-only writer; reader for tail recovery
	fd      int        // wf's descriptor, for flock/fstat/write/ftruncate
	buf     []byte     // the line being written, reused
	end     int64      // file size after our last write or scan
	stale   bool       // rescan the tail before the next append
	repairs []Repair
	closed  bool
	closeEr error

	lastSeq atomic.Uint64

	// Test hooks (nil in production): fault injection for the write and
	// truncate system calls.
	writeHook    func(fd int, b []byte) (int, error)
	truncateHook func(fd int, size int64) error
}

// maxKeptBuf bounds the buffers kept for reuse, so one huge event does not
// pin megabytes for the life of the recorder.
const maxKeptBuf = 256 << 10

// Open opens the transcript at path for runID, creating it (mode 0600,
// parent directories 0700) or continuing it: the last seq is recovered
// from the file and a torn last line is moved to the sidecar and reported
// (see Repairs). ctx bounds the wait for the file lock.
func Open(ctx context.Context, path, runID string, opts ...Option) (*Recorder, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w", path, err)
	}
	if err := ValidRunID(runID); err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w", path, err)
	}
	o := options{fsync: FsyncOnBoundary, bufSize: fanout.DefaultBufferSize, logger: slog.Default(), now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w", path, err)
	}
	// O_NOFOLLOW: a symlink planted at the path cannot redirect the
	// writes. O_NONBLOCK: a FIFO planted there cannot hang the open; it is
	// then rejected as not regular (the flag is harmless on regular files).
	wf, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w", path, err)
	}
	rf, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("recorder: open %s for reading: %w", path, err), wf.Close())
	}
	r := &Recorder{path: path, runID: runID, opts: o, log: o.logger, wf: wf, rf: rf, fd: int(wf.Fd())}
	r.encBufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	if err := r.checkFiles(); err != nil {
		return nil, errors.Join(err, wf.Close(), rf.Close())
	}
	r.stale = true // scan the tail whatever the size
	if err := r.lockFile(ctx); err != nil {
		return nil, errors.Join(err, wf.Close(), rf.Close())
	}
	err = r.refreshTail("at open")
	r.unlockFile()
	if err != nil {
		return nil, errors.Join(err, wf.Close(), rf.Close())
	}
	if o.fsync != FsyncNever {
		// Make the directory entry of a new file durable too.
		if err := syncDir(dir); err != nil {
			return nil, errors.Join(err, wf.Close(), rf.Close())
		}
	}
	r.fan = fanout.New[transcript.Event](fanout.WithBufferSize(o.bufSize), fanout.WithLogger(o.logger))
	return r, nil
}

// checkFiles rejects anything but a regular file, and a path swapped
// between the two opens (both descriptors must be the same file).
func (r *Recorder) checkFiles() error {
	wi, err := r.wf.Stat()
	if err != nil {
		return fmt.Errorf("recorder: open %s: %w", r.path, err)
	}
	if !wi.Mode().IsRegular() {
		return fmt.Errorf("recorder: open %s: %w (%s)", r.path, ErrNotRegular, wi.Mode().Type())
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("recorder: sync dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recorder: sync dir %s: %w", dir, err)
	}
	return nil
}

// lockFile takes the advisory lock shared with every other recorder (in
// this or another process) appending to the same file. With a context that
// can be cancelled it polls, so that ctx bounds the wait; otherwise it
// blocks in the kernel, which is fairer under contention.
func (r *Recorder) lockFile(ctx context.Context) error {
	err := flock(r.fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("recorder: lock %s: %w", r.path, err)
	}
	done := ctx.Done()
	if done == nil {
		if err := flock(r.fd, unix.LOCK_EX); err != nil {
			return fmt.Errorf("recorder: lock %s: %w", r.path, err)
		}
		return nil
	}
	wait := 20 * time.Microsecond
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-done:
			return fmt.Errorf("recorder: waiting for the lock of %s: %w", r.path, ctx.Err())
		case <-t.C:
		}
		err := flock(r.fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("recorder: lock %s: %w", r.path, err)
		}
		wait = min(2*wait, 5*time.Millisecond)
		t.Reset(wait)
	}
}

func (r *Recorder) unlockFile() {
	if err := flock(r.fd, unix.LOCK_UN); err != nil {
		// Closing the descriptor releases the lock anyway; other writers
		// are only delayed until then.
		r.log.Warn("recorder: unlock failed", "path", r.path, "err", err)
	}
}

func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			return err
		}
	}
}

// refreshTail re-reads the end of the file when another writer may have
// appended (the size is not the one we left) or when a previous failure
// left the end unknown. It repairs a torn tail. Called with mu and the
// file lock held.
func (r *Recorder) refreshTail(when string) error {
	var st unix.Stat_t
	if err := fstat(r.fd, &st); err != nil {
		return fmt.Errorf("recorder: stat %s: %w", r.path, err)
	}
	if !r.stale && st.Size == r.end {
		return nil
	}
	t, err := scanTail(r.rf, st.Size, tailChunk)
	if err != nil {
		return fmt.Errorf("recorder: recover the tail of %s: %w", r.path, err)
	}
	if t.found && t.runID != r.runID {
		return fmt.Errorf("recorder: %s: %w: the file holds run %q, not %q", r.path, ErrRunMismatch, truncateID(t.runID), r.runID)
	}
	if t.torn() > 0 {
		if err := r.repair(t, "torn tail (no trailing LF) found "+when); err != nil {
			return err
		}
	}
	r.end, r.stale = t.end, false
	r.lastSeq.Store(t.lastSeq)
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

// repair moves the torn bytes [t.end, t.size) to the sidecar, makes the
// sidecar durable, and only then truncates the transcript: a crash in
// between leaves the bytes in both places (a duplicate), never in neither.
func (r *Recorder) repair(t tailInfo, reason string) error {
	lines, err := countLines(r.rf, t.end)
	if err != nil {
		return fmt.Errorf("recorder: repair %s: %w", r.path, err)
	}
	rep := Repair{Offset: t.end, Bytes: int(t.torn()), Line: lines + 1, Reason: reason}
	side := r.path + TornSuffix
	if err := r.writeSidecar(side, rep); err != nil {
		return fmt.Errorf("recorder: repair %s: %w", r.path, err)
	}
	if err := r.truncate(t.end); err != nil {
		return fmt.Errorf("recorder: repair %s: truncate to %d: %w", r.path, t.end, err)
	}
	if r.opts.fsync != FsyncNever {
		if err := r.wf.Sync(); err != nil {
			return fmt.Errorf("recorder: repair %s: fsync: %w", r.path, err)
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
func (r *Recorder) writeSidecar(side string, rep Repair) error {
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
		return fmt.Errorf("%s: %w", side, ErrNotRegular)
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
	hdr = transcript.AppendQuoted(hdr, r.runID)
	hdr = append(hdr, `,"offset":`...)
	hdr = strconv.AppendInt(hdr, rep.Offset, 10)
	hdr = append(hdr, `,"bytes":`...)
	hdr = strconv.AppendInt(hdr, int64(rep.Bytes), 10)
	hdr = append(hdr, `,"line":`...)
	hdr = strconv.AppendInt(hdr, int64(rep.Line), 10)
	hdr = append(hdr, `,"reason":`...)
	hdr = transcript.AppendQuoted(hdr, rep.Reason)
	hdr = append(hdr, `,"repaired_at":"`...)
	hdr = r.opts.now().UTC().AppendFormat(hdr, transcript.TimeLayout)
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
	// Always synced, whatever the policy: the transcript is truncated
	// next, and the sidecar is then the only copy.
	return sf.Sync()
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
// a copy and a write.
var seqZero = []byte(`{"seq":0,`)

// Record assigns ev the next seq and appends it. In order, outside the
// lock: the run id is filled in when empty (another run's id is an error
// wrapping [ErrRunMismatch] and transcript.ErrInvalidEvent), a zero
// timestamp is set to now, the masker runs, the event is validated and
// encoded (errors wrap transcript.ErrInvalidEvent). Then, in one critical
// section: the file lock is taken, the tail re-read if another writer
// appended, the seq allocated, the line written with one write(2), the
// lock released and the event published to subscribers. Finally it syncs
// as the policy says. ev.Seq is set on success; Record may also have
// changed ev's run id, timestamp and (through the masker) strings. A failed
// write leaves the file as it was and consumes no seq.
func (r *Recorder) Record(ctx context.Context, ev *transcript.Event) error {
	if ev == nil {
		return fmt.Errorf("recorder: record: %w: nil event", transcript.ErrInvalidEvent)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("recorder: record %s: %w", ev.Type, err)
	}
	if err := r.prepare(ev); err != nil {
		return err
	}
	e := *ev
	e.Seq = 0
	bp := r.encBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxKeptBuf {
			r.encBufs.Put(bp)
		}
	}()
	enc, err := transcript.AppendEvent((*bp)[:0], &e)
	*bp = enc
	if err != nil {
		return fmt.Errorf("recorder: record %s: %w", ev.Type, err)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("recorder: record %s: %w", ev.Type, ErrClosed)
	}
	if err := ctx.Err(); err != nil { // cancelled while queued on mu
		return fmt.Errorf("recorder: record %s: %w", ev.Type, err)
	}
	if err := r.lockFile(ctx); err != nil {
		return err
	}
	seq, err := r.appendLocked(&e, enc)
	r.unlockFile()
	if err != nil {
		return err
	}
	e.Seq, ev.Seq = seq, seq
	r.fan.Publish(e)
	if r.opts.fsync == FsyncAlways || r.opts.fsync == FsyncOnBoundary && boundary(ev.Type) {
		if err := r.wf.Sync(); err != nil {
			return fmt.Errorf("recorder: record %s seq %d: %w: %w", ev.Type, seq, ErrNotDurable, err)
		}
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
		r.opts.mask.Mask(ev)
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

// appendLocked allocates the seq and writes the line. Called with mu and
// the file lock held; enc is e encoded with seq 0.
func (r *Recorder) appendLocked(e *transcript.Event, enc []byte) (uint64, error) {
	if err := r.refreshTail("before an append"); err != nil {
		return 0, err
	}
	seq := r.lastSeq.Load() + 1
	if rest, ok := bytes.CutPrefix(enc, seqZero); ok {
		r.buf = append(r.buf[:0], `{"seq":`...)
		r.buf = strconv.AppendUint(r.buf, seq, 10)
		r.buf = append(r.buf, ',')
		r.buf = append(r.buf, rest...)
	} else {
		// The encoder's layout changed: encode again with the seq.
		e.Seq = seq
		var err error
		if r.buf, err = transcript.AppendEvent(r.buf[:0], e); err != nil {
			return 0, fmt.Errorf("recorder: record %s: %w", e.Type, err)
		}
	}
	r.buf = append(r.buf, '\n')
	defer func() {
		if cap(r.buf) > maxKeptBuf {
			r.buf = nil
		}
	}()
	n, err := r.write(r.buf)
	if err == nil && n != len(r.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Undo a partial line so the file keeps only complete lines and
		// the seq is not consumed. If even that fails, the next append
		// rescans and moves the partial line to the sidecar.
		if terr := r.truncate(r.end); terr != nil {
			r.stale = true
			r.log.Warn("recorder: could not undo a failed write", "path", r.path, "offset", r.end, "err", terr)
		}
		return 0, fmt.Errorf("recorder: write %s seq %d to %s: %w", e.Type, seq, r.path, err)
	}
	r.end += int64(n)
	r.lastSeq.Store(seq)
	return seq, nil
}

// Subscribe returns a live feed of the events this recorder writes (not
// those of other processes), in seq order, through a bounded buffer that
// drops the newest events when full (see package fanout). Published events
// share their payload with the caller of Record: treat them as read-only.
func (r *Recorder) Subscribe(opts ...fanout.SubOption) *fanout.Subscription[transcript.Event] {
	return r.fan.Subscribe(opts...)
}

// Stats returns the fan-out's delivery and drop counters.
func (r *Recorder) Stats() fanout.Stats { return r.fan.Stats() }

// Sync flushes the transcript to stable storage.
func (r *Recorder) Sync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("recorder: sync %s: %w", r.path, ErrClosed)
	}
	if err := r.wf.Sync(); err != nil {
		return fmt.Errorf("recorder: sync %s: %w", r.path, err)
	}
	return nil
}

// LastSeq returns the last seq this recorder wrote or found in the file.
// Another process may have appended since.
func (r *Recorder) LastSeq() uint64 { return r.lastSeq.Load() }

// Repairs returns the torn tails repaired so far, oldest first.
func (r *Recorder) Repairs() []Repair {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.repairs)
}

// RunID returns the run id.
func (r *Recorder) RunID() string { return r.runID }

// Path returns the transcript path.
func (r *Recorder) Path() string { return r.path }

// Close syncs (unless the policy is FsyncNever), closes the file and closes
// every subscription. It is idempotent: later calls return the first
// result.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.closeEr
	}
	r.closed = true
	var errs []error
	if r.opts.fsync != FsyncNever {
		if err := r.wf.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("recorder: close %s: fsync: %w", r.path, err))
		}
	}
	if err := r.wf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("recorder: close %s: %w", r.path, err))
	}
	if err := r.rf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("recorder: close %s (reader): %w", r.path, err))
	}
	r.fan.Close()
	r.closeEr = errors.Join(errs...)
	return r.closeEr
}
