package capture

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/twasm/twasm/internal/durable"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Plugin is the normalizer a step runs: a *host.Plugin (sandboxed
// WebAssembly) as it is, or a native one from [NativePlugin]. It is sealed:
// NewInstance's result is of an internal type, so no package outside this
// module implements it. A capture owns each instance it takes and closes it when
// it finishes (a host instance goes back to its plugin's pool).
type Plugin interface {
	Identity() transcript.PluginRef
	NewInstance(ctx context.Context) (normalize.Instance, error)
}

// Options configure an Agent.
type Options struct {
	// Provider and Format are passed to the plugin.
	Provider, Format string
	// Store is where the run lives; the raw capture goes to its raw dir.
	Store recorder.Store
	// Plugin normalizes the stream.
	Plugin Plugin
	// Mask, when set, masks secrets in every line (a whole line, its LF
	// included) before it is written anywhere: the raw capture, the stderr
	// capture, and what the plugin reads. It returns the masked line.
	Mask func(line []byte) []byte
	// Split, when set with Mask, masks the raw capture instead of Mask,
	// also finding the secrets that streaming split across lines
	// (redact.Stream): each line as it came goes through it, and the raw
	// capture gets the masked lines it returns, in order. It holds back
	// only lines a later one may join; before an event (or a sub-agent's
	// run) made of a held line is written, that line and those before it
	// are released and written (Release), and Finish writes what it
	// still holds: the raw capture never lags the transcript. The plugin
	// reads the lines Mask masked as they come (the events it makes hold
	// the joined text, which the recorder's mask sees whole).
	Split LineSplitMasker
	// Masked, when set with Mask, says how many secrets Mask has masked so
	// far, by kind; the step result's redacted counts are its answer when
	// the step finishes.
	Masked func() map[string]int
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock for events without a provider timestamp.
	Now func() time.Time
	// ContinueRaw, when set, extends an existing raw capture of the same
	// run (its path relative to the storage root, as in
	// transcript.RawRef.Path) instead of starting a new one: the bytes
	// fed are appended to it, and the step's RawRef covers the whole file.
	// It is how a session that grew is archived: one raw capture per
	// session, one step per part.
	ContinueRaw string
	// Filter, when set, sees every event of the step (not of sub-agent
	// runs) before it is written and returns what to write, or nil to
	// drop it. An archive uses it to leave out what an earlier part of
	// the same session already holds.
	Filter func(ev *transcript.Event) *transcript.Event
	// SubAgentFilter is Filter for the events of the sub-agents' runs:
	// a sub-agent still running when an earlier part was archived comes
	// again in this one.
	SubAgentFilter func(ev *transcript.Event) *transcript.Event
	// Replayed, when set, sees every event [Agent.Replay] made and
	// dropped (the step's and the sub-agents'), in order: the filters
	// count what the plugin emitted before this part, to tell a call id
	// the provider reused from the same call again.
	Replayed func(ev *transcript.Event)
	// Supersede maps a sub-agent's run name (the path segment its
	// sub-run gets) to the id of a child run of an interrupted step that
	// held the same sub-agent: the sub-run made for it now replaces that
	// one (lifecycle.SubRunOptions.Supersedes), which holds the sub-agent
	// too, so that readers across runs find it once. An archive that
	// continues a session after a killed part sets it.
	Supersede map[string]string
	// EarlyEntries makes Start sync the directory entries of the raw
	// capture it creates (its own in raw/<run>/, that directory's in
	// raw/) in the background at once, before it waits for the plugin's
	// instance, instead of in Finish after the capture's fsync: a caller
	// whose plugin is still loading (record) takes those fsyncs off its
	// critical path. Finish waits for them (and reports their failure)
	// before the result names the capture, as it does for its own. A
	// caller whose plugin is ready (sync, many sessions in a row) leaves
	// it unset: after the file's fsync a journalling file system has
	// already committed the entries, and the directories' fsyncs cost
	// no commit of their own.
	EarlyEntries bool
	// StreamBuffers, when set, lends the normalizer its working buffers
	// (normalize.Buffers): a caller that captures many steps one after
	// the other (sync, a worker's sessions) keeps them from one to the
	// next instead of growing new ones for each. One capture at a time
	// uses them; Finish gives them back.
	StreamBuffers *normalize.Buffers
}

