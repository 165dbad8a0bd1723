package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/twasm/twasm/abi"
)

// KindTree is the kind of a store whose sessions are each spread over a
// tree of files linked by name (abi.StoreKindTree: OpenCode's older
// storage).
const KindTree = abi.StoreKindTree

// Placeholders of a tree store's files globs.
const (
	keyMark  = "{key}" // the session's key
	stemMark = "{*}"   // each file the glob before matched, by its stem
)

// manyFiles reports whether loc's sessions are each several files
// (a folder, or a tree): read by syncFolder.
func (l *Location) manyFiles() bool { return l.Kind == KindFolder || l.Kind == KindTree }

// checkTreeFiles checks a tree store's files globs: each a glob once its
// placeholders are named, "{*}" not in the first.
func checkTreeFiles(globs []string) error {
	if len(globs) == 0 {
		return errors.New("a tree store lists no files")
	}
	for i, g := range globs {
		if i == 0 && strings.Contains(g, stemMark) {
			return fmt.Errorf("files glob %q: {*} needs a glob before it", g)
		}
		if err := checkGlob(strings.NewReplacer(keyMark, "k", stemMark, "s").Replace(g)); err != nil {
			return err
		}
	}
	return nil
}

// stem is a file name without its extension.
func stem(name string) string {
	name = filepath.Base(name)
	return strings.TrimSuffix(name, filepath.Ext(name))
}

// plainKey reports whether a key (or stem) may stand in a glob as itself.
func plainKey(k string) bool {
	return k != "" && k != "." && k != ".." && !strings.ContainsAny(k, "*?[]{},/\\")
}

// treeKey is the key of a tree store's session whose first file is path.
func treeKey(path string) (string, bool) {
	k := stem(path)
	return k, plainKey(k)
}

// globFiles lists the regular files under root whose path relative to
// root matches glob, in name order. The glob is followed element by
// element: a plain name is looked up, a pattern matched against its
// directory's entries, so a session's files are found without walking
// the store (a tree store's sessions each name theirs). A glob with
// "**/" walks the directory its fixed leading elements name. A
// directory that does not exist holds none; symbolic links are not
// followed.
func globFiles(root, glob string) ([]folderFile, error) {
	if strings.Contains(glob, "**") {
		return walkGlob(root, glob)
	}
	els := strings.Split(glob, "/")
	res := make([]*regexp.Regexp, len(els))
	for i, el := range els {
		if strings.ContainsAny(el, "*?[{") {
			re, err := globRegexp(el)
			if err != nil {
				return nil, err
			}
			res[i] = re
		}
	}
	var out []folderFile
	var expand func(dir, rel string, i int) error
	expand = func(dir, rel string, i int) error {
		last := i == len(els)-1
		add := func(name string, fi fs.FileInfo) {
			if last && fi.Mode().IsRegular() {
				p := filepath.Join(dir, name)
				out = append(out, folderFile{rel: pathpkg.Join(rel, name), abs: p, size: fi.Size(), mtime: fi.ModTime(), doc: isDocument(p)})
			}
		}
		if res[i] == nil {
			fi, err := os.Lstat(filepath.Join(dir, els[i]))
			switch {
			case err != nil:
				return nil // absent (or vanished): none
			case last:
				add(els[i], fi)
				return nil
			case fi.IsDir():
				return expand(filepath.Join(dir, els[i]), pathpkg.Join(rel, els[i]), i+1)
			}
			return nil
		}
		es, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || i > 0 {
				return nil
			}
			return err
		}
		for _, e := range es {
			if !res[i].MatchString(e.Name()) {
				continue
			}
			if !last {
				if e.IsDir() {
					if err := expand(filepath.Join(dir, e.Name()), pathpkg.Join(rel, e.Name()), i+1); err != nil {
						return err
					}
				}
				continue
			}
			if fi, err := e.Info(); err == nil {
				add(e.Name(), fi)
			}
		}
		return nil
	}
	if err := expand(root, "", 0); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b folderFile) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// walkGlob is globFiles for a glob with "**/": only the directory the
