package archive

import (
	"cmp"
	"path/filepath"
	"strings"
)

// StoreFile is the session a file given by itself (twasm import) is read
// as when it sits in one of provider's file stores whose plugin asks for
// the facts of its source (abi.SourceFacts: Kimi's session id is a
// directory of the file's path in the store, Cursor's conversation id
// its name): the store's location, resolved at the directory above the
// file named as the store declares it (abi.Store.Dir, "sessions" for
// Kimi Code's), from which the store's pattern matches the file. So
// SyncSession feeds the facts line sync feeds, and the run says what
// sync's says. ok is false for any other file, and for a store that
// declares no directory name (any directory would do: nothing tells the
// store's); the file is then read as it is, without facts. Path is
// absolute. A sub-agent's file is SubAgentFile's.
func StoreFile(declared []Declared, provider, path string) (s Session, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Session{}, false
	}
	for _, d := range declared {
		if d.Provider != provider || !d.SourceFacts || d.Dir == "" || cmp.Or(d.Kind, KindFile) != KindFile {
			continue
		}
		c := compileStore(d)
		if c.err != nil {
			continue
		}
		name := string(filepath.Separator) + filepath.FromSlash(d.Dir)
		for dir := filepath.Dir(abs); filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
			if !strings.HasSuffix(dir, name) {
				continue
			}
			root := strings.TrimSuffix(dir, name)
			if root == "" {
				root = string(filepath.Separator)
			}
			loc := declaredLocation(d, c, root, "import")
			rel, err := filepath.Rel(loc.Dir, abs)
			if err != nil || loc.Unusable != "" || loc.Match == nil || !loc.Match(filepath.ToSlash(rel)) {
				continue
			}
			return Session{Loc: &loc, Path: abs}, true
		}
	}
	return Session{}, false
}

// TreeFile is the session a file given by itself (twasm import) is read
// as when it is the first file of a session of one of provider's tree
// stores (Factory Droid's <id>.jsonl, whose <id>.settings.json beside it
// holds the session's usage): the store's location, at the directory
// the store's first files glob is relative to (the file's ancestor as
// many levels up as the glob has elements: "*/{key}.jsonl", its
// grandparent; with the store's Dir below it), from which the store's
// pattern matches the file. SyncSession then reads the session's files
// as sync reads them, and the run holds what sync's holds. ok is false
// for any other file, for a store whose first glob has "**" (how far up
// is not known), for a session that names its parent (a sub-session:
// SubAgentFile's), and for a file with no other file of its session
// beside it (a session copied alone: imported as record --input reads
// it). Path is absolute.
func TreeFile(declared []Declared, provider, path string) (s Session, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Session{}, false
	}
	key, ok := treeKey(abs)
	if !ok {
		return Session{}, false
	}
	for _, d := range declared {
		if d.Provider != provider || cmp.Or(d.Kind, KindFile) != KindTree || len(d.Files) == 0 || strings.Contains(d.Files[0], "**") {
			continue
		}
		if _, named := namedParent(d, abs); named && namesParent(d) {
			continue
		}
		if s, ok := treeSessionAt(d, abs, key); ok {
			return s, true
		}
	}
	return Session{}, false
}

// treeSessionAt is the session of tree store d (its first files glob
// without "**") whose first file is abs, of key, as TreeFile reads it:
// the store's location at the directory the glob is relative to (with
// the store's Dir below it). ok is false when the glob does not match
// the file there, and when no other file of the session is beside it
// (read as record --input reads it: nothing more to take, and the file
// lines a tree session's capture holds would only number its lines
// apart from record's).
func treeSessionAt(d Declared, abs, key string) (Session, bool) {
	first := strings.ReplaceAll(d.Files[0], keyMark, key)
	re, err := globRegexp(first)
	if err != nil {
		return Session{}, false
	}
	dir := filepath.Dir(abs)
	for range strings.Count(first, "/") {
		dir = filepath.Dir(dir)
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || !re.MatchString(filepath.ToSlash(rel)) {
		return Session{}, false
	}
	root := dir
	if d.Dir != "" {
		var cut bool
		if root, cut = strings.CutSuffix(dir, string(filepath.Separator)+filepath.FromSlash(d.Dir)); !cut || root == "" {
			return Session{}, false
		}
	}
	c := compileStore(d)
	loc := declaredLocation(d, c, root, "import")
	if loc.Unusable != "" || loc.Match == nil || !loc.Match(filepath.ToSlash(rel)) {
		return Session{}, false
	}
	files, err := treeFiles(loc.Dir, key, loc.Files)
	if err != nil || len(files) < 2 {
		return Session{}, false
	}
	return filesSession(&loc, abs, files), true
}
