package archive

import (
	"bytes"
	"errors"
	"io"
	"io/fs"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// copiedFrom finds the run that holds a new session's first lines
// already (abi.SourceFacts.Copied): a run of the same head (the first
// lines both files start with, headLen bytes) whose session this file
// (f, complete up to end; at path) goes on sharing bytes with past the
// head, as a fork that copied its parent's journal with no mark does
// (the Kimi CLI's /fork and /undo). A run's session is read from the
// file it was last read from, or another file it was found at
// (Entry.Also), as far as that file's first bytes still hash to what the
// run holds of it; the run sharing the most whole lines wins. It returns
// nil when no run shares a line past the head, or when the shared bytes
// are the whole of both (the same session, which the caller matched
// already). A file that cannot be read is passed over; other errors are
// returned.
func (a *Archiver) copiedFrom(f io.ReaderAt, path, head string, headLen, end int64) (*abi.SourceCopy, error) {
	var best *abi.SourceCopy
	bestBytes := headLen
	for _, c := range a.ledger.ByHead(head) {
		held := append([]Seen{{Path: c.Path, Offset: c.Offset, SHA256: c.SHA256}}, c.Also...)
		for _, s := range held {
			if s.Path == path || s.Offset <= bestBytes {
				continue
			}
			n, lines, err := sharedLines(f, end, s)
			if err != nil {
				return nil, err
			}
			if n > bestBytes {
				best, bestBytes = &abi.SourceCopy{Run: c.RunID, Lines: lines}, n
			}
		}
	}
	return best, nil
}

// sharedLines is how many bytes (n, ending at a line end) and lines the
// first end bytes of f share with the first s.Offset bytes of the file
// at s.Path, when that file's first s.Offset bytes still hash to
// s.SHA256; 0 when they do not, or it is gone.
func sharedLines(f io.ReaderAt, end int64, s Seen) (n, lines int64, err error) {
	g, err := regfile.Open(s.Path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer g.Close()
	if h, err := hashPrefix(g, s.Offset); err != nil || h != s.SHA256 {
		return 0, 0, nil // shorter, or no longer what the run holds
	}
	limit := min(end, s.Offset)
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	var last int64 // the byte after the last line end both share
	for off := int64(0); off < limit; {
		k := int(min(int64(len(a)), limit-off))
		if _, err := f.ReadAt(a[:k], off); err != nil && err != io.EOF {
			return 0, 0, err
		}
		if _, err := g.ReadAt(b[:k], off); err != nil && err != io.EOF {
			return 0, 0, err
		}
		same := k
		for i := range k {
			if a[i] != b[i] {
				same = i
				break
			}
		}
		lines += int64(bytes.Count(a[:same], []byte{'\n'}))
		if i := bytes.LastIndexByte(a[:same], '\n'); i >= 0 {
			last = off + int64(i) + 1
		}
		if same < k {
			break
		}
		off += int64(k)
	}
	if last == end && last == s.Offset {
		return 0, 0, nil // the same bytes: the same session
	}
	return last, lines, nil
}
