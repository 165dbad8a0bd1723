package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Reads never go past the size the caller observed under the file lock, so
// a short read (io.EOF) means the file shrank behind the lock: an error.

// tailChunk is how much is read per step when walking a file backwards.
// Most lines are well under it, so finding the last line costs one read.
const tailChunk = 64 << 10

// maxFallbackLine bounds the size of a line decoded with encoding/json when
// its prefix is not in the canonical form; bigger odd lines are skipped
// rather than read into memory.
const maxFallbackLine = 64 << 20

// tailInfo describes the end of a transcript file as found by scanTail.
type tailInfo struct {
	size int64 // bytes examined: the file size at the time of the scan
	// end is the offset just past the last LF: bytes [end, size) are a
	// torn tail (a line without its LF), empty when end == size.
	end int64
	// lastSeq and runID come from the last complete line that carries a
	// seq; found is false when no complete line does.
	lastSeq uint64
	runID   string
	found   bool
	// lastLineStart is where that line starts (for diagnostics/tests).
	lastLineStart int64
}

func (t tailInfo) torn() int64 { return t.size - t.end }

// scanTail walks backwards from size to find the last LF and the seq of the
// last complete line that has one. It reads only the bytes it needs (the
// tail and the last line, in chunk-sized reads) and never modifies the file.
// Complete lines without a parseable seq (foreign or damaged lines) are
// skipped, not treated as torn: only bytes after the last LF are torn.
func scanTail(ra io.ReaderAt, size int64, chunk int) (tailInfo, error) {
	if chunk < 1 {
		chunk = tailChunk
	}
	buf := make([]byte, min(int64(chunk), max(size, 1)))
	t := tailInfo{size: size}
	lf, err := lastIndexByte(ra, 0, size, '\n', buf)
	if err != nil {
		return t, err
	}
	t.end = lf + 1 // 0 when there is no LF at all
	for lineEnd := lf; lineEnd >= 0; {
		start, err := lastIndexByte(ra, 0, lineEnd, '\n', buf)
		if err != nil {
			return t, err
		}
		start++
		seq, runID, ok, err := parseLineHead(ra, start, lineEnd)
		if err != nil {
			return t, err
		}
		if ok {
			t.lastSeq, t.runID, t.found, t.lastLineStart = seq, runID, true, start
			return t, nil
		}
		lineEnd = start - 1
	}
	return t, nil
}

// lastIndexByte returns the offset of the last c in [from, to), or -1.
func lastIndexByte(ra io.ReaderAt, from, to int64, c byte, buf []byte) (int64, error) {
	for to > from {
		n := min(int64(len(buf)), to-from)
		b := buf[:n]
		if _, err := ra.ReadAt(b, to-n); err != nil {
			return -1, fmt.Errorf("read at %d: %w", to-n, err)
		}
		if i := bytes.LastIndexByte(b, c); i >= 0 {
			return to - n + int64(i), nil
		}
		to -= n
	}
	return -1, nil
}

// canonicalHead is how every line this package writes begins.
var canonicalHead = []byte(`{"seq":`)

// parseLineHead extracts seq and run_id from the line [start, end) (end is
// the offset of its LF). The fast path reads only the head of a line in the
// canonical form `{"seq":N,"run_id":"...",` and checks that it ends in '}';
// any other line is decoded with encoding/json when it is not huge.
func parseLineHead(ra io.ReaderAt, start, end int64) (seq uint64, runID string, ok bool, err error) {
	n := end - start
	if n < 2 {
		return 0, "", false, nil
	}
	var last [1]byte
	if _, err := ra.ReadAt(last[:], end-1); err != nil {
		return 0, "", false, fmt.Errorf("read at %d: %w", end-1, err)
	}
	head := make([]byte, min(n, 128))
	if _, err := ra.ReadAt(head, start); err != nil {
		return 0, "", false, fmt.Errorf("read at %d: %w", start, err)
	}
	if last[0] == '}' {
		if seq, runID, ok := parseCanonicalHead(head); ok {
			return seq, runID, true, nil
		}
	}
	if n > maxFallbackLine {
		return 0, "", false, nil
	}
	line := make([]byte, n)
	if _, err := ra.ReadAt(line, start); err != nil {
		return 0, "", false, fmt.Errorf("read at %d: %w", start, err)
	}
	seq, runID, ok = parseLineJSON(line)
	return seq, runID, ok, nil
}

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

// parseLineJSON is the slow path for lines not in canonical form (another
// writer's field order, whitespace, CRLF).
func parseLineJSON(line []byte) (uint64, string, bool) {
	var v struct {
		Seq   *uint64 `json:"seq"`
		RunID string  `json:"run_id"`
	}
	if err := json.Unmarshal(line, &v); err != nil || v.Seq == nil {
		return 0, "", false
	}
	return *v.Seq, v.RunID, true
}

// countLines counts the LFs in [0, end): the number of complete lines
// before a torn tail, used only when reporting a repair.
func countLines(ra io.ReaderAt, end int64) (int, error) {
	buf := make([]byte, min(int64(tailChunk), max(end, 1)))
	n := 0
	for off := int64(0); off < end; {
		b := buf[:min(int64(len(buf)), end-off)]
		if _, err := ra.ReadAt(b, off); err != nil {
			return 0, fmt.Errorf("read at %d: %w", off, err)
		}
		n += bytes.Count(b, []byte{'\n'})
		off += int64(len(b))
	}
	return n, nil
}
