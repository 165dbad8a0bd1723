package archive

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ownStorage says whether a path lies in twasm's own storage root: its
// transcripts, raw captures and ledger are never an agent's sessions,
// even when a configured store contains them (a home directory, a backup
// of one). Links are resolved on both sides, so a store that reaches the
// storage through a link is caught too.
type ownStorage struct {
	roots []string          // the root as given and resolved, cleaned
	dirs  map[string]string // resolved directories, by directory
}

func newOwnStorage(root string) *ownStorage {
	o := &ownStorage{dirs: map[string]string{}}
	if root == "" {
		return o
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	o.roots = append(o.roots, filepath.Clean(root))
	if r, err := filepath.EvalSymlinks(root); err == nil && r != o.roots[0] {
		o.roots = append(o.roots, r)
	}
	return o
}

func (o *ownStorage) under(p string) bool {
	for _, r := range o.roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// contains reports whether path is in the storage.
func (o *ownStorage) contains(path string) bool {
	if len(o.roots) == 0 {
		return false
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if o.under(path) {
		return true
	}
	dir := filepath.Dir(path)
	r, ok := o.dirs[dir]
	if !ok {
		var err error
		if r, err = filepath.EvalSymlinks(dir); err != nil {
			r = dir
		}
		o.dirs[dir] = r
	}
	return o.under(filepath.Join(r, filepath.Base(path)))
}

// WithoutStorage drops the session files found in twasm's own storage
// root (a store that contains it would archive twasm's transcripts as
// sessions, again at every sync) and says so in their store's report.
func WithoutStorage(root string, stores []StoreReport, sessions []Session) []Session {
	own := newOwnStorage(root)
	skipped := map[string]int{}
	kept := sessions[:0:0]
	for _, s := range sessions {
		if own.contains(s.Path) {
			skipped[s.Loc.Key()]++
			continue
		}
		kept = append(kept, s)
	}
	for i := range stores {
		if n := skipped[stores[i].Key()]; n > 0 {
			stores[i].Sessions -= n
			stores[i].Problems = append(stores[i].Problems, fmt.Sprintf(
				"the store contains twasm's own storage %s: its %d file(s) there are not sessions and are skipped", root, n))
		}
	}
	return kept
}
