package normalize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/transcript"
)

// Options configure a Stream.
type Options struct {
	// Provider is passed to the plugin and recorded in the result.
	Provider string
	// Format is a format hint for the plugin ("" lets it detect).
	Format string
	// Now is the clock for events without a provider timestamp.
	Now func() time.Time
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// BatchLines and BatchBytes bound a batch (default and maximum:
	// wire.MaxBatchLines, wire.MaxBatchBytes). One line per batch gives the
	// lowest latency; larger batches amortise the per-call cost.
	BatchLines, BatchBytes int
	// MaxLineBytes bounds a line (default and maximum wire.MaxLineBytes).
	MaxLineBytes int
	// Buffers, when set, lends the stream its working buffers, kept
	// from one stream to the next (see [Buffers]).
	Buffers *Buffers
}

// Buffers are a Stream's working buffers (its batch, the batch's tape,
// a line cut by a read, an escaped line, a line sent again), lent by a
// caller that runs many streams one after the other (a sync's worker,
// session after session) so that each stream does not grow its own: a
// stream grows its batch buffer to about twice its largest batch (up to
// wire.MaxBatchBytes), which made 100 of the 470 MB a first sync of 500
// sessions allocated. NewStream takes them (a Buffers holds nothing
// while its stream runs: one left unclosed gives nothing back) and Close
// gives them back, grown; a Buffers serves one stream at a time. The
// zero value is ready: the first stream grows them.
type Buffers struct {
	batch, pending, fixed, one []byte
	toks                       []wire.Token
}

// take moves b's buffers to s.
func (b *Buffers) take(s *Stream) {
	if b == nil {
		return
	}
	s.batch, s.pending, s.fixed, s.one, s.toks = b.batch[:0], b.pending[:0], b.fixed[:0], b.one[:0], b.toks[:0]
	*b = Buffers{}
}

// give moves s's buffers back to b, those a long line grew past
// maxKept bytes dropped: a line of many MiB does not stay in memory
// for the streams that follow.
func (b *Buffers) give(s *Stream) {
	if b == nil {
		return
	}
	*b = Buffers{batch: upTo(s.batch), pending: upTo(s.pending), fixed: upTo(s.fixed), one: upTo(s.one), toks: upTo(s.toks)}
	s.batch, s.pending, s.fixed, s.one, s.toks = nil, nil, nil, nil, nil
}

// maxKept is the most bytes a buffer of Buffers keeps: the batch buffer
// of the largest batch (wire.MaxBatchBytes), doubled.
const maxKept = 2 * wire.MaxBatchBytes

// upTo is b, or nil when it holds more than maxKept bytes.
func upTo[T any](b []T) []T {
	var t T
	if uintptr(cap(b))*unsafe.Sizeof(t) > maxKept {
		return nil
	}
	return b
}

// Stream normalizes one agent step's raw output.
type Stream struct {
	inst Instance
	asm  *assembler
	opts Options
	log  *slog.Logger

	pending  []byte // an incomplete last line
	skipping bool   // inside a line longer than MaxLineBytes
	lineNo   int

	batch      []byte
	nlines     int
	batchFirst int // line number of the batch's first line
	batchLast  int // and of its last
	toks       []wire.Token
	keys       *wire.KeySet // the plugin's declared keys, marked in tapes
	fixed      []byte       // a line with raw control bytes escaped
	one        []byte       // a batch of one line, sent again after a fault

	disabled bool
	closed   bool
}

