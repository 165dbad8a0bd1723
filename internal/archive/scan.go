package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// maxHead bounds the first line read as a session's content identity.
const maxHead = 1 << 20

// minHead is how many bytes the head covers at least: a first line as
// short as "{" (a pretty-printed Gemini chat) would make every such
// session look alike.
const minHead = 64

// headStep is how much of a file readHead reads first.
const headStep = 16 << 10

// readHead reads a session's head: its first complete lines (LF
// included) up to at least minHead bytes, at most maxHead. Only complete
// lines count, so the head does not change as the file grows. ok is false
// when the file holds no complete line yet and is not settled.
//
// The file is read headStep bytes first, then twice as much each time
// until the head's lines end in what was read: a first line is most
// often a few hundred bytes, and a sync's workers each read a session's
// head at once (reading maxHead for each was a MiB of heap per worker).
func readHead(f io.ReaderAt, size int64, settled bool) (line []byte, ok bool, err error) {
	n := min(size, maxHead)
	var buf []byte
	end := 0
	for have := min(n, headStep); ; have = min(2*have, n) {
		read := len(buf)
		buf = append(buf, make([]byte, have-int64(read))...)
		if _, err := f.ReadAt(buf[read:], int64(read)); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		for end < minHead {
			i := bytes.IndexByte(buf[end:], '\n')
			if i < 0 {
				break
			}
			end += i + 1
		}
		if end >= minHead || have == n {
			break
		}
	}
	if end > 0 {
		return buf[:end], true, nil
	}
	if settled || n == maxHead {
		return buf, len(buf) > 0, nil
	}
	return nil, false, nil
}

// completeEnd returns the offset just past the last LF of the file's first
// size bytes (0 when there is none): what may be read of a file another
// process may still be writing.
func completeEnd(f io.ReaderAt, size int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(0, end-chunk)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// hashPrefix is the sha256 of the file's first n bytes.
func hashPrefix(f io.ReaderAt, n int64) (string, error) { return hashPrefixIn(f, n, nil) }

// hashPrefixIn is hashPrefix reading into buf (nil: a buffer of its
// own, of 32 KiB): a part's hash reads into the frame buffer its worker
// keeps, where a buffer made for each part was 13 to 23 MB of what a
// first sync of 500 sessions allocated.
func hashPrefixIn(f io.ReaderAt, n int64, buf []byte) (string, error) {
	h := sha256.New()
	if m, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, n), buf); err != nil {
		return "", err
	} else if m != n {
		return "", fmt.Errorf("short read: %d of %d bytes", m, n)
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])), nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var tsKeys = [][]byte{[]byte(`"timestamp"`), []byte(`"startTime"`), []byte(`"lastUpdated"`)}

// timestamps finds the earliest and latest RFC 3339 time given under a
// "timestamp" (or Gemini's "startTime"/"lastUpdated") key in b. It is a
// byte scan, not a parse: the plugin stays the authority on content; this
// only dates the run and step brackets.
func timestamps(b []byte, first, last time.Time) (time.Time, time.Time) {
	for _, key := range tsKeys {
		rest := b
		for {
			i := bytes.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			j := 0
			for j < len(rest) && (rest[j] == ' ' || rest[j] == ':' || rest[j] == '\t') {
				j++
			}
			if j >= len(rest) || rest[j] != '"' {
				continue
			}
			k := bytes.IndexByte(rest[j+1:], '"')
			if k < 0 || k > 40 {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, string(rest[j+1:j+1+k]))
			if err != nil {
				continue
			}
			t = t.UTC()
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
	}
	return first, last
}