// LineSplitMasker masks secrets split across lines (redact.Stream).
type LineSplitMasker interface {
	// Push takes the next line as it came and returns the masked lines
	// ready to be written, oldest first.
	Push(line []byte) [][]byte
	// Release returns the oldest n lines held (all when it holds
	// fewer), masked with what it knows now.
	Release(n int) [][]byte
	// Flush returns every line still held.
	Flush() [][]byte
}

// Agent captures one agent step. Call Finish once, whatever went wrong
// before: it closes the plugin instance and the capture files.
type Agent struct {
	opts   Options
	step   *lifecycle.Step
	stream *normalize.Stream
	inst   normalize.Instance
	sink   *sink

	raw     *rawfile.Writer
	rawRel  string
	rawHash hash.Hash
	rawN    int64
	pending []byte // masked mode: an incomplete line
	// heldFrom is the stream's number of the oldest line Split holds
	// back, held how many it holds (see releaseRaw).
	heldFrom, held int
	// lineLen is how many bytes were fed since the last line end: more
	// than MaxLineBytes stops the capture (ErrNoLineEnd).
	lineLen int64

	errMu   sync.Mutex
	errFile *os.File
	errRel  string
	errPend []byte

	finished bool
	fed      bool

	// dir is the run's raw dir. dirs (under errMu) are the directory
	// entries the step's result relies on (a new capture's in dir, dir's
	// in raw/), which Finish makes durable after the captures themselves
	// (or Start at once, Options.EarlyEntries: entries) and before the
	// result names them; its Fsync is nil when the run's
	// recorder never fsyncs (recorder.FsyncNever). fileSync, when set
	// (tests), replaces a capture's fsync.
	dir      string
	dirs     durable.Dirs
	fileSync func(f *os.File) error

	// lastChunk says the next feed holds the last bytes of a file read
	// by Run; early is the sync of the raw capture started after writing
	// them (startEarlySync).
	lastChunk bool
	early     *earlySync
	// streamChunk, when set (Run reading a file a frame at a time), is
	// the most bytes the stream is fed at once; Feed's callers otherwise
	// feed the stream what they feed.
	streamChunk int
	// ahead is how many bytes Ahead wrote to the raw capture that Feed
	// has not fed the stream yet: Feed does not write them again.
	ahead int64
	// entries is the sync of the entries Start created, started by
	// Start with Options.EarlyEntries (startEntrySync); nil otherwise.
	entries *entrySync
}

// syncDir makes a directory's entries durable; tests replace it to watch
// the syncs Start begins.
var syncDir = durable.SyncDir

// entrySync is a sync of the directory entries a capture's Start
// created, running while the plugin loads.
type entrySync struct {
	done chan struct{}
	err  error
}

// earlySync is a sync of the raw capture (and of the entries the step
// relies on so far) running while the plugin normalizes the last bytes.
type earlySync struct {
	done chan struct{}
	n    int64 // the raw bytes written when it started
	// err is the raw capture's fsync failure, dirErr the entries'. Each
	// is reported by Finish even when its own sync then succeeds: after a
	// failed fsync the kernel may have dropped the dirty pages and tells
	// it once, so a later fsync that succeeds proves nothing.
	err, dirErr error
}

// Start begins capturing into step.
func Start(ctx context.Context, step *lifecycle.Step, opts Options) (*Agent, error) {
	if opts.Plugin == nil {
		return nil, errors.New("capture: no plugin")
	}
	var dirs durable.Dirs
	if rec := step.Run().Recorder(); rec == nil || rec.Fsync() != recorder.FsyncNever {
		dirs.Fsync = syncDir
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	runID := step.Run().RunID()
	dir, err := rawDir(opts.Store, runID, dirs.Fsync)
	if err != nil {
		return nil, fmt.Errorf("capture: raw dir: %w", err)
	}
	base := rawBase(step)
	a := &Agent{opts: opts, step: step, rawHash: sha256.New(), dir: dir, dirs: dirs}
	if opts.ContinueRaw != "" {
		if err := a.continueRaw(dir, runID, opts.ContinueRaw); err != nil {
			return nil, err
		}
		// The step that made the file may have run under FsyncNever, so
		// its entries are synced before this step's completion names it
		// (once committed, such a sync costs no journal commit).
		a.newEntry()
	} else {
		name := base + ".raw" + rawfile.Ext
		a.raw, err = rawfile.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("capture: raw capture: %w", err)
		}
		a.rawRel = filepath.ToSlash(filepath.Join("raw", runID, name))
		a.newEntry()
	}
	a.errRel = filepath.ToSlash(filepath.Join("raw", runID, base+".stderr"))
	if opts.EarlyEntries {
		a.startEntrySync()
	}
	a.inst, err = opts.Plugin.NewInstance(ctx)
	if err != nil {
		a.dropRaw()
		return nil, fmt.Errorf("capture: plugin %s: %w", opts.Plugin.Identity().Name, err)
	}
	a.sink = &sink{step: step, subs: map[string]*lifecycle.Run{}, names: map[string]bool{}, filter: opts.Filter, subFilter: opts.SubAgentFilter, replayed: opts.Replayed, supersede: opts.Supersede}
	a.sink.raw = a.releaseRaw
	a.stream, err = normalize.NewStream(ctx, a.inst, a.sink, normalize.Options{
		Provider: opts.Provider, Format: opts.Format, Now: opts.Now, Logger: opts.Logger, Buffers: opts.StreamBuffers,
	})
	if err != nil {
		a.dropRaw()
		a.closeInstance()
		return nil, fmt.Errorf("capture: %w", err)
	}
	return a, nil
}

