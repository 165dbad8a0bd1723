package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/twasm/twasm/internal/oneopt"
)

// Errors reported per line by [Reader]. They arrive wrapped in a
// [*LineError] carrying the line number.
var (
	// ErrLineTooLong is reported for a line longer than the reader's
	// maximum line size. The line is skipped, not decoded.
	ErrLineTooLong = errors.New("transcript line too long")
	// ErrTruncated is reported for a final line with no trailing LF: the
	// recorder treats it as a torn tail left by a killed writer, even when
	// it happens to decode.
	ErrTruncated = errors.New("truncated final line (no trailing LF)")
)

// DefaultMaxLineSize is the longest line a [Reader] accepts unless told
// otherwise. Tool outputs and file contents end up inside single lines, so
// the limit is generous; it exists so that a corrupt file (or a non-JSONL
// file with no LF at all) cannot make the reader allocate without bound.
const DefaultMaxLineSize = 256 << 20

// defaultBufferSize is the size of the read buffer. Lines that fit in it are
// decoded straight from it with no copy.
const defaultBufferSize = 64 << 10

// LineError is a problem with one line of a transcript. Line is 1-based and
// counts every line of the input, blank ones included, so it matches what an
// editor shows. Offset is the byte offset at which the line starts.
type LineError struct {
	Line   int
	Offset int64
	Err    error
}

// Error prefixes the problem with its line number.
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error, so errors.Is(err, ErrMalformed) and
// errors.As(err, &unknownTypeErr) see through the line number.
func (e *LineError) Unwrap() error { return e.Err }

// ReaderOptions configures a [Reader]. The zero value is the default.
type ReaderOptions struct {
	// MaxLineSize is the longest line, in bytes and without its LF, that
	// the reader decodes. A longer line is reported as [ErrLineTooLong]
	// and skipped. 0 or less means [DefaultMaxLineSize].
	MaxLineSize int
	// BufferSize is the size of the read buffer: 0 means 64 KiB, and it
	// is at least 16 bytes. Longer lines are still read, by accumulating
	// chunks.
	BufferSize int
	// Outline, when set, decodes each line with [DecodeOutline] rather
	// than [DecodeEvent]: the same lines decode, with the same problems,
	// but a message's and a tool event's payload keeps only what
	// DecodeOutline says, for a pass over a run's structure.
	Outline bool
}

// Reader reads a transcript line by line, tolerantly: a line that cannot be
// decoded is reported with its line number and reading goes on with the
// next one. It is used like bufio.Scanner:
//
//	r := transcript.NewReader(f)
//	for r.Next() {
//		for _, p := range r.Problems() { ... } // each a *LineError
//		ev := r.Event() // nil: a malformed, too long or torn line
//		if ev == nil {
//			continue
//		}
//		...
//	}
//	if err := r.Err(); err != nil { ... } // I/O failure
//
// Next stops at every non-blank line, including lines it could not decode,
// so that a caller sees problems in file order. Lines made only of spaces,
// tabs and CRs are skipped but still counted.
//
// Buffer ownership: [Reader.Line] returns a slice of the reader's internal
// buffer, valid only until the next call to Next; copy it to keep it. The
// buffer grows to the longest line read so far and is reused. The
// [*Event] returned by [Reader.Event] owns all its memory and stays valid.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	maxLine int
	decoder func([]byte) (*Event, error)

	acc []byte // accumulates a line longer than the bufio buffer

	line    []byte
	lineNo  int
	offset  int64 // start of the current line
	next    int64 // start of the following line
	ev      *Event
	lineErr error
	warns   []error
	torn    bool

	err  error // sticky fatal error
	done bool
}

// NewReader returns a Reader reading from rd, configured by at most one
// [ReaderOptions] (none: the defaults).
func NewReader(rd io.Reader, opts ...ReaderOptions) *Reader {
	o := oneopt.Get("transcript.NewReader", opts)
	maxLine, bufSize := o.MaxLineSize, o.BufferSize
	if maxLine <= 0 {
		maxLine = DefaultMaxLineSize
	}
	if bufSize == 0 {
		bufSize = defaultBufferSize
	}
	bufSize = max(bufSize, 16)
	decoder := DecodeEvent
	if o.Outline {
		decoder = DecodeOutline
	}
	return &Reader{br: bufio.NewReaderSize(rd, bufSize), maxLine: maxLine, decoder: decoder}
}

