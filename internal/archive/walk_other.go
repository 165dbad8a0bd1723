//go:build !linux

package archive

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lstatAt is the size and mtime of the file name in the directory dir,
// its link not followed (by its whole path: the directory's descriptor,
// dirFd, is used on Linux only).
func lstatAt(_ int, dir, name string) (int64, time.Time, error) {
	st, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		return 0, time.Time{}, err
	}
	return st.Size(), st.ModTime(), nil
}

// readDir appends to ents the entries of the directory dirFd is open at,
// read by its path (os.ReadDir: "." and ".." left out), leaving the
// descriptor open; buf is used on Linux only.
func readDir(_ int, path string, _ []byte, ents []dirEntry) ([]dirEntry, error) {
	list, err := os.ReadDir(path)
	for _, d := range list {
		ents = append(ents, dirEntry{name: d.Name(), typ: d.Type()})
	}
	return ents, err
}

// closeDir closes a directory descriptor the walk opened.
func closeDir(fd int) { _ = unix.Close(fd) }
