package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Dirs is the set of directories holding entries that a writer's next
// promise relies on and that it has not made durable yet. A writer adds
// them ([Dirs.Add]) as it creates or finds the entries and calls
// [Dirs.Sync] before the promise: right after the fsync of the file
// itself, before returning to its caller or writing the line that names
// the file. The zero value never syncs and records nothing.
type Dirs struct {
	// Fsync makes one directory's entries durable: [SyncDir], or nil for
	// no fsync at all (the recorder's FsyncNever). Tests wrap it to watch.
	Fsync func(dir string) error
	dirs  []string
}

// Add records that dir holds a new entry. Without Fsync it does nothing.
func (d *Dirs) Add(dir string) {
	if d.Fsync == nil {
		return
	}
	dir = filepath.Clean(dir)
	if !slices.Contains(d.dirs, dir) {
		d.dirs = append(d.dirs, dir)
	}
}

// Drop forgets dir: its entries were made durable another way.
func (d *Dirs) Drop(dir string) {
	dir = filepath.Clean(dir)
	d.dirs = slices.DeleteFunc(d.dirs, func(p string) bool { return p == dir })
}

// Pending returns the directories not synced yet, in the order added.
func (d *Dirs) Pending() []string { return slices.Clone(d.dirs) }

// Sync fsyncs every pending directory, in the order added, and forgets
// each one synced; after a failure the rest stay pending, so the next
// Sync tries them again. On ext4 (and other journalling file systems)
// a directory whose change an earlier fsync already committed costs
// little, which is why callers sync the file first.
func (d *Dirs) Sync() error {
	for len(d.dirs) > 0 {
		if err := d.Fsync(d.dirs[0]); err != nil {
			return err
		}
		d.dirs = d.dirs[1:]
	}
	d.dirs = nil
	return nil
}

// MkdirAll creates dir and its missing parents with perm, like
// os.MkdirAll, and when sync is not nil calls it on the parent of every
// directory it created, outermost first, so each new entry is durable
// when MkdirAll returns. A directory that already existed costs nothing.
// A directory created concurrently by someone else is not synced here:
// its creator does it. It is for directories that many writers share
// (a storage's root, transcripts/, raw/), which none of them could tell
// is durable if its creator deferred the fsync; they are made once.
func MkdirAll(dir string, perm fs.FileMode, sync func(dir string) error) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errors.New("not a directory")}
		}
		return nil
	}
	// Find the missing components, innermost first.
	var missing []string
	for d := dir; ; {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		err := os.Mkdir(d, perm)
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := os.Stat(d); serr == nil && fi.IsDir() {
				continue // another writer made it, and syncs it
			}
		}
		if err != nil {
			return err
		}
		if sync != nil {
			if err := sync(filepath.Dir(d)); err != nil {
				return err
			}
		}
	}
	return nil
}

// SyncDir fsyncs directory dir, making the entries added to it durable.
// It opens, syncs and closes the directory with the bare system calls:
// through os.Open a directory is registered with the runtime's poller
// first (fcntl and epoll_ctl, five calls more than the three it needs).
func SyncDir(dir string) error {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, &fs.PathError{Op: "open", Path: dir, Err: err})
	}
	_, err = ignoringEINTR(func() (int, error) { return 0, syscall.Fsync(fd) })
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// ignoringEINTR retries fn while it is interrupted by a signal.
func ignoringEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// WriteFile replaces the file at path with data durably: it writes a
// temporary file beside it, syncs it, renames it over path and syncs the
// directory, so that a crash at any moment leaves the old content or the
// new one, never a part, and a reader never sees half a file. The
// directory must exist.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}
