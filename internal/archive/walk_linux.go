package archive

import (
	"bytes"
	"encoding/binary"
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

// readDir appends to ents the entries of the directory open at dirFd
// (path, for errors), without "." and "..", read with getdents64
// through buf, and leaves the descriptor open: os.File.ReadDir cost a
// fcntl to wrap each directory, two allocations an entry and an lstat
// of none, for the names and types the dirents hold (a type the file
// system does not give is read with an lstat, as os does). On an error
// the entries read before it are returned with it.
func readDir(dirFd int, path string, buf []byte, ents []dirEntry) ([]dirEntry, error) {
	for {
		n, err := unix.Getdents(dirFd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ents, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			return ents, nil
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: d_ino u64, d_off s64, d_reclen
			// u16, d_type u8, d_name (NUL-terminated).
			if len(b) < 19 {
				return ents, &fs.PathError{Op: "readdirent", Path: path, Err: unix.EIO}
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return ents, &fs.PathError{Op: "readdirent", Path: path, Err: unix.EIO}
			}
			ino, typ, name := binary.NativeEndian.Uint64(b[0:8]), b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue // an entry removed, or the directory and its parent
			}
			e := dirEntry{name: string(name)}
			switch typ {
			case unix.DT_DIR:
				e.typ = fs.ModeDir
			case unix.DT_REG:
			case unix.DT_UNKNOWN:
				var st unix.Stat_t
				if err := unix.Fstatat(dirFd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					continue // vanished meanwhile, as os.ReadDir skips it
				}
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					e.typ = fs.ModeDir
				case unix.S_IFREG:
				default:
					e.typ = fs.ModeIrregular
				}
			default:
				e.typ = fs.ModeIrregular // a link, a pipe, a socket, a device
			}
			ents = append(ents, e)
		}
	}
}

// closeDir closes a directory descriptor the walk opened.
func closeDir(fd int) { _ = unix.Close(fd) }