// NewStream begins a stream on inst.
func NewStream(ctx context.Context, inst Instance, sink Sink, opts Options) (*Stream, error) {
	if opts.BatchLines <= 0 || opts.BatchLines > wire.MaxBatchLines {
		opts.BatchLines = wire.MaxBatchLines
	}
	if opts.BatchBytes <= 0 || opts.BatchBytes > wire.MaxBatchBytes {
		opts.BatchBytes = wire.MaxBatchBytes
	}
	if opts.MaxLineBytes <= 0 || opts.MaxLineBytes > wire.MaxLineBytes {
		opts.MaxLineBytes = wire.MaxLineBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Stream{inst: inst, asm: newAssembler(sink, opts.Provider, opts.Now), opts: opts, log: log}
	opts.Buffers.take(s)
	if k, ok := inst.(KeyedInstance); ok {
		s.keys = k.Keys()
	}
	if err := inst.Begin(ctx, abi.BeginOptions{Provider: opts.Provider, Format: opts.Format}); err != nil {
		var fault *FaultError
		if !errors.As(err, &fault) {
			return nil, fmt.Errorf("begin stream: %w", err)
		}
		s.fault(err, 0)
	}
	s.batch = wire.AppendBatchHeader(s.batch[:0], 0)
	return s, nil
}

// Feed takes the next bytes of raw output, in any chunking. Every complete
// line is normalized before Feed returns. Errors come only from the sink;
// plugin faults are counted in the result, not returned.
func (s *Stream) Feed(ctx context.Context, p []byte) error {
	if s.closed {
		return errors.New("normalize: feed after close")
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			// An incomplete line: keep it, or skip it once it is too
			// long.
			if !s.skipping {
				if len(s.pending)+len(p) > s.opts.MaxLineBytes {
					if err := s.oversized(ctx); err != nil {
						return err
					}
					s.skipping = true
				} else {
					s.pending = append(s.pending, p...)
				}
			}
			break
		}
		chunk := p[:i]
		p = p[i+1:]
		if s.skipping {
			// The end of a line already counted as oversized.
			s.skipping = false
			continue
		}
		if len(s.pending)+len(chunk) > s.opts.MaxLineBytes {
			// Checked here too: a long line may arrive in one piece.
			if err := s.oversized(ctx); err != nil {
				return err
			}
			continue
		}
		line := chunk
		if len(s.pending) > 0 {
			s.pending = append(s.pending, chunk...)
			line = s.pending
		}
		if err := s.line(ctx, line); err != nil {
			return err
		}
		s.pending = s.pending[:0]
	}
	return s.send(ctx)
}

// Lines is how many raw lines the stream has cut so far (the number of
// the last one): a [RawSink] is told lines by these numbers.
func (s *Stream) Lines() int { return s.lineNo }

// oversized counts a line longer than MaxLineBytes, which is not sent to
// the plugin. The lines before it are sent first, so that what the step
// result reports does not depend on how the input was chunked.
func (s *Stream) oversized(ctx context.Context) error {
	if err := s.send(ctx); err != nil {
		return err
	}
	s.lineNo++
	s.asm.res.Lines++
	s.asm.unmapped("oversized_line")
	s.asm.warn("line %d is longer than %d bytes: not normalized (kept in the raw capture)", s.lineNo, s.opts.MaxLineBytes)
	s.pending = s.pending[:0]
	return nil
}

// line adds one complete line to the batch.
func (s *Stream) line(ctx context.Context, line []byte) error {
	s.lineNo++
	s.asm.res.Lines++
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	line = trimBOM(line, s.lineNo == 1)
	if s.disabled {
		s.asm.res.FailedLines++
		return nil
	}
	toks, ok := wire.BuildTapeKeys(s.toks[:0], line, s.keys)
	if !ok {
		toks = toks[:0]
		// Some CLIs write raw control bytes (a NUL from tool output)
		// inside JSON strings, which JSON forbids. The plugin gets the
		// line with those bytes escaped, so it sees the JSON the CLI
		// meant; the raw capture keeps the bytes as they came.
		if fixed, changed := escapeRawControls(s.fixed[:0], line); changed {
			s.fixed = fixed
			if toks, ok = wire.BuildTapeKeys(toks[:0], fixed, s.keys); ok {
				line = fixed
			} else {
				toks = toks[:0]
			}
		}
	}
	s.toks = toks
	if s.nlines > 0 && (s.nlines >= s.opts.BatchLines || len(s.batch)+wire.BatchLineSize(len(line), len(toks)) > s.opts.BatchBytes) {
		if err := s.send(ctx); err != nil {
			return err
		}
		if s.disabled {
			// That batch disabled the plugin: this line is not sent.
			s.asm.res.FailedLines++
			return nil
		}
	}
	s.growBatch(wire.BatchLineSize(len(line), len(toks)))
	s.batch = wire.AppendBatchLine(s.batch, s.lineNo, line, toks)
	s.batchLast = s.lineNo
	if s.nlines == 0 {
		s.batchFirst = s.lineNo
	}
	s.asm.acct.fed(s.lineNo)
	s.nlines++
	return nil
}

