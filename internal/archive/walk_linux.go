package archive

import (
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lstatAt is the size and mtime of the file name in the directory open
// at dirFd (whose path is dir), its link not followed.
func lstatAt(dirFd int, dir, name string) (int64, time.Time, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirFd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, time.Time{}, &fs.PathError{Op: "lstat", Path: filepath.Join(dir, name), Err: err}
		}
		return st.Size, time.Unix(st.Mtim.Unix()), nil
	}
}
