package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirAll creates dir and its missing parents with perm, like
// os.MkdirAll, and when sync is not nil calls it on the parent of every
// directory it created, outermost first, so each new entry is durable
// when MkdirAll returns. A directory that already existed costs nothing.
// A directory created concurrently by someone else is not synced here:
// its creator does it.
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
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