// growBatch makes room for n more bytes in the batch buffer, which is
// kept from batch to batch, by doubling it. append's own growth, 1.25x
// at a time past a few hundred bytes, allocated and copied about 1.2 MB
// on the way to the batches of a stream fed 256 KiB at a time (the real
// Claude logs of the benchmark: 1.16 MB of a record's 17 MB, each fresh
// page of heap a page fault); doubling allocates about twice the
// largest batch.
func (s *Stream) growBatch(n int) {
	if need := len(s.batch) + n; need > cap(s.batch) {
		s.batch = slices.Grow(s.batch, max(need, 2*cap(s.batch))-len(s.batch))
	}
}

// send feeds the current batch to the plugin. When a batch of several
// lines faults, its lines are sent again one at a time on the fresh
// instance the fault left (see [Instance]): one bad line loses itself, not
// the lines batched with it, as when lines arrive one by one.
func (s *Stream) send(ctx context.Context) error {
	if s.nlines == 0 {
		return nil
	}
	// Patch the count into the header written when the batch started.
	s.batch[0], s.batch[1], s.batch[2], s.batch[3] = byte(s.nlines), byte(s.nlines>>8), byte(s.nlines>>16), byte(s.nlines>>24)
	n, first := s.nlines, s.batchFirst
	s.nlines = 0
	defer func() { s.batch = wire.AppendBatchHeader(s.batch[:0], 0) }()
	out, err := s.inst.Feed(ctx, s.batch)
	var fault *FaultError
	if n > 1 && errors.As(err, &fault) && !errors.Is(err, ErrDisabled) && ctx.Err() == nil {
		// The records the batch reported before the fault are dropped:
		// its lines are all sent again.
		s.asm.warn("plugin %s faulted in a batch of %d lines (%d to %d): each line sent again on its own", fault.Plugin, n, first, s.batchLast)
		s.log.Warn("plugin fault in a batch: sending its lines one at a time", "plugin", fault.Plugin, "lines", n, "err", fault.Err)
		return s.resend(ctx)
	}
	return s.result(ctx, out, err, s.batch, n, func() { s.asm.acct.coverAll(first) })
}

// resend sends the lines of the current batch one at a time.
func (s *Stream) resend(ctx context.Context) error {
	r := wire.NewBatchReader(s.batch, nil)
	for {
		bl, ok := r.Next()
		if !ok {
			if err := r.Err(); err != nil {
				return fmt.Errorf("normalize: resend a batch: %w", err)
			}
			return nil
		}
		if s.disabled {
			s.asm.res.FailedLines++
			s.asm.acct.cover(bl.No, 1)
			continue
		}
		s.one = wire.AppendBatchLine(wire.AppendBatchHeader(s.one[:0], 1), bl.No, bl.Line, bl.Toks)
		out, err := s.inst.Feed(ctx, s.one)
		if err := s.result(ctx, out, err, s.one, 1, func() { s.asm.acct.cover(bl.No, 1) }); err != nil {
			return err
		}
	}
}

// result applies the outcome of a feed call of n lines: its records,
// then its fault, if any. cover accounts for the call's lines when they
// are lost.
func (s *Stream) result(ctx context.Context, out []byte, err error, input []byte, n int, cover func()) error {
	if aerr := s.asm.records(ctx, out, input); aerr != nil {
		if !errors.Is(aerr, ErrBadOutput) {
			return aerr
		}
		s.asm.res.FailedLines += n
		cover() // counted as failed, not as silent
		s.asm.warn("%v", aerr)
	}
	if err != nil {
		var rejected *RejectedError
		if !errors.As(err, &rejected) {
			cover()
		}
		s.fault(err, n)
	}
	return nil
}

func (s *Stream) fault(err error, lines int) {
	var fault *FaultError
	var rejected *RejectedError
	switch {
	case errors.As(err, &rejected):
		s.asm.warn("%v", err)
	case errors.As(err, &fault):
		s.asm.res.FailedLines += lines
		s.asm.warn("%d line(s) lost: %v", lines, err)
		s.log.Warn("plugin fault", "plugin", fault.Plugin, "op", fault.Op, "err", fault.Err, "lines", lines)
		if errors.Is(err, ErrDisabled) {
			s.disabled = true
		}
	default:
		s.asm.res.FailedLines += lines
		s.asm.warn("%d line(s) lost: %v", lines, err)
		s.log.Warn("plugin error", "err", err, "lines", lines)
		if errors.Is(err, ErrDisabled) {
			s.disabled = true
		}
	}
}

