package prices

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/twasm/twasm/internal/regfile"
)

// FileName is the installed table's name in twasm's config directory.
const FileName = "prices.json"

// maxFile bounds a price file read.
const maxFile = 16 << 20

// Load returns the table in force: the file at path (installed by
// Install) when there is one dated on or after the bundled table, else
// the bundled table (a twasm newer than the installed file brings newer
// prices). note says why an installed file is not used, "" otherwise. A
// file that is there but does not parse is an error naming it: prices the
// user installed must not be ignored silently. A file written for a
// newer twasm (ErrNewerFormat: a later schema, a top-level field this
// twasm does not know) is not an error: the bundled table is used and
// note says so.
func Load(path string) (t *Table, note string, err error) {
	b := Bundled()
	if path == "" {
		return b, "", nil
	}
	data, err := regfile.ReadFile(path, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return b, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("price table %s: %w", path, err)
	}
	t, err = Parse(data)
	if errors.Is(err, ErrNewerFormat) {
		return b, fmt.Sprintf("%s: %v: the bundled table (%s) is used", path, err, b.Version()), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("price table %s: %w", path, err)
	}
	t.Origin = path
	if t.Date < b.Date {
		return b, fmt.Sprintf("%s (%s) is older than the bundled table (%s): the bundled table is used", path, t.Version(), b.Version()), nil
	}
	return t, "", nil
}

// Install checks data as a price file (Parse) and writes it to path,
// replacing what was there in one rename; the directory is made 0700 and
// the file is 0600.
func Install(path string, data []byte) (*Table, error) {
	t, err := Parse(data)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	f, err := os.CreateTemp(dir, ".prices-*.json")
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("prices: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("prices: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	t.Origin = path
	return t, nil
}
