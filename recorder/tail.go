package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/twasm/twasm/internal/runstate"
)

// Reads never go past the size the caller observed under the file lock, so
// a short read (io.EOF) means the file shrank behind the lock: an error.

// scanChunk is how much is read at a time when reading lines forward.
const scanChunk = 256 << 10

// headLen is how much of a line is looked at to find its seq, run id and
// type in the canonical layout.
const headLen = 512

// maxFallbackLine bounds the size of a line decoded with encoding/json (a
// line of another writer's layout, or a run/step line); bigger lines are
// taken by their canonical head or skipped rather than read into memory.
const maxFallbackLine = 64 << 20

// scanner reads the complete lines of a transcript forward, from a line
// boundary whose run state is known, and applies each to that state. It
// reads every byte once, in scanChunk reads, and decodes only the lines
// that change more than the seq (run.*, step.*) or are not in the
// canonical layout.
type scanner struct {
	ra    io.ReaderAt
	runID string
	st    *runstate.State
	lines int64 // complete lines so far
	buf   []byte
}

// scan reads [from, size) and returns end, the offset just past the last
// LF: bytes [end, size) are a torn tail (a line without its LF).
func (sc *scanner) scan(from, size int64) (end int64, err error) {
	if sc.buf == nil {
		sc.buf = make([]byte, scanChunk)
	}
	buf := sc.buf
	end = from
	pos, carry := from, 0 // buf[:carry] is the start of the line at end
	for pos < size {
		if carry == len(buf) {
			// A line longer than the buffer: find its LF without keeping it.
			head := bytes.Clone(buf[:min(len(buf), headLen)])
			lf, err := indexByteFrom(sc.ra, pos, size, '\n', buf)
			if err != nil {
				return end, err
			}
			if lf < 0 {
				return end, nil
			}
			if err := sc.longLine(head, end, lf); err != nil {
				return end, err
			}
			end, pos, carry = lf+1, lf+1, 0
			continue
		}
		m := min(int64(len(buf)-carry), size-pos)
		if _, err := sc.ra.ReadAt(buf[carry:carry+int(m)], pos); err != nil {
			return end, fmt.Errorf("read at %d: %w", pos, err)
		}
		data := buf[:carry+int(m)]
		i := 0
		for {
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				break
			}
			if err := sc.line(data[i:i+j], end); err != nil {
				return end, err
			}
			i += j + 1
			end += int64(j + 1)
		}
		carry = copy(buf, data[i:])
		pos += m
	}
	return end, nil
}

// indexByteFrom returns the offset of the first c in [from, to), or -1.
func indexByteFrom(ra io.ReaderAt, from, to int64, c byte, buf []byte) (int64, error) {
	for from < to {
		n := min(int64(len(buf)), to-from)
		b := buf[:n]
		if _, err := ra.ReadAt(b, from); err != nil {
			return -1, fmt.Errorf("read at %d: %w", from, err)
		}
		if i := bytes.IndexByte(b, c); i >= 0 {
			return from + int64(i), nil
		}
		from += n
	}
	return -1, nil
}

// line handles one complete line held in memory, starting at off.
func (sc *scanner) line(line []byte, off int64) error {
	sc.lines++
	t := trimCR(line)
	closed := len(t) > 0 && t[len(t)-1] == '}'
	h, ok, err := parseHead(line[:min(len(line), headLen)], closed, func() ([]byte, error) { return line, nil }, int64(len(line)))
	if err != nil || !ok {
		return err
	}
	return sc.apply(h, off)
}

