//go:build !linux

package archive

import (
	"os"
	"path/filepath"
	"time"
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
