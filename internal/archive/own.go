package archive

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ownStorage says whether a path lies in twasm's own storage root: its
// transcripts, raw captures and ledger are never an agent's sessions,
// even when a configured store contains them (a home directory, a backup
// of one). Links are resolved on both sides, so a store that reaches the
// storage through a link is caught too. Each directory is resolved once
// (one lstat of each directory not seen before, its parent's resolution
// reused), so that a sync checking every session file pays for its
// directories, not for every component of every path; it is safe for
// concurrent use (a sync's workers share one).
type ownStorage struct {
	roots []string // the root as given and resolved, cleaned
	below []string // each root with a separator after it
	mu    sync.Mutex
	dirs  map[string]string // resolved directories, by directory
	// apart says, by a store's clean directory, whether no file its walk
	// finds can lie in the storage (apartFrom).
	apart map[string]bool
}

func newOwnStorage(root string) *ownStorage {
	o := &ownStorage{dirs: map[string]string{}, apart: map[string]bool{}}
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
	for _, r := range o.roots {
		o.below = append(o.below, r+string(filepath.Separator))
	}
	return o
}

func (o *ownStorage) under(p string) bool {
	for i, r := range o.roots {
		if p == r || strings.HasPrefix(p, o.below[i]) {
			return true
		}
	}
	return false
}

// underJoin is under(filepath.Join(dir, name)) for a clean absolute
// directory and a name of one element, without making the path: the
// path is under a root when dir is, or when it is the root itself.
func (o *ownStorage) underJoin(dir, name string) bool {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) || strings.HasSuffix(dir, string(filepath.Separator)) {
		return o.under(filepath.Join(dir, name))
	}
	if o.under(dir) {
		return true
	}
	for _, r := range o.roots {
		if len(r) == len(dir)+1+len(name) && strings.HasPrefix(r, dir) && r[len(dir)] == filepath.Separator && r[len(dir)+1:] == name {
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
	o.mu.Lock()
	r := o.resolve(filepath.Dir(path))
	o.mu.Unlock()
	return o.underJoin(r, filepath.Base(path))
}

// holds is contains(s.Path) for a session a store's walk found, asked
// once per store where it can be: a walk that follows no link below the
// store's directory (walksNoLinks) finds its files where that directory,
// resolved, puts them, so when neither the directory nor its resolution
// is in the storage or holds it, none of its files is in it, and no
// file's directory is resolved (an lstat of each directory of the store,
// a tenth of a re-sync with nothing new).
func (o *ownStorage) holds(s *Session) bool {
	if len(o.roots) == 0 {
		return false
	}
	if s.Loc == nil || !walksNoLinks(s.Loc) {
		return o.contains(s.Path)
	}
	dir := filepath.Clean(s.Loc.Dir)
	if !strings.HasPrefix(s.Path, dir) || len(s.Path) <= len(dir) ||
		(s.Path[len(dir)] != filepath.Separator && !strings.HasSuffix(dir, string(filepath.Separator))) {
		return o.contains(s.Path) // not below the directory as walked
	}
	o.mu.Lock()
	apart, ok := o.apart[dir]
	if !ok {
		apart = o.apartFrom(dir)
		o.apart[dir] = apart
	}
	o.mu.Unlock()
	return !apart && o.contains(s.Path)
}

// apartFrom reports whether no path below dir, its links resolved, can
// be in the storage, when no directory below dir is a link: neither dir
// nor its resolution is in the storage or above a root of it. o.mu is
// held.
func (o *ownStorage) apartFrom(dir string) bool {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, d := range []string{dir, o.resolve(dir)} {
		if o.under(d) {
			return false
		}
		above := d
		if !strings.HasSuffix(above, string(filepath.Separator)) {
			above += string(filepath.Separator)
		}
		for _, r := range o.roots {
			if strings.HasPrefix(r, above) {
				return false
			}
		}
	}
	return true
}

// resolve is an absolute, clean directory with its links resolved: its
// parent's resolution joined with its name, or, when that is a link,
// the link resolved whole; a directory that cannot be resolved (it does
// not exist) stays as its parent's resolution makes it. o.mu is held.
func (o *ownStorage) resolve(dir string) string {
	if r, ok := o.dirs[dir]; ok {
		return r
	}
	r := dir
	if parent := filepath.Dir(dir); parent != dir {
		r = filepath.Join(o.resolve(parent), filepath.Base(dir))
		if fi, err := os.Lstat(r); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if l, err := filepath.EvalSymlinks(r); err == nil {
				r = l
			}
		}
	}
	o.dirs[dir] = r
	return r
}

// WithoutStorage drops the session files found in twasm's own storage
// root (a store that contains it would archive twasm's transcripts as
// sessions, again at every sync) and says so in their store's report.
func WithoutStorage(root string, stores []StoreReport, sessions []Session) []Session {
	return newOwnStorage(root).without(root, stores, sessions)
}

func (own *ownStorage) without(root string, stores []StoreReport, sessions []Session) []Session {
	skipped := map[string]int{}
	kept := make([]Session, 0, len(sessions))
	for i := range sessions {
		s := &sessions[i]
		if own.holds(s) {
			skipped[s.Loc.Key()]++
			continue
		}
		kept = append(kept, *s)
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
