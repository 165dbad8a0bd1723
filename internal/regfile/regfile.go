package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is wrapped when a path is not a regular file (the
// recorder's ErrNotRegular is this error).
var ErrNotRegular = errors.New("not a regular file")

// Open opens a transcript for reading the way every reader of the storage
// should: without blocking on a FIFO planted at the path (O_NONBLOCK), and
// refusing anything but a regular file with an error wrapping
// [ErrNotRegular] that names what it is. Symbolic links are followed (a
// reader may be given a link by its user); the writer refuses them.
func Open(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// OpenInfo is Open that returns the file's FileInfo too, from the stat
// Open makes anyway (a reader that wants the size and mtime of the file
// it opened stats it once: the index's build opens every transcript).
func OpenInfo(path string) (*os.File, fs.FileInfo, error) {
	return openFile(path, os.O_RDONLY, 0)
}

// OpenFile is Open with other flags (O_NOFOLLOW to refuse a link, O_CREATE
// with perm, a write mode): O_NONBLOCK is added, anything but a regular
// file refused.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, _, err := openFile(path, flag, perm)
	return f, err
}

func openFile(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: NotRegular(fi.Mode())}
	}
	return f, fi, nil
}

// NotRegular is the [ErrNotRegular] error for a file of mode m, naming
// what the file is.
func NotRegular(m fs.FileMode) error {
	return fmt.Errorf("%w: it is %s", ErrNotRegular, Kind(m))
}

// Kind names what a file of mode m is, for messages: "a regular file",
// "a directory", "a named pipe (FIFO)", "a device", ...
func Kind(m fs.FileMode) string {
	kind := "a " + m.Type().String()
	switch {
	case m.IsRegular():
		kind = "a regular file"
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSymlink != 0:
		kind = "a symbolic link"
	}
	return kind
}

// FS is an fs.FS over a directory whose files are opened with [Open]: a
// FIFO or device among them is refused instead of blocking the reader
// (os.DirFS would block on a FIFO).
type FS string

// Open implements fs.FS.
func (d FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := Open(filepath.Join(string(d), filepath.FromSlash(name)))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = name
		}
		return nil, err
	}
	return f, nil
}

// ErrTooLarge is wrapped when a file given to [ReadFile] holds more than
// its limit.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads a small file named by the user or found in a directory
// (a config file, a plugin module, a cache record) the way [Open] opens
// one: a FIFO, a device (a link to /dev/zero) or a directory at the path
// is refused at once, naming what it is, instead of blocking or reading
// forever, and a regular file of more than limit bytes is refused with
// [ErrTooLarge] instead of being read into memory.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return b, nil
}

// MaxConfig is the limit on a config file or cache record read with
// [ReadFile] (config.json, sync.json, a manifest cache record): far more
// than any real one holds.
const MaxConfig = 1 << 20
