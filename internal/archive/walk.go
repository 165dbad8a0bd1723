package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// walkFiles lists the files under a location's directory that its
// pattern matches, sorted by path, as filepath.WalkDir would find them:
// links are not followed (a store whose directory is a link lists
// nothing, as WalkDir's: Walk follows that one link first, walkLinked),
// a directory that cannot be read is a problem
// and the walk goes on, the store's own directory failing is the walk's
// error. Each directory is opened relative to its parent's descriptor
// and each file matched is stat'ed relative to its directory's (openat,
// fstatat): a path given whole is looked up from the root, component by
// component, by the kernel, which cost the walk about twice what find
// pays for the same listing.
func walkFiles(loc *Location) (sessions []Session, problems []string, err error) {
	st, err := os.Lstat(loc.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", loc.Dir, ErrStoreMissing)
		}
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, nil
	}
	fd, err := openDir(unix.AT_FDCWD, loc.Dir)
	if err != nil {
		err = &fs.PathError{Op: "open", Path: loc.Dir, Err: err}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", loc.Dir, ErrStoreMissing)
		}
		return nil, nil, err
	}
	w := fileWalk{loc: loc}
	if err := w.dir(fd, filepath.Clean(loc.Dir), "", 0); err != nil {
		return nil, w.problems, err
	}
	sort.Slice(w.sessions, func(i, j int) bool { return w.sessions[i].Path < w.sessions[j].Path })
	return w.sessions, w.problems, nil
}

// fileWalk is a walk of a file store (walkFiles).
type fileWalk struct {
	loc      *Location
	sessions []Session
	problems []string
	// buf is the buffer directories are read through (readDir), and
	// ents the entries of the one being read, both reused: a directory
	// is read whole before its subdirectories are.
	buf  []byte
	ents []dirEntry
}

// read lists the directory open at fd (path), without "." and "..":
// what it read before an error too (readDir).
func (w *fileWalk) read(fd int, path string) ([]dirEntry, error) {
	if w.buf == nil {
		w.buf = make([]byte, 8<<10)
	}
	var err error
	w.ents, err = readDir(fd, path, w.buf, w.ents[:0])
	return w.ents, err
}

// maxHeldDirs is how deep a walk holds its directories open (each
// subdirectory opened relative to its parent); below, a directory is
// closed before its subdirectories are opened by their whole path, so
// that a deep tree does not run out of descriptors.
const maxHeldDirs = 32

// dir lists the directory open at fd (path; rel its path relative to
// the store, slash-separated, "" for the store's own) and closes fd:
// its files first, then its subdirectories, each in name order. Only a
// failure to read the store's own directory is returned.
func (w *fileWalk) dir(fd int, path, rel string, depth int) error {
	ents, err := w.read(fd, path)
	if err != nil {
		if rel == "" {
			closeDir(fd)
			return err
		}
		w.problems = append(w.problems, err.Error()) // the entries read are walked still
	}
	slices.SortFunc(ents, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	var dirs []string
	for _, d := range ents {
		name := d.name
		switch {
		case d.typ == fs.ModeDir:
			dirs = append(dirs, name)
		case d.typ == 0: // a regular file
			if !w.loc.Match(join(rel, name)) {
				continue
			}
			size, mtime, err := lstatAt(fd, path, name)
			if err != nil {
				w.problems = append(w.problems, err.Error()) // vanished meanwhile
				continue
			}
			w.sessions = append(w.sessions, Session{Loc: w.loc, Path: under(path, name), Size: size, ModTime: mtime})
		}
	}
	held := depth < maxHeldDirs
	if !held {
		closeDir(fd)
	}
	for _, name := range dirs {
		p := under(path, name)
		var cfd int
		var err error
		if held {
			cfd, err = openDir(fd, name)
		} else {
			cfd, err = openDir(unix.AT_FDCWD, p)
		}
		if err != nil {
			w.problems = append(w.problems, (&fs.PathError{Op: "open", Path: p, Err: err}).Error())
			continue
		}
		_ = w.dir(cfd, p, join(rel, name), depth+1)
	}
	if held {
		closeDir(fd)
	}
	return nil
}

// dirEntry is an entry of a directory as a walk reads it: its name, and
// its type (fs.ModeDir, 0 for a regular file, any other type bits for
// the rest, a link included).
type dirEntry struct {
	name string
	typ  fs.FileMode
}

// under is filepath.Join(dir, name) for a clean directory and a name
// read from it (one element, neither "." nor ".."), without cleaning
// the path again.
func under(dir, name string) string {
	if dir == "." {
		return name
	}
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + name // the root directory
	}
	return dir + string(filepath.Separator) + name
}

// join is rel/name ("" is the store's directory).
func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// openDir opens the directory name (relative to the directory open at
// dirFd), not following a link.
func openDir(dirFd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirFd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