// dropRaw closes the raw capture of a Start that failed before reading
// anything, and removes it when Start created it: an empty file no step
// refers to (a continued capture is left as it was).
func (a *Agent) dropRaw() {
	a.waitEntrySync()
	a.raw.Close()
	if a.opts.ContinueRaw == "" {
		os.Remove(a.raw.File().Name())
	}
}

// continueRaw opens an existing raw capture of run runID for appending and
// hashes the raw bytes it holds, so the step's RawRef covers the whole
// capture. The name must be a file directly in the run's raw dir: nothing
// outside it is opened. A capture stays of its kind (package rawfile): an
// old plain one is extended plainly, a framed one by new frames; one that
// ends in a damaged frame is refused (rawfile.ErrTorn, ErrCorrupt).
func (a *Agent) continueRaw(dir, runID, rel string) error {
	name := filepath.Base(filepath.FromSlash(rel))
	want := filepath.ToSlash(filepath.Join("raw", runID, name))
	if filepath.ToSlash(rel) != want {
		return fmt.Errorf("capture: continue raw capture %q: not a raw capture of run %s", rel, runID)
	}
	path := filepath.Join(dir, name)
	w, err := rawfile.Append(path)
	if err != nil {
		return fmt.Errorf("capture: continue raw capture: %w", err)
	}
	r, err := rawfile.Open(path)
	var n int64
	if err == nil {
		n, err = io.Copy(a.rawHash, r.All())
		r.Close()
	}
	if err != nil {
		w.Close()
		return fmt.Errorf("capture: continue raw capture: read %s: %w", rel, err)
	}
	a.raw, a.rawRel, a.rawN = w, want, n
	return nil
}

// Replay feeds r to the plugin only, to rebuild the state an earlier step
// left it in (calls waiting for their results, an open message): what it
// emits is dropped and nothing is written to the raw capture. mask, when
// set, masks the lines as they were masked the first time. Replay is
// called before the first Feed.
func (a *Agent) Replay(ctx context.Context, r io.Reader, mask func(line []byte) []byte) error {
	if a.finished || a.fed {
		return errors.New("capture: replay after feed")
	}
	a.sink.mute = true
	defer func() { a.sink.mute = false }()
	var pend []byte
	buf := make([]byte, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		p := buf[:n]
		if mask != nil {
			pend = append(pend, p...)
			i := bytes.LastIndexByte(pend, '\n')
			p = nil
			if i >= 0 {
				p = mask(pend[:i+1])
				pend = append(pend[:0], pend[i+1:]...)
			}
			if err == io.EOF && len(pend) > 0 {
				p = append(p, mask(pend)...)
			}
		}
		if len(p) > 0 {
			if ferr := a.stream.Feed(ctx, p); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrRead, err)
		}
	}
}

// rawBase names a step's raw capture: its path, iteration and attempt,
// plus a random suffix because several processes may record the same path
// of one run.
func rawBase(step *lifecycle.Step) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	p := step.Path()
	if p == "" {
		p = "run"
	}
	return fmt.Sprintf("%s.%d.%d.%s", p, step.Iteration(), step.Attempt(), hex.EncodeToString(rnd[:]))
}

