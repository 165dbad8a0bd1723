package exportcmd

import (
	"io"
	"os"
	"path/filepath"
)

// writeWhole runs write into a temporary file and publishes the result
// only when write succeeds: renamed to output, or copied to stdout when
// output is "". A failed or refused export leaves nothing behind, and the
// output never sits in memory.
func writeWhole(stdout io.Writer, output string, write func(io.Writer) error) error {
	dir := os.TempDir()
	if output != "" {
		dir = filepath.Dir(output)
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
	if output != "" {
		if err := tmp.Close(); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), output)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = io.Copy(stdout, tmp)
	return err
}