// glob's fixed leading elements name is walked.
func walkGlob(root, glob string) ([]folderFile, error) {
	re, err := globRegexp(glob)
	if err != nil {
		return nil, err
	}
	els := strings.Split(glob, "/")
	fixed := 0
	for fixed < len(els)-1 && !strings.ContainsAny(els[fixed], "*?[{") {
		fixed++
	}
	base := filepath.Join(root, filepath.FromSlash(strings.Join(els[:fixed], "/")))
	var out []folderFile
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			if p == base {
				return err
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if !re.MatchString(rel) {
			return nil
		}
		info, ierr := d.Info()
		if ierr != nil {
			return nil // vanished meanwhile
		}
		out = append(out, folderFile{rel: rel, abs: p, size: info.Size(), mtime: info.ModTime(), doc: isDocument(p)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b folderFile) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// treeFiles lists the files of the session key of a tree store rooted at
// root, in the globs' order: "{key}" is the key; a glob with "{*}" is
// matched once per file the glob before it matched (that file's stem in
// its place), and its files come right after that file. Each file once.
func treeFiles(root, key string, globs []string) ([]folderFile, error) {
	var out []folderFile
	var prev []folderFile
	seen := map[string]bool{}
	keep := func(fs []folderFile) []folderFile {
		var kept []folderFile
		for _, f := range fs {
			if !seen[f.rel] {
				seen[f.rel] = true
				kept = append(kept, f)
			}
		}
		return kept
	}
	for _, g := range globs {
		g = strings.ReplaceAll(g, keyMark, key)
		if !strings.Contains(g, stemMark) {
			fs, err := globFiles(root, g)
			if err != nil {
				return nil, err
			}
			fs = keep(fs)
			out, prev = append(out, fs...), fs
			continue
		}
		children := map[string][]folderFile{}
		var cur []folderFile
		for _, p := range prev {
			s := stem(p.rel)
			if !plainKey(s) {
				continue
			}
			fs, err := globFiles(root, strings.ReplaceAll(g, stemMark, s))
			if err != nil {
				return nil, err
			}
			fs = keep(fs)
			children[p.rel] = fs
			cur = append(cur, fs...)
		}
		merged := make([]folderFile, 0, len(out)+len(cur))
		for _, f := range out {
			merged = append(merged, f)
			merged = append(merged, children[f.rel]...)
		}
		out, prev = merged, cur
	}
	return out, nil
}

// walkTree lists the sessions of a tree store (Walk, once the store is
// found to be a directory): the files Match accepts whose key is plain,
// sorted by path, each with the sum of its files' sizes and their latest
// mtime.
func walkTree(loc *Location) (sessions []Session, problems []string, err error) {
	heads, err := globFiles(loc.Dir, loc.Pattern)
	if err != nil {
		return nil, nil, err
	}
	for _, h := range heads {
		key, ok := treeKey(h.rel)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: its name is not a session key this twasm reads", h.abs))
			continue
		}
		s, ok, ferr := treeSession(loc, h.abs, key)
		if ferr != nil {
			problems = append(problems, ferr.Error())
			continue
		}
		if ok {
			sessions = append(sessions, s)
		}
	}
	return sessions, problems, nil
}

// treeSession is the session of key whose first file is path, in tree
// store loc, with the sum of its files' sizes and their latest mtime; ok
// is false when it has no file.
func treeSession(loc *Location, path, key string) (s Session, ok bool, err error) {
	files, err := treeFiles(loc.Dir, key, loc.Files)
	if err != nil || len(files) == 0 {
		return Session{}, false, err
	}
	return filesSession(loc, path, files), true, nil
}

// filesSession is the session at path whose files are files: their
// sizes summed, the newest of their times.
func filesSession(loc *Location, path string, files []folderFile) Session {
	s := Session{Loc: loc, Path: path}
	for _, f := range files {
		s.Size += f.size
		if f.mtime.After(s.ModTime) {
			s.ModTime = f.mtime
		}
	}
	return s
}

// sessionFiles lists the files of a session of a folder or tree store.
func sessionFiles(loc *Location, path string) ([]folderFile, error) {
	if loc.Kind != KindTree {
		return folderFiles(path, loc.Files)
	}
	key, ok := treeKey(path)
	if !ok {
		return nil, fmt.Errorf("%s: its name is not a session key this twasm reads", path)
	}
	return treeFiles(loc.Dir, key, loc.Files)
}

// sessionHead is the identity of a session of a folder or tree store
// (rel: its path relative to the store): a folder's path in its store, a
// tree session's provider and key, which a SQLite store's session of the
// same key shares.
func sessionHead(loc *Location, provider, rel string) string {
	if loc.Kind == KindTree {
		key, _ := treeKey(rel)
		return dbSessionHead(provider, key)
	}
	return folderHead(provider, rel)
}

// isTreeSession reports whether e archives a session of a tree store (its
// head is its provider's and its path's key's).
func isTreeSession(e *Entry) bool {
	key, ok := treeKey(e.Path)
	return ok && !strings.Contains(e.Path, "#") && e.Head == dbSessionHead(e.Provider, key)
}

// keyedElsewhere returns the entry of a session a tree store holds (head
// its identity) that is archived from a SQLite store: the agent keeps it
// in its database too, and it is archived from there.
func (a *Archiver) keyedElsewhere(head string) *Entry {
	for _, e := range a.ledger.ByHead(head) {
		if isDBSession(&e) {
			return &e
		}
	}
	return nil
}

// maxParentFile bounds the document a session's parent is read from.
const maxParentFile = 1 << 20

// parentKey reads the key of the session a session of a folder or tree
// store names as its parent (abi.Store.Parent): "" when the store
// declares none, the file is missing or names none.
func parentKey(loc *Location, path string) string {
	p := loc.Parent
	if p == nil {
		return ""
	}
	var name string
	if loc.Kind == KindTree {
		key, ok := treeKey(path)
		if !ok {
			return ""
		}
		fs, err := globFiles(loc.Dir, strings.ReplaceAll(p.File, keyMark, key))
		if err != nil || len(fs) == 0 {
			return ""
		}
		name = fs[0].abs
	} else {
		fs, err := folderFiles(path, []string{p.File})
		if err != nil || len(fs) == 0 {
			return ""
		}
		name = fs[0].abs
	}
	doc := firstObject(name, maxParentFile)
	var key string
	if json.Unmarshal(doc[p.Member], &key) != nil || !plainKey(key) || key == sessionKey(loc, path) {
		return ""
	}
	return key
}

// firstObject reads the first JSON value of a file, within its first
// limit bytes, as an object: a JSON document, or the first line of a
// JSON Lines file (Factory Droid's session_start, the header naming the
// session a sub-session was started from). nil when the file is
// missing or its first value is not an object that ends within limit.
func firstObject(name string, limit int64) map[string]json.RawMessage {
	var doc map[string]json.RawMessage
	if json.Unmarshal(firstValue(name, limit), &doc) != nil {
		return nil
	}
	return doc
}

// sessionKey is a session's key in its store: a tree session's key, a
// folder's name.
func sessionKey(loc *Location, path string) string {
	if loc.Kind == KindTree {
		k, _ := treeKey(path)
		return k
	}
	return filepath.Base(path)
}

// parentHead is the identity of the session key names as the parent of
// the session at path in loc.
func parentHead(loc *Location, provider, path, key string) string {
	if loc.Kind == KindTree {
		return dbSessionHead(provider, key)
	}
	rel, err := filepath.Rel(loc.Dir, filepath.Join(filepath.Dir(path), key))
	if err != nil {
		return ""
	}
	return folderHead(provider, filepath.ToSlash(rel))
}

// parentsFirst orders sessions so that a session of a store that
// declares parents comes after the session it names as its parent (when
// that one is among them), the order otherwise kept: a sub-agent's run
// can then be a child of its parent's, begun in the same sync.
func parentsFirst(sessions []Session) []Session {
	type node struct {
		s      Session
		parent int // index of the parent among sessions, -1 none
	}
	index := map[string]int{} // store key + session key -> index
	for i, s := range sessions {
		if s.Loc != nil && s.Loc.Parent != nil {
			index[s.Loc.Key()+"\x00"+sessionKey(s.Loc, s.Path)] = i
		}
	}
	if len(index) == 0 {
		return sessions
	}
	nodes := make([]node, len(sessions))
	for i, s := range sessions {
		nodes[i] = node{s: s, parent: -1}
		if s.Loc == nil || s.Loc.Parent == nil {
			continue
		}
		if pk := parentKey(s.Loc, s.Path); pk != "" {
			if j, ok := index[s.Loc.Key()+"\x00"+pk]; ok && j != i {
				nodes[i].parent = j
			}
		}
	}
	placed := make([]bool, len(nodes))
	out := make([]Session, 0, len(nodes))
	var place func(i, depth int)
	place = func(i, depth int) {
		if placed[i] {
			return
		}
		if p := nodes[i].parent; p >= 0 && depth < len(nodes) {
			place(p, depth+1) // a cycle ends at the bound: placed as found
		}
		if !placed[i] {
			placed[i] = true
			out = append(out, nodes[i].s)
		}
	}
	for i := range nodes {
		place(i, 0)
	}
	return out
}

// statDir reports whether path is a directory.
func statDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