// Feed takes the next bytes of the agent's stdout.
func (a *Agent) Feed(ctx context.Context, p []byte) error {
	if a.finished {
		return errors.New("capture: feed after finish")
	}
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		a.lineLen = int64(len(p) - i - 1)
	} else {
		a.lineLen += int64(len(p))
	}
	if a.lineLen > MaxLineBytes {
		// An input that never yields a line (/dev/zero, a binary
		// stream) would fill the disk with raw capture: stop at the bound.
		return fmt.Errorf("%w: no line end in the last %d bytes (twasm reads JSON Lines; a line may hold %d bytes): reading stopped", ErrNoLineEnd, a.lineLen, MaxLineBytes)
	}
	if a.opts.Mask == nil {
		return a.feed(ctx, p)
	}
	// Mask whole lines only: a secret cut by a read boundary must still
	// be found.
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			a.pending = append(a.pending, p...)
			return nil
		}
		line := p[:i+1]
		if len(a.pending) > 0 {
			a.pending = append(a.pending, line...)
			line = a.pending
		}
		if err := a.feedLine(ctx, line); err != nil {
			return err
		}
		a.pending = a.pending[:0]
		p = p[i+1:]
	}
	return nil
}

// feedLine masks one whole line and feeds it: the plugin reads it
// masked by Mask, the raw capture gets it through Split when set.
func (a *Agent) feedLine(ctx context.Context, line []byte) error {
	masked := a.opts.Mask(line)
	if a.opts.Split == nil {
		return a.feed(ctx, masked)
	}
	a.fed = true
	if a.held == 0 {
		a.heldFrom = a.stream.Lines() + 1
	}
	a.held++
	if err := a.writeHeld(a.opts.Split.Push(bytes.Clone(line))); err != nil {
		return err
	}
	return a.stream.Feed(ctx, masked)
}

// writeHeld writes lines Split released, the oldest it held.
func (a *Agent) writeHeld(lines [][]byte) error {
	for _, l := range lines {
		if err := a.writeRaw(l, false); err != nil {
			return err
		}
		a.held--
		a.heldFrom++
	}
	return nil
}

// releaseRaw writes the lines Split holds back up to the stream's line
// upto, which an event about to be written comes from, and flushes the
// raw capture: the file holds every raw byte before an event made of
// them is written.
func (a *Agent) releaseRaw(upto int) error {
	if a.opts.Split != nil && a.held > 0 && upto >= a.heldFrom {
		if err := a.writeHeld(a.opts.Split.Release(min(upto-a.heldFrom+1, a.held))); err != nil {
			return err
		}
	}
	return a.flushRaw()
}

// flushRaw writes the raw bytes the capture's writer still holds (a frame).
func (a *Agent) flushRaw() error {
	if err := a.raw.Flush(); err != nil {
		return fmt.Errorf("capture: write raw capture: %w", err)
	}
	return nil
}

func (a *Agent) feed(ctx context.Context, p []byte) error {
	a.fed = true
	w := p
	if a.ahead > 0 {
		// Bytes Ahead wrote already.
		k := min(int64(len(w)), a.ahead)
		a.ahead -= k
		w = w[k:]
	}
	// The last bytes of a file Run reads are flushed at once: written
	// with the flush, a read shorter than a frame is encoded as it is,
	// not copied into the writer first (the same frame).
	if err := a.writeRaw(w, a.lastChunk); err != nil {
		return err
	}
	if a.lastChunk {
		a.lastChunk = false
		a.startEarlySync()
	}
	if a.streamChunk == 0 {
		return a.stream.Feed(ctx, p)
	}
	for len(p) > 0 {
		k := min(len(p), a.streamChunk)
		if err := a.stream.Feed(ctx, p[:k]); err != nil {
			return err
		}
		p = p[k:]
	}
	return nil
}

// Ahead writes p, the next bytes the caller will Feed, to the raw
// capture now, and flushes it: the Feed calls that follow feed the stream those len(p)
// bytes without writing them again. A caller that feeds the stream
// smaller pieces than it reads (the archive dates the events of each
// 256 KiB piece by the session times in it) writes each read of
// rawfile.FrameBytes with Ahead, so that its raw capture is made of whole
// frames, as Run's is, which compress to less in less CPU: bytes are
// otherwise written as they are fed, and the first event made of them
// flushes them as a frame. The caller then feeds exactly p's bytes, in
// order (in any pieces), before it feeds anything else; bytes written
// ahead and never fed (a feed stopped by an error) stay in the raw
// capture, which holds what was read, as Run's does. With a Mask, Ahead
// writes nothing: Feed writes each line as it is masked.
func (a *Agent) Ahead(p []byte) error {
	if a.finished {
		return errors.New("capture: write after finish")
	}
	if a.opts.Mask != nil || len(p) == 0 {
		return nil
	}
	a.fed = true
	// Flushed now, as the first event made of p would: a shorter read
	// (a part's last) is encoded without being copied.
	if err := a.writeRaw(p, true); err != nil {
		return err
	}
	a.ahead += int64(len(p))
	return nil
}

