package regfile

import (
	"errors"
	"fmt"
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
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: NotRegular(fi.Mode())}
	}
	return f, nil
}

// NotRegular is the [ErrNotRegular] error for a file of mode m, naming
// what the file is.
func NotRegular(m fs.FileMode) error {
	kind := "a " + m.Type().String()
	switch {
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
	return fmt.Errorf("%w: it is %s", ErrNotRegular, kind)
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
