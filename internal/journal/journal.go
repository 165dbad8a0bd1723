package journal

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
)

// Name is the journal's file name in the transcripts directory.
const Name = ".journal"

// Path is the journal of a transcripts directory.
func Path(dir string) string { return filepath.Join(dir, Name) }

// DirOf returns the transcripts directory whose journal a transcript at
// path writes to: its directory when the path is
// <storage>/transcripts/<run-id>.jsonl, "" for any other path (a file a
// library user keeps elsewhere has no index to tell).
func DirOf(path string) string {
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	if filepath.Base(dir) != "transcripts" || !strings.HasSuffix(base, ".jsonl") || runid.Valid(strings.TrimSuffix(base, ".jsonl")) != nil {
		return ""
	}
	return dir
}

// Entry kinds.
const (
	Open  = 'o' // a writer opened the run's transcript
	Close = 'c' // that writer closed it
)

// Entry is one line of the journal.
type Entry struct {
	Kind  byte
	RunID string
	Nonce string
}

func (e Entry) line() string { return string(e.Kind) + " " + e.RunID + " " + e.Nonce + "\n" }

// Writer is one writer's pair of entries for a run.
type Writer struct {
	dir, runID, nonce string
}

// Begin appends the open entry of a writer of runID's transcript in dir.
// The error says why it could not (the journal is then removed, best
// effort, so that readers check every file); the Writer is usable
// either way.
func Begin(dir, runID string) (*Writer, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	w := &Writer{dir: dir, runID: runID, nonce: hex.EncodeToString(b)}
	return w, w.append(Open)
}

// End appends the writer's close entry; nil Writer: nothing.
func (w *Writer) End() error {
	if w == nil {
		return nil
	}
	return w.append(Close)
}

func (w *Writer) append(kind byte) error {
	err := appendLine(w.dir, Entry{kind, w.runID, w.nonce}.line())
	if err != nil {
		if rerr := os.Remove(Path(w.dir)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("and could not remove it: %w", rerr))
		}
		return fmt.Errorf("journal %s: %w", Path(w.dir), err)
	}
	return nil
}

// appendLine writes line at the end of the journal with one write(2).
// It holds the directory's shared flock throughout, which [Compact] needs
// exclusively to replace the journal, so the file it opens stays the one
// at the path; it also takes the file's shared flock and checks that the
// file is still at the path, which is what a compactor of an older twasm
// (which locked the file only) needs, and writes again to the new file
// when one replaced it.
func appendLine(dir, line string) error {
	unlock, err := lockDir(dir, syscall.LOCK_SH)
	if err != nil {
		return err
	}
	defer unlock()
	for range 64 {
		f, err := openJournal(Path(dir), os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		if err != nil {
			return err
		}
		fd := int(f.Fd())
		if err := syscall.Flock(fd, syscall.LOCK_SH); err != nil {
			f.Close()
			return err
		}
		same, err := samePath(f, Path(dir))
		if err != nil || !same {
			f.Close()
			if err != nil {
				return err
			}
			continue
		}
		_, err = f.Write([]byte(line))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return errors.New("replaced again and again while appending")
}

// lockDir takes the flock how (LOCK_SH, LOCK_EX, with LOCK_NB or not) on
// the directory dir and returns its release. A lock that LOCK_NB could
// not take is errBusy.
func lockDir(dir string, how int) (unlock func(), err error) {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), how); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errBusy
		}
		return nil, err
	}
	return func() { d.Close() }, nil
}

var errBusy = errors.New("journal busy")

// openJournal opens the journal without following a link or blocking on
// a FIFO, and refuses anything but a regular file.
func openJournal(path string, flag int) (*os.File, error) {
	return regfile.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}

