package exportcmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/twasm/twasm/internal/regfile"
)

// writeWhole runs write into a temporary file and publishes the result
// only when write succeeds: renamed over output when output is a regular
// file or does not exist yet (a symbolic link is followed: the file it
// names is replaced, not the link), else streamed into it (a device such
// as /dev/null or /dev/full, a named pipe: renaming over one would
// replace the special file with a regular one), or copied to stdout when
// output is "". A directory is refused. A failed or refused export leaves
// nothing behind, the output never sits in memory, and a write error of
// the stream (no space left on /dev/full, a reader that went away) is
// returned.
func writeWhole(stdout io.Writer, output string, write func(io.Writer) error) error {
	dest, stream, err := outputTarget(output)
	if err != nil {
		return err
	}
	dir := os.TempDir()
	if !stream {
		dir = filepath.Dir(dest)
	}
	tmp, err := os.CreateTemp(dir, ".twasm-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := write(tmp); err != nil {
		return err
	}
	if !stream {
		if err := tmp.Close(); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), dest)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if output == "" {
		_, err = io.Copy(stdout, tmp)
		return err
	}
	// A special file is written as a shell redirection would: opened for
	// writing (a named pipe waits for its reader), never created,
	// truncated or replaced.
	f, err := os.OpenFile(dest, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		// Replaced by a regular file or a directory since it was looked at.
		f.Close()
		return fmt.Errorf("-o %s: changed while it was written; nothing written", output)
	}
	_, err = io.Copy(f, tmp)
	return errors.Join(err, f.Close())
}

// outputTarget says where -o output goes: dest is the file to replace
// (stream false) or to stream into (stream true; "" for stdout).
func outputTarget(output string) (dest string, stream bool, err error) {
	if output == "" {
		return "", true, nil
	}
	dest = output
	fi, err := os.Lstat(output)
	if errors.Is(err, fs.ErrNotExist) {
		return dest, false, nil
	}
	if err != nil {
		return "", false, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if dest, err = filepath.EvalSymlinks(output); err != nil {
			return "", false, fmt.Errorf("-o %s: %w", output, err)
		}
		if fi, err = os.Stat(dest); err != nil {
			return "", false, err
		}
	}
	switch {
	case fi.Mode().IsRegular():
		return dest, false, nil
	case fi.IsDir():
		return "", false, fmt.Errorf("-o %s: %w: name a file", output, regfile.NotRegular(fi.Mode()))
	}
	return dest, true, nil
}