// Next advances to the next non-blank line and reports whether there is
// one. It returns false at the end of the input or after a read error; see
// [Reader.Err].
func (r *Reader) Next() bool {
	r.ev, r.lineErr, r.warns, r.line, r.torn = nil, nil, nil, nil, false
	for !r.done {
		raw, tooLong, torn, n, err := r.readLine()
		if err != nil {
			r.err = err
			r.done = true
			return false
		}
		if n == 0 && !torn {
			// Clean end of input.
			r.done = true
			return false
		}
		r.lineNo++
		r.offset = r.next
		r.next += n
		if tooLong {
			r.lineErr = &LineError{Line: r.lineNo, Offset: r.offset,
				Err: fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, r.maxLine)}
			r.torn = torn
			return true
		}
		if isBlank(raw) {
			continue
		}
		r.line, r.torn = raw, torn
		r.decode()
		return true
	}
	return false
}

func (r *Reader) decode() {
	ev, err := r.decoder(r.line)
	wrap := func(e error) error { return &LineError{Line: r.lineNo, Offset: r.offset, Err: e} }
	switch {
	case err == nil:
	case ev != nil: // warnings only
		for _, w := range unjoin(err) {
			r.warns = append(r.warns, wrap(w))
		}
	default:
		if r.torn {
			err = fmt.Errorf("%w (%w)", err, ErrTruncated)
		}
		r.lineErr = wrap(err)
		return
	}
	r.ev = ev
	if r.torn {
		r.warns = append(r.warns, wrap(ErrTruncated))
	}
}

// unjoin splits an errors.Join result so that each warning is reported on
// its own and can be matched with errors.As.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// readLine reads one line without its LF. n is the number of input bytes
// consumed, LF included; n == 0 with torn false means end of input. A line
// longer than the limit is consumed but not kept (tooLong). torn reports a
// final line with no LF.
func (r *Reader) readLine() (line []byte, tooLong, torn bool, n int64, err error) {
	r.acc = r.acc[:0]
	for {
		chunk, rerr := r.br.ReadSlice('\n')
		n += int64(len(chunk))
		complete := rerr == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		if !tooLong {
			if int64(len(r.acc))+int64(len(chunk)) > int64(r.maxLine) {
				// Drop what was gathered so far but keep the capacity:
				// the rest of the line is skipped, not stored.
				tooLong = true
				r.acc = r.acc[:0]
			} else if complete && len(r.acc) == 0 {
				// Common case: the whole line sits in the read buffer.
				return chunk, false, false, n, nil
			} else {
				r.acc = append(r.acc, chunk...)
			}
		}
		switch {
		case complete:
			return r.acc, tooLong, false, n, nil
		case rerr == bufio.ErrBufferFull:
			continue
		case rerr == io.EOF:
			if n == 0 {
				return nil, false, false, 0, nil
			}
			return r.acc, tooLong, true, n, nil
		default:
			return nil, false, false, n, fmt.Errorf("transcript: read line %d: %w", r.lineNo+1, rerr)
		}
	}
}

func isBlank(b []byte) bool {
	return len(bytes.TrimLeft(b, " \t\r")) == 0
}

// Event returns the event decoded from the current line, or nil when the
// line could not be decoded (see [Reader.Problems]). An event whose type
// or block types are unknown is returned, with warnings.
func (r *Reader) Event() *Event { return r.ev }

// Line returns the raw bytes of the current line without its LF; nil for a
// line that was too long. The slice is valid until the next call to Next.
func (r *Reader) Line() []byte { return r.line }

// Problems returns what is wrong with the current line, each a
// [*LineError] carrying the line's number and byte offset. When the line
// could not be decoded ([Reader.Event] is nil) it is one error wrapping
// [ErrMalformed] or [ErrLineTooLong], and also [ErrTruncated] when the
// line is a torn tail (its offset is where a writer must truncate the file
// to repair it). Otherwise they are warnings: unknown event and block
// types ([*UnknownTypeError]), and [ErrTruncated] for a torn tail that
// still decoded. A clean line has none. The slice is fresh for every line
// and may be kept.
func (r *Reader) Problems() []error {
	if r.lineErr != nil {
		return []error{r.lineErr}
	}
	return r.warns
}

// Err returns the first read error other than io.EOF. It is sticky: once
// set, Next returns false.
func (r *Reader) Err() error { return r.err }

// ReadAll reads every line of rd. It returns the decoded events in file
// order (events of unknown types included), every per-line problem and
// warning as a [*LineError] in file order, and the fatal read error, if any.
// opts are as for [NewReader].
func ReadAll(rd io.Reader, opts ...ReaderOptions) ([]*Event, []error, error) {
	r := NewReader(rd, opts...)
	var events []*Event
	var problems []error
	for r.Next() {
		problems = append(problems, r.Problems()...)
		if ev := r.Event(); ev != nil {
			events = append(events, ev)
		}
	}
	return events, problems, r.Err()
}