// streamBytes is the most bytes the stream is fed at once when [Run]
// reads a file a frame at a time: the stream sends a batch at the end of
// every feed, and a feed of a whole frame would make batches (and the
// plugin's memory, and the output it returns) four times as large. The
// batches are those of the 256 KiB reads Run made before.
const streamBytes = 256 << 10

// writeRaw appends p to the raw capture, and flushes it when flush is set.
func (a *Agent) writeRaw(p []byte, flush bool) error {
	var err error
	if flush {
		err = a.raw.WriteFlush(p)
	} else {
		_, err = a.raw.Write(p)
	}
	if err != nil {
		// Without the raw capture nothing could be rebuilt: stop.
		return fmt.Errorf("capture: write raw capture: %w", err)
	}
	a.rawHash.Write(p)
	a.rawN += int64(len(p))
	return nil
}

// startEarlySync starts syncing the raw capture, and then the directory
// entries the step relies on so far, while the plugin normalizes the
// bytes just written, the last of a file Run reads: that sync is off the
// critical path, and Finish only waits for it, and syncs again what was
// written since (a file that grew, a stderr capture). Without fsync
// (recorder.FsyncNever) it does nothing.
func (a *Agent) startEarlySync() {
	if a.dirs.Fsync == nil || a.early != nil {
		return
	}
	s := &earlySync{done: make(chan struct{}), n: a.rawN}
	a.early = s
	f := a.raw.File()
	go func() {
		defer close(s.done)
		if s.err = a.sync(f); s.err != nil {
			return
		}
		a.errMu.Lock()
		defer a.errMu.Unlock()
		s.dirErr = a.dirs.Sync()
	}()
}

// startEntrySync moves the entries Start noted (newEntry) to a sync of
// their own, started now in the background (Options.EarlyEntries). The
// entries exist once the directory and the file are created, so their
// fsync need not wait for the capture's bytes; an entry created later
// (a stderr capture) is noted again and synced by Finish.
func (a *Agent) startEntrySync() {
	if a.dirs.Fsync == nil {
		return
	}
	early := durable.Dirs{Fsync: a.dirs.Fsync}
	for _, d := range a.dirs.Pending() {
		early.Add(d)
		a.dirs.Drop(d)
	}
	s := &entrySync{done: make(chan struct{})}
	a.entries = s
	go func() {
		defer close(s.done)
		s.err = early.Sync()
	}()
}

// waitEntrySync waits for Start's sync of the entries, if one runs, and
// returns its error.
func (a *Agent) waitEntrySync() error {
	if a.entries == nil {
		return nil
	}
	<-a.entries.done
	return a.entries.err
}

// syncRaw makes the raw capture durable: it waits for the early sync, if
// one ran, and syncs the file again unless that one covered every byte.
// A failure of the early sync is returned (dirErr: of the entries it
// synced) even when the sync here succeeds (see earlySync).
func (a *Agent) syncRaw() (err, dirErr error) {
	if s := a.early; s != nil {
		<-s.done
		a.early = nil
		if s.err == nil && s.n == a.rawN {
			return nil, s.dirErr
		}
		if s.err != nil {
			return errors.Join(s.err, a.sync(a.raw.File())), s.dirErr
		}
		return a.sync(a.raw.File()), s.dirErr
	}
	return a.sync(a.raw.File()), nil
}

// MaxLineBytes bounds a line of provider output: a line of more than
// wire.MaxLineBytes is kept in the raw capture but not normalized; one of
// more than MaxLineBytes (twice that) stops the capture with
// [ErrNoLineEnd], so that an input that never yields a line end (a
// device, a binary stream) ends instead of filling the disk.
const MaxLineBytes = 2 * wire.MaxLineBytes

// ErrNoLineEnd is wrapped when the provider output goes on for more than
// [MaxLineBytes] without a line end.
var ErrNoLineEnd = errors.New("not line-oriented output")

