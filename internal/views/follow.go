package views

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/transcript"
)

// DefaultPollInterval is how often a [Follower] looks at its file. Polling
// rather than inotify keeps twasm free of a platform-specific dependency,
// and at this rate following costs one fstat per poll and feels live.
const DefaultPollInterval = 150 * time.Millisecond

// ErrFollowLineTooLong is returned when a line grows past the follower's
// limit without an LF, so that a file that is not JSONL cannot make the
// follower buffer without bound.
var ErrFollowLineTooLong = errors.New("follow: line too long")

// FollowOptions tunes a [Follower].
type FollowOptions struct {
	// Interval between polls; 0 means DefaultPollInterval.
	Interval time.Duration
	// MaxLine bounds a line in bytes; 0 means transcript.DefaultMaxLineSize.
	MaxLine int
	// OnReset is called when the file was replaced or shrank below what
	// was already delivered, before it is read again from its start; the
	// caller is about to see lines it has seen (tail skips them by seq).
	OnReset func(reason string)
}

// Follower reads a file that another process appends to and delivers it
// line by line. A line is complete only with its LF: bytes after the last
// LF are held back, and if the writer repairs a torn tail (truncates it and
// writes something else) the held bytes are dropped, so a half line is
// never delivered and never glued onto the next one. A missing file is
// waited for.
//
// A Follower is not safe for concurrent use. It starts no goroutines.
type Follower struct {
	path    string
	opts    FollowOptions
	f       *os.File
	fi      fs.FileInfo
	off     int64  // end of the last delivered line
	pending []byte // bytes after off, no LF among them
	buf     []byte
}

// NewFollower returns a follower of the file at path; nothing is opened
// until the first poll.
func NewFollower(path string, opts FollowOptions) *Follower {
	if opts.Interval <= 0 {
		opts.Interval = DefaultPollInterval
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = transcript.DefaultMaxLineSize
	}
	return &Follower{path: path, opts: opts, buf: make([]byte, 64<<10)}
}

// Pending returns how many bytes of an incomplete last line are held back.
func (f *Follower) Pending() int { return len(f.pending) }

// Opened reports whether the file has been found.
func (f *Follower) Opened() bool { return f.f != nil }

// Close releases the file.
func (f *Follower) Close() error {
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

func (f *Follower) reset(reason string) {
	f.off, f.pending = 0, f.pending[:0]
	if f.opts.OnReset != nil {
		f.opts.OnReset(reason)
	}
}

// Poll reads what was appended since the last poll and calls fn with each
// complete line, without its LF; the slice is valid only during the call.
// It stops early, returning true, when fn does. A file that does not exist
// yet is not an error: Poll returns and the next one looks again.
func (f *Follower) Poll(fn func(line []byte) (stop bool, err error)) (bool, error) {
	if err := f.open(); err != nil || f.f == nil {
		return false, err
	}
	st, err := f.f.Stat()
	if err != nil {
		return false, fmt.Errorf("follow %s: %w", f.path, err)
	}
	size := st.Size()
	switch {
	case size < f.off:
		f.reset(fmt.Sprintf("%s shrank from %d to %d bytes", f.path, f.off, size))
	case size < f.off+int64(len(f.pending)):
		// The torn tail we were holding was cut (a writer's repair).
		f.pending = f.pending[:0]
	case len(f.pending) > 0:
		// The tail may have been cut and rewritten between two polls:
		// keep the held bytes only if the file still has them.
		cur := make([]byte, len(f.pending))
		if _, err := f.f.ReadAt(cur, f.off); err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("follow %s: %w", f.path, err)
		}
		if !bytes.Equal(cur, f.pending) {
			f.pending = f.pending[:0]
		}
	}
	for pos := f.off + int64(len(f.pending)); pos < size; {
		n, err := f.f.ReadAt(f.buf[:min(int64(len(f.buf)), size-pos)], pos)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				// Shrank while reading; the next poll sorts it out.
				break
			}
			return false, fmt.Errorf("follow %s: %w", f.path, err)
		}
		pos += int64(n)
		chunk := f.buf[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			var line []byte
			if len(f.pending) > 0 {
				f.pending = append(f.pending, chunk[:i]...)
				line = f.pending
			} else {
				line = chunk[:i]
			}
			f.off += int64(len(line)) + 1
			stop, err := fn(line)
			f.pending = f.pending[:0]
			chunk = chunk[i+1:]
			if stop || err != nil {
				return stop, err
			}
		}
		if len(f.pending)+len(chunk) > f.opts.MaxLine {
			return false, fmt.Errorf("%w: %s: more than %d bytes at offset %d", ErrFollowLineTooLong, f.path, f.opts.MaxLine, f.off)
		}
		f.pending = append(f.pending, chunk...)
	}
	return false, nil
}

func (f *Follower) open() error {
	if f.f != nil {
		// Notice a file replaced under the same name (a rewrite by rename).
		st, err := os.Stat(f.path)
		if err != nil || os.SameFile(st, f.fi) {
			return nil
		}
		f.f.Close()
		f.f = nil
		f.reset(f.path + " was replaced")
	}
	file, err := regfile.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("follow: %w", err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return fmt.Errorf("follow %s: %w", f.path, err)
	}
	f.f, f.fi = file, st
	return nil
}

// Run polls until fn stops it (nil), ctx is done (ctx's error) or a
// failure.
func (f *Follower) Run(ctx context.Context, fn func(line []byte) (stop bool, err error)) error {
	t := time.NewTicker(f.opts.Interval)
	defer t.Stop()
	for {
		stop, err := f.Poll(fn)
		if err != nil || stop {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