// samePath reports whether f is the file at path.
func samePath(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// Pos is where a reader stopped: the offset after the last complete line
// it read, and that line (without its newline), which the journal must
// still hold there for a read to continue from it.
type Pos struct {
	Off  int64
	Tail string
}

// maxEntry bounds a line: longer ones do not parse.
const maxEntry = 256

// Read returns the entries after pos and the new position. cont is false
// when the journal does not continue pos: it is missing (created empty
// here, so that writers and readers meet in one file), shorter, holds
// other bytes before pos, or a line that does not parse; the entries are
// then those of the whole journal that parse, for the caller who checks
// every file anyway to learn which runs are still being written. A
// partial last line (being written) is left for the next read.
func Read(dir string, pos Pos) (entries []Entry, end Pos, cont bool, err error) {
	end, cont, err = Each(dir, pos, func(e Entry) { entries = append(entries, e) })
	if err != nil {
		return nil, end, cont, err
	}
	return entries, end, cont, nil
}

// Each is Read calling f with each entry, in order, instead of
// returning them: a reader that keeps what it needs of each holds none
// of the journal (after a first sync of 20,000 sessions, 40,000 entries
// in 5 MiB). The journal is read twice, a buffer at a time: to find
// where it ends and whether it continues pos, then to give the entries
// up to that end. On an error f may have been called with some.
func Each(dir string, pos Pos, f func(Entry)) (end Pos, cont bool, err error) {
	file, err := openJournal(Path(dir), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		if file, err := openJournal(Path(dir), os.O_WRONLY|os.O_CREATE); err == nil {
			file.Close()
		}
		return Pos{}, false, nil
	}
	if err != nil {
		return Pos{}, false, fmt.Errorf("journal: %w", err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return Pos{}, false, fmt.Errorf("journal: %w", err)
	}
	from := int64(0)
	cont = true
	if pos.Off > 0 {
		// The line that ended at pos, after a newline or at the start.
		want := "\n" + pos.Tail + "\n"
		start := pos.Off - int64(len(want))
		if start == -1 {
			want, start = want[1:], 0
		}
		b := make([]byte, len(want))
		if start < 0 || st.Size() < pos.Off {
			cont = false
		} else if _, err := file.ReadAt(b, start); err != nil {
			return Pos{}, false, fmt.Errorf("journal: %w", err)
		}
		if cont = cont && string(b) == want; cont {
			from = pos.Off
		}
	}
	end = pos
	if !cont {
		end = Pos{}
	}
	// lines calls line with each complete line from off up to size
	// (the journal's size as first read), and its end.
	lines := func(off, size int64, line func(s string, end int64)) error {
		br := bufio.NewReaderSize(io.NewSectionReader(file, off, size-off), 64<<10)
		for {
			b, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				// Longer than any entry: not one (it does not parse).
				long := append([]byte(nil), b...)
				for errors.Is(err, bufio.ErrBufferFull) {
					b, err = br.ReadSlice('\n')
					long = append(long, b...)
				}
				b = long
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil // a partial last line: being written, next time
				}
				return err
			}
			off += int64(len(b))
			line(string(b[:len(b)-1]), off)
		}
	}
	bad := false
	if err := lines(from, st.Size(), func(s string, off int64) {
		end.Off, end.Tail = off, s
		if _, ok := parse(s); !ok {
			bad = true
		}
	}); err != nil {
		return Pos{}, false, fmt.Errorf("journal: %w", err)
	}
	if bad && from > 0 {
		// Not continued after all (a bad line after pos): the whole file.
		end, _, err := Each(dir, Pos{}, f)
		return end, false, err
	}
	cont = cont && !bad
	if err := lines(from, end.Off, func(s string, _ int64) {
		if e, ok := parse(s); ok {
			f(e)
		}
	}); err != nil {
		return Pos{}, false, fmt.Errorf("journal: %w", err)
	}
	return end, cont, nil
}

func parse(line string) (Entry, bool) {
	if len(line) > maxEntry || len(line) < 3 || line[1] != ' ' || line[0] != Open && line[0] != Close {
		return Entry{}, false
	}
	id, nonce, ok := strings.Cut(line[2:], " ")
	if !ok || runid.Valid(id) != nil || nonce == "" || strings.ContainsAny(nonce, " \x00") {
		return Entry{}, false
	}
	return Entry{Kind: line[0], RunID: id, Nonce: nonce}, true
}

// Compact replaces the journal with an empty one when nothing was
// appended after end (its size is end.Off), calling commit first, under
// the exclusive flock: commit records position zero where the reader
// keeps it. A commit that lands without the replacement (a crash between
// them) reads the old journal again from its start: the same entries,
// applied again. It reports whether it replaced the journal; an empty
// journal, a busy lock (a writer appending) or a journal that grew is no
// error, only no compaction.
func Compact(dir string, end Pos, commit func() error) (bool, error) {
	if end.Off == 0 {
		return false, nil // empty: nothing to compact
	}
	unlock, err := lockDir(dir, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, errBusy) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	defer unlock()
	f, err := openJournal(Path(dir), os.O_RDONLY)
	if err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil
	}
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	if same, err := samePath(f, Path(dir)); err != nil || !same || st.Size() != end.Off {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, Name+".*")
	if err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	tmp.Close()
	if err := commit(); err != nil {
		os.Remove(tmp.Name())
		return false, err
	}
	if err := os.Rename(tmp.Name(), Path(dir)); err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("journal: %w", err)
	}
	return true, nil
}