// ErrRead is wrapped when the output [Run] reads fails (as opposed to the
// capture or the sink), so a command can report unreadable input.
var ErrRead = errors.New("read provider output")

// readFrom feeds everything r yields until EOF. It stops when ctx is done
// (returning ctx's error); a failing read returns an error wrapping
// ErrRead.
func (a *Agent) readFrom(ctx context.Context, r io.Reader) error {
	// The bytes a regular file holds still: the read that ends them is
	// the last (unless the file grows), so the raw capture can be synced
	// while the plugin normalizes it (startEarlySync). Not with a Mask:
	// masked lines are written one by one, the last one at Finish.
	left := int64(-1)
	if f, ok := r.(*os.File); ok && a.opts.Mask == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil {
				left = fi.Size() - off
			}
		}
	}
	// A read is a frame of the raw capture (the first event made of it
	// flushes it): reads of rawfile.FrameBytes, the most a frame holds,
	// give frames that compress to less in less CPU than smaller ones
	// (real session logs: 0.20 of the bytes against 0.25 in 256 KiB
	// frames, about 30% faster), and the writer encodes a full read
	// without copying it.
	// A file smaller than a frame gets a buffer of its size (and one byte
	// to see its end): a record of a few lines need not allocate a MiB.
	size := int64(rawfile.FrameBytes)
	if left >= 0 {
		size = min(size, left+1)
	}
	buf := make([]byte, size)
	a.streamChunk = streamBytes
	defer func() { a.streamChunk = 0 }()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if left >= 0 {
				left -= int64(n)
				a.lastChunk = left <= 0
			}
			if ferr := a.Feed(ctx, buf[:n]); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrRead, err)
		}
	}
}