// ExitCode gives the stream the agent process's exit code, before Close.
// Without a terminal event, a non-zero code makes the step "error" (spec
// 6.7; abi, "Final status"); the code is also the result's exit_code.
func (s *Stream) ExitCode(code int) {
	s.asm.exitCode = &code
	s.asm.res.ExitCode = &code
}

// Close feeds a last line without LF (a cut-off stream), ends the stream
// and returns the step's result. Provider, status, usage and the rest are
// filled in; the caller adds what only it knows (exit code, raw capture,
// plugin identity).
func (s *Stream) Close(ctx context.Context) (*transcript.AgentResult, error) {
	if s.closed {
		return nil, errors.New("normalize: stream closed twice")
	}
	if len(s.pending) > 0 && !s.skipping {
		if err := s.line(ctx, s.pending); err != nil {
			return nil, err
		}
		s.pending = s.pending[:0]
	}
	if err := s.send(ctx); err != nil {
		return nil, err
	}
	s.closed = true
	s.opts.Buffers.give(s) // no line is fed or sent again
	if !s.disabled {
		out, err := s.inst.End(ctx)
		s.asm.atEnd = true
		if aerr := s.asm.records(ctx, out, nil); aerr != nil {
			if !errors.Is(aerr, ErrBadOutput) {
				return nil, aerr
			}
			s.asm.warn("%v", aerr)
		}
		if err != nil {
			s.fault(err, 0)
		}
	}
	res, err := s.asm.finish(ctx)
	if res != nil && res.FailedLines > 0 && res.Status == transcript.StatusOK {
		// The provider's stream may have ended well; the record of it
		// did not: lines a plugin fault lost are not in the transcript.
		res.Status = transcript.StatusError
		res.Error = fmt.Sprintf("%d raw line(s) were not normalized: the plugin faulted (see warnings; the raw capture keeps them)", res.FailedLines)
	}
	return res, err
}

// Silent reports, after Close, the raw lines the plugin said nothing
// about: no record came from them, and they were neither declared ignored
// (wire.OpIgnored) nor counted unmapped. Spec 6.8 wants none; a plugin
// that leaves lines silent loses them without a drift signal. It returns
// their number and the first few line numbers.
//
// The count is not (yet) written into the step result: the plugins are
// being taught to declare what they ignore, and the captures harness
// checks it through the --json summaries of record and import.
func (s *Stream) Silent() (n int, first []int) {
	return s.asm.silentN, s.asm.silentFirst
}

// Run normalizes everything r yields.
func Run(ctx context.Context, inst Instance, r io.Reader, sink Sink, opts Options) (*transcript.AgentResult, error) {
	s, err := NewStream(ctx, inst, sink, opts)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := s.Feed(ctx, buf[:n]); err != nil {
				return nil, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("read raw output: %w", rerr)
		}
	}
	return s.Close(ctx)
}

// bom is the UTF-8 byte order mark, which some HTTP clients and editors
// write at the start of a saved response.
var bom = []byte("\xef\xbb\xbf")

// trimBOM drops a byte order mark at the start of the stream's first line,
// or of a later line when JSON follows it (files joined with cat): it marks
// an encoding, it is not text, and with it the line is not JSON. The raw
// capture keeps it.
func trimBOM(line []byte, first bool) []byte {
	rest, ok := bytes.CutPrefix(line, bom)
	if !ok {
		return line
	}
	if first || len(rest) > 0 && (rest[0] == '{' || rest[0] == '[') {
		return rest
	}
	return line
}

// escapeRawControls returns line with every raw control byte inside a JSON
// string replaced by its \u00XX escape, and whether it changed anything.
// Bytes outside strings are left alone (tabs and newlines there are white
// space).
func escapeRawControls(dst, line []byte) ([]byte, bool) {
	const hex = "0123456789abcdef"
	changed := false
	in, esc := false, false
	for _, c := range line {
		switch {
		case !in:
			in = c == '"'
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			in = false
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			changed = true
			continue
		}
		dst = append(dst, c)
	}
	return dst, changed
}
