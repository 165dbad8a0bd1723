package recorder

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runstate"
)

// stateSuffix is appended to a transcript's path to name its checkpoint:
// the run state (open steps and sub-run links, last seq) as of a line
// boundary, so that reopening an unfinished run reads only what was
// written after it instead of the whole file.
const stateSuffix = ".state"

// checkpointEvery is how many bytes a recorder appends between
// checkpoints, so that a writer killed in a long step leaves at most this
// much for the next one to read.
const checkpointEvery = 64 << 20

// maxCheckpoint bounds the size of a checkpoint file that is read.
const maxCheckpoint = 16 << 20

// checkpoint is the content of the state file: one JSON object.
type checkpoint struct {
	RunID  string         `json:"run_id"`
	Offset int64          `json:"offset"`
	Lines  int64          `json:"lines"`
	State  runstate.State `json:"state"`
}

// loadCheckpoint reads the state file and, when it matches the transcript
// (same run, an offset at a line boundary no further than size whose line
// carries the checkpoint's last seq), makes it the starting point of the
// scan. Anything else (no file, an unreadable or stale one) leaves the
// recorder at offset 0, to read the whole file; a file that exists but does
// not match is logged. Called with the file lock held.
func (r *Recorder) loadCheckpoint(size int64) {
	cp, err := r.readCheckpoint(size)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("recorder: ignoring the run's checkpoint, reading the whole transcript", "path", r.path+stateSuffix, "err", err)
		}
		return
	}
	r.end, r.lines, r.state = cp.Offset, cp.Lines, cp.State
	r.cpEnd = cp.Offset
}

func (r *Recorder) readCheckpoint(size int64) (*checkpoint, error) {
	f, err := os.OpenFile(r.path+stateSuffix, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", regfile.ErrNotRegular, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCheckpoint+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCheckpoint {
		return nil, errors.New("too big")
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, err
	}
	switch {
	case cp.RunID != r.runID:
		return nil, fmt.Errorf("it is for run %q", truncateID(cp.RunID))
	case cp.Offset < 0 || cp.Offset > size || cp.Lines < 0:
		return nil, fmt.Errorf("offset %d is outside the transcript (%d bytes)", cp.Offset, size)
	case cp.Offset == 0:
		if cp.Lines != 0 || cp.State.LastSeq != 0 || cp.State.First != "" {
			return nil, errors.New("inconsistent at offset 0")
		}
		return &cp, nil
	}
	// The line ending at the offset must be the one the state was taken
	// after.
	var last [1]byte
	if _, err := r.rf.ReadAt(last[:], cp.Offset-1); err != nil {
		return nil, err
	}
	if last[0] != '\n' {
		return nil, fmt.Errorf("offset %d is not at a line boundary", cp.Offset)
	}
	start, err := lastIndexByte(r.rf, 0, cp.Offset-1, '\n', make([]byte, min(scanChunk, cp.Offset)))
	if err != nil {
		return nil, err
	}
	start++
	n := cp.Offset - 1 - start
	head := make([]byte, min(n, headLen))
	if _, err := r.rf.ReadAt(head, start); err != nil {
		return nil, err
	}
	last[0] = 0
	if n > 0 {
		if _, err := r.rf.ReadAt(last[:], start+n-1); err != nil {
			return nil, err
		}
		if last[0] == '\r' && n > 1 {
			if _, err := r.rf.ReadAt(last[:], start+n-2); err != nil {
				return nil, err
			}
		}
	}
	full := func() ([]byte, error) {
		line := make([]byte, n)
		_, err := r.rf.ReadAt(line, start)
		return line, err
	}
	h, ok, err := parseHead(head, last[0] == '}', full, n)
	if err != nil {
		return nil, err
	}
	if !ok || *h.Seq != cp.State.LastSeq || h.RunID != r.runID {
		return nil, fmt.Errorf("the line before offset %d is not seq %d", cp.Offset, cp.State.LastSeq)
	}
	return &cp, nil
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

// saveCheckpoint writes the state as of r.end, or removes the state file
// once the run has finished (a finished run is never appended to, so its
// state needs no checkpoint). It replaces the file by rename, so a reader
// sees the old checkpoint or the new one; a crash may leave either, and
// both are checked against the transcript when read. Called with the file
// lock held, after refreshTail. Failures are logged: the checkpoint only
// saves reading.
func (r *Recorder) saveCheckpoint() {
	side := r.path + stateSuffix
	if r.state.Finished {
		// unlink(2) alone: os.Remove tries rmdir(2) too when it fails,
		// and the checkpoint is usually not there.
		if err := syscall.Unlink(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("recorder: remove the checkpoint of a finished run", "path", side, "err", err)
		}
		r.cpEnd = r.end
		return
	}
	if err := r.writeCheckpoint(side); err != nil {
		r.log.Warn("recorder: write the run's checkpoint", "path", side, "err", err)
		return
	}
	r.cpEnd = r.end
}

func (r *Recorder) writeCheckpoint(side string) error {
	data, err := json.Marshal(checkpoint{RunID: r.runID, Offset: r.end, Lines: r.lines, State: r.state})
	if err != nil {
		return err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := side + ".tmp-" + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(data, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, side); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