// longLine handles a complete line [start, lf) too long to hold in the
// scan buffer; head is its beginning.
func (sc *scanner) longLine(head []byte, start, lf int64) error {
	sc.lines++
	var last [1]byte
	if _, err := sc.ra.ReadAt(last[:], lf-1); err != nil {
		return fmt.Errorf("read at %d: %w", lf-1, err)
	}
	if last[0] == '\r' && lf-2 >= start {
		if _, err := sc.ra.ReadAt(last[:], lf-2); err != nil {
			return fmt.Errorf("read at %d: %w", lf-2, err)
		}
	}
	n := lf - start
	full := func() ([]byte, error) {
		b := make([]byte, n)
		if _, err := sc.ra.ReadAt(b, start); err != nil {
			return nil, fmt.Errorf("read at %d: %w", start, err)
		}
		return b, nil
	}
	h, ok, err := parseHead(head, last[0] == '}', full, n)
	if err != nil || !ok {
		return err
	}
	return sc.apply(h, start)
}

func (sc *scanner) apply(h *runstate.Head, off int64) error {
	if h.RunID != sc.runID {
		return fmt.Errorf("%w: the line at offset %d belongs to run %q, not %q", ErrRunMismatch, off, truncateID(h.RunID), sc.runID)
	}
	sc.st.Apply(h)
	return nil
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// parseHead finds the seq, run id and type of a line (and, for run and step
// lines, what the run state needs). The fast path reads only the head of a
// line in the canonical form `{"seq":N,"run_id":"...",...,"type":"...",`
// that ends in '}'; run and step lines and lines in any other layout are
// decoded with encoding/json when they are not huge. ok is false for a
// line without a seq (a foreign line, kept and skipped).
func parseHead(head []byte, closed bool, full func() ([]byte, error), n int64) (*runstate.Head, bool, error) {
	if closed {
		if seq, runID, ok := parseCanonicalHead(head); ok {
			if typ, ok := canonicalType(head); ok && !runstate.Brackets(typ) {
				return &runstate.Head{Seq: &seq, RunID: runID, Type: typ}, true, nil
			}
		}
	}
	if n > maxFallbackLine {
		if seq, runID, ok := parseCanonicalHead(head); ok && closed {
			typ, _ := canonicalType(head)
			return &runstate.Head{Seq: &seq, RunID: runID, Type: typ}, true, nil
		}
		return nil, false, nil
	}
	line, err := full()
	if err != nil {
		return nil, false, err
	}
	var h runstate.Head
	if json.Unmarshal(line, &h) != nil {
		// The envelope is there but some field has an odd type: the seq,
		// run id and type are what matter.
		var v struct {
			Seq   *uint64 `json:"seq"`
			RunID string  `json:"run_id"`
			Type  string  `json:"type"`
		}
		if json.Unmarshal(line, &v) != nil {
			return nil, false, nil
		}
		h = runstate.Head{Seq: v.Seq, RunID: v.RunID, Type: v.Type}
	}
	if h.Seq == nil {
		return nil, false, nil
	}
	return &h, true, nil
}

// canonicalHead is how every line this package writes begins.
var canonicalHead = []byte(`{"seq":`)

// parseCanonicalHead parses `{"seq":N,"run_id":"X"` at the start of head.
// It accepts only a decimal seq without leading zeros (as written by
// strconv) followed by ',' so that a prefix of a longer number is never
// mistaken for the seq.
func parseCanonicalHead(head []byte) (uint64, string, bool) {
	rest, ok := bytes.CutPrefix(head, canonicalHead)
	if !ok {
		return 0, "", false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != ',' || (rest[0] == '0' && i > 1) {
		return 0, "", false
	}
	seq, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil {
		return 0, "", false
	}
	rest, ok = bytes.CutPrefix(rest[i+1:], []byte(`"run_id":"`))
	if !ok {
		return 0, "", false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return 0, "", false
	}
	return seq, string(rest[:q]), true
}

var typeKey = []byte(`,"type":"`)

// canonicalType finds the type in a canonical head. The first `,"type":"`
// is the envelope's: inside a JSON string every quote is escaped, so the
// sequence cannot occur in the run ids before it.
func canonicalType(head []byte) (string, bool) {
	i := bytes.Index(head, typeKey)
	if i < 0 {
		return "", false
	}
	rest := head[i+len(typeKey):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return "", false
	}
	return string(rest[:q]), true
}