// FeedStderr keeps the agent's stderr beside the raw capture. It is never
// parsed as provider output.
func (a *Agent) FeedStderr(p []byte) error {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	if len(p) == 0 {
		return nil
	}
	if a.errFile == nil {
		f, err := os.OpenFile(filepath.Join(a.dir, filepath.Base(a.errRel)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("capture: stderr capture: %w", err)
		}
		a.errFile = f
		a.newEntry()
	}
	if a.opts.Mask != nil {
		a.errPend = append(a.errPend, p...)
		i := bytes.LastIndexByte(a.errPend, '\n')
		if i < 0 {
			return nil
		}
		p = a.opts.Mask(a.errPend[:i+1])
		defer func() { a.errPend = append(a.errPend[:0], a.errPend[i+1:]...) }()
	}
	_, err := a.errFile.Write(p)
	return err
}

// Finish ends the stream and the captures, and sets the step's result,
// which it returns with the raw lines the plugin said nothing about; the
// result is nil only when Finish was called before. exitCode is the agent
// process's exit code, when there was a process. The error is a failure
// to capture; return [ResultError] of the result from the step function.
func (a *Agent) Finish(ctx context.Context, exitCode *int) (*Result, error) {
	if a.finished {
		return nil, errors.New("capture: finished twice")
	}
	var errs []error
	if len(a.pending) > 0 {
		errs = append(errs, a.feedLine(ctx, a.pending))
		a.pending = nil
	}
	if a.opts.Split != nil && a.opts.Mask != nil {
		errs = append(errs, a.writeHeld(a.opts.Split.Flush()))
	}
	// Every raw byte is in the file before the sync below and before
	// the result names it; the next step of the run (a session that
	// grew) starts a frame of its own.
	errs = append(errs, a.flushRaw())
	a.finished = true
	if exitCode != nil {
		a.stream.ExitCode(*exitCode)
	}
	res, err := a.stream.Close(ctx)
	errs = append(errs, err)
	if err := a.closeInstance(); err != nil {
		errs = append(errs, fmt.Errorf("capture: close plugin instance: %w", err))
	}
	errs = append(errs, a.sink.closeAll(ctx))
	// The captures and their entries are durable before the step's
	// result names them (unless the recorder never fsyncs): a transcript
	// that survives a crash never names a lost file. The files first,
	// then the directories (internal/durable says why).
	doSync := a.dirs.Fsync != nil
	var earlyDirErr error
	if doSync {
		var err error
		if err, earlyDirErr = a.syncRaw(); err != nil {
			errs = append(errs, fmt.Errorf("capture: sync raw capture: %w", err))
		}
	}
	errs = append(errs, a.raw.Close())
	a.errMu.Lock()
	hadStderr := a.errFile != nil
	if hadStderr {
		if len(a.errPend) > 0 && a.opts.Mask != nil {
			_, werr := a.errFile.Write(a.opts.Mask(a.errPend))
			errs = append(errs, werr)
		}
		if doSync {
			if err := a.sync(a.errFile); err != nil {
				errs = append(errs, fmt.Errorf("capture: sync stderr capture: %w", err))
			}
		}
		errs = append(errs, a.errFile.Close())
	}
	if doSync {
		// Start's sync of the entries (Options.EarlyEntries) has
		// long finished: the plugin has loaded and read the input since.
		if err := errors.Join(a.waitEntrySync(), earlyDirErr, a.dirs.Sync()); err != nil {
			errs = append(errs, fmt.Errorf("capture: %w", err))
		}
	}
	a.errMu.Unlock()
	if res == nil {
		res = &transcript.AgentResult{Provider: a.opts.Provider, Status: transcript.StatusIncomplete}
	}
	res.ExitCode = exitCode
	id := a.opts.Plugin.Identity()
	res.Plugin = &id
	res.Raw = &transcript.RawRef{Path: a.rawRel, Bytes: a.rawN, SHA256: hex.EncodeToString(a.rawHash.Sum(nil))}
	if hadStderr {
		res.Raw.Stderr = a.errRel
	}
	if a.opts.Mask != nil && a.opts.Masked != nil {
		res.Redacted = a.opts.Masked()
	}
	if res.Status == "" {
		res.Status = transcript.StatusIncomplete
	}
	errs = append(errs, a.step.SetResult(res))
	out := &Result{AgentResult: res}
	out.Silent, out.SilentLines = a.stream.Silent()
	return out, errors.Join(errs...)
}

// newEntry notes that a capture file was created in the run's raw dir:
// the step's result relies on its entry there, and on the raw dir's entry
// in raw/, whoever created the raw dir (this step, an earlier one, another
// process that may not have synced it yet). Finish syncs both. Called
// from Start, or with errMu held.
func (a *Agent) newEntry() {
	a.dirs.Add(filepath.Dir(a.dir))
	a.dirs.Add(a.dir)
}

// sync fsyncs a capture file.
func (a *Agent) sync(f *os.File) error {
	if a.fileSync != nil {
		return a.fileSync(f)
	}
	return f.Sync()
}

// closeInstance ends the instance the Agent made: a capture owns its
// instance's life (a host instance goes back to its plugin's pool).
func (a *Agent) closeInstance() error { return normalize.Close(a.inst) }

// sink writes the stream's events into the step, and sub-agent scopes into
// child runs of the step.
type sink struct {
	mute bool // replaying: drop everything
	// raw writes the raw lines held back up to a line (Agent.releaseRaw).
	raw       func(upto int) error
	filter    func(*transcript.Event) *transcript.Event
	subFilter func(*transcript.Event) *transcript.Event
	replayed  func(*transcript.Event) // Options.Replayed
	kept      []*transcript.Event     // the events filter kept, reused
	step      *lifecycle.Step
	subs      map[string]*lifecycle.Run
	names     map[string]bool
	// supersede: Options.Supersede.
	supersede map[string]string
}

// Emit writes the events of one plugin call that are ready together: the
// step's own into the step, a sub-agent's into its child run, each in
// one batch (one lock and one write, lifecycle.Step.RecordBatch).
func (s *sink) Emit(ctx context.Context, scope string, evs []*transcript.Event) error {
	if s.mute {
		if s.replayed != nil {
			for _, ev := range evs {
				s.replayed(ev)
			}
		}
		return nil
	}
	filter := s.filter
	if scope != "" {
		filter = s.subFilter
	}
	if filter != nil {
		kept := s.kept[:0]
		for _, ev := range evs {
			if ev = filter(ev); ev != nil {
				kept = append(kept, ev)
			}
		}
		s.kept, evs = kept, kept
		defer clear(kept) // the events are not kept alive by the sink
		if len(evs) == 0 {
			return nil
		}
	}
	if scope == "" {
		return record(ctx, s.step, evs)
	}
	sub := s.subs[scope]
	if sub == nil {
		// The assembler opens every scope first; be lenient anyway.
		if err := s.OpenScope(ctx, normalize.Scope{ID: scope, ParentToolID: scope}); err != nil {
			return err
		}
		sub = s.subs[scope]
	}
	return record(ctx, sub.Root(), evs)
}

// RawLines writes the raw lines held back up to upto before what comes
// from them is written (normalize.RawSink).
func (s *sink) RawLines(_ context.Context, upto int) error {
	if s.mute || s.raw == nil {
		return nil
	}
	return s.raw(upto)
}

// record writes evs into step: one event with Record, more with
// RecordBatch (one lock and one write).
func record(ctx context.Context, step *lifecycle.Step, evs []*transcript.Event) error {
	if len(evs) == 1 {
		return step.Record(ctx, evs[0])
	}
	return step.RecordBatch(ctx, evs)
}

func (s *sink) OpenScope(ctx context.Context, sc normalize.Scope) error {
	if s.mute || s.subs[sc.ID] != nil {
		return nil
	}
	name := s.uniqueName(sc)
	// People read the sub-agent's description (else its name), not the
	// path segment made of it and its tool call id.
	title := strings.Join(strings.Fields(cmp.Or(sc.Description, sc.Name)), " ")
	if r := []rune(title); len(r) > 200 {
		title = string(r[:199]) + "…"
	}
	sub, err := s.step.SubRun(ctx, name, lifecycle.SubRunOptions{Title: title, Supersedes: s.supersede[name]})
	if err != nil {
		return fmt.Errorf("capture: sub-agent %s: %w", sc.ID, err)
	}
	s.subs[sc.ID] = sub
	// The sub-agent's prompt (what the parent asked it) is its first
	// message.user, which the plugin reports in the scope (spec §6.10);
	// the description only names the run.
	return nil
}

// uniqueName makes a path segment for a sub-agent: its short description
// (else its name or type) and the tool call that started it, sanitised to
// the path grammar.
func (s *sink) uniqueName(sc normalize.Scope) string {
	base := "subagent"
	switch {
	case sc.Description != "":
		base = sc.Description
	case sc.Name != "":
		base = sc.Name
	}
	if sc.ParentToolID != "" {
		base += "_" + sc.ParentToolID
	}
	base = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, base)
	if len(base) > 80 {
		base = base[:80]
	}
	name := base
	for i := 2; s.names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	s.names[name] = true
	return name
}

func (s *sink) CloseScope(ctx context.Context, scope, status, errText string) error {
	if s.mute {
		return nil
	}
	sub := s.subs[scope]
	if sub == nil {
		return nil
	}
	delete(s.subs, scope)
	return sub.Finish(ctx, statusErr(status, errText))
}

func (s *sink) closeAll(ctx context.Context) error {
	var errs []error
	for id, sub := range s.subs {
		errs = append(errs, sub.Finish(ctx, statusErr(transcript.StatusIncomplete, "")))
		delete(s.subs, id)
	}
	return errors.Join(errs...)
}

// statusErr turns a sub-agent's status into the error lifecycle records
// its child run with: the status itself (error, incomplete or cancelled)
// and the reason.
func statusErr(status, errText string) error {
	switch status {
	case transcript.StatusOK:
		return nil
	case transcript.StatusIncomplete:
		if errText == "" {
			errText = "sub-agent output ended without a result"
		}
	case transcript.StatusCancelled:
		if errText == "" {
			errText = "sub-agent cancelled"
		}
	default:
		if errText == "" {
			errText = status
		}
		status = transcript.StatusError
	}
	return &ended{status: status, text: errText}
}

// rawDir returns the directory of a run's raw captures,
// <root>/raw/<run-id>/ (recorder.Store's layout), after validating the
// run id, creating it (and its parents) with mode 0700. raw/ and its
// parents, which every run shares, are made durable in their parents as
// they are created (syncDir, when not nil); the run's own directory is
// not: the step that creates a capture in it syncs its entry in raw/
// before naming the capture (Finish).
func rawDir(store recorder.Store, runID string, syncDir func(string) error) (string, error) {
	if err := runid.Valid(runID); err != nil {
		return "", fmt.Errorf("recorder: raw dir: %w", err)
	}
	raw := filepath.Join(store.Root, "raw")
	if err := durable.MkdirAll(raw, 0o700, syncDir); err != nil {
		return "", fmt.Errorf("recorder: raw dir: %w", err)
	}
	dir := filepath.Join(raw, runID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			return "", fmt.Errorf("recorder: raw dir: %w", err)
		}
	}
	return dir, nil
}
