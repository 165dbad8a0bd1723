package archive

import (
	"cmp"
	"encoding/json"
	"os"
	pathpkg "path"
	"path/filepath"
	"strings"
)

// A file given by itself (twasm import) of a tree store whose sessions
// name their parent in their first file (Factory Droid's session_start
// callingSessionId) is read as sync reads a sub-agent's file: its run a
// child run of the session it names, linked at the call its store says
// it names (abi.Store.SubAgentCall). The session's file is the one of
// that key beside it: Droid keeps a working directory's sessions in one
// directory. With its own other files beside it (Droid's
// <id>.settings.json, the sub-session's usage and model), it is read
// as sync reads it, a session of the tree store (treeSessionAt) with
// all its files; alone, as a file (namedLocation).

// namesParent reports whether d is a tree store whose sessions name
// their parent in their first file (abi.Store.Parent on Files[0]).
func namesParent(d Declared) bool {
	return cmp.Or(d.Kind, KindFile) == KindTree && d.Parent != nil && len(d.Files) > 0 && d.Parent.File == d.Files[0]
}

// namedParent is the session file the file at path (absolute) names as
// its parent when it is a session's first file of store d (namesParent:
// its name is the first files glob's last element, its key the name
// without extension): the file of the parent's key beside it, with the
// same extension. ok is false for any other file.
func namedParent(d Declared, path string) (parent string, ok bool) {
	k, ok := treeKey(path)
	if !ok {
		return "", false
	}
	if m, err := pathpkg.Match(strings.ReplaceAll(pathpkg.Base(d.Files[0]), keyMark, k), filepath.Base(path)); err != nil || !m {
		return "", false
	}
	var key string
	if json.Unmarshal(firstObject(path, maxParentFile)[d.Parent.Member], &key) != nil || !plainKey(key) || key == k {
		return "", false
	}
	return filepath.Join(filepath.Dir(path), key+filepath.Ext(path)), true
}

// namedLocation is where a file of store d given by itself is read from
// as a sub-agent's file: a file store in its directory, with the
// store's declaration of the call that started it.
func namedLocation(d Declared, path string) *Location {
	return &Location{Provider: d.Provider, Plugin: d.Plugin, Name: d.Name, Kind: KindFile, Dir: filepath.Dir(path),
		From: "import", SubAgentCall: d.SubAgentCall}
}

// namedSession is the sub-session whose first file is path (absolute)
// of store d, naming parent: the tree store's session with its other
// files when any is beside it (treeSessionAt: its settings, read for
// its usage as sync reads them), else the file alone (namedLocation).
func namedSession(d Declared, path, parent string) Session {
	if key, ok := treeKey(path); ok {
		if s, ok := treeSessionAt(d, path, key); ok {
			s.Parent = parent
			return s
		}
	}
	return Session{Loc: namedLocation(d, path), Path: path, Parent: parent}
}

// namedChildren lists the files beside the session file at abs that
// name it as their parent (namedParent), as SubAgentFile resolves them,
// leaving out those seen (filesNaming).
func namedChildren(d Declared, abs string, seen map[string]bool) []Session {
	ents, err := os.ReadDir(filepath.Dir(abs))
	if err != nil {
		return nil
	}
	return filesNaming(abs, ents, seen, func(p string) (Session, bool) {
		parent, ok := namedParent(d, p)
		if !ok {
			return Session{}, false
		}
		return namedSession(d, p, parent), true
	})
}

// filesNaming lists the regular files beside the session file at abs
// (ents, its directory's entries in name order), of its extension, that
// resolve makes sub-agents' files of it (a session whose Parent is
// abs), in name order, leaving out those seen and noting those it lists
// there; at most maxSubAgentFiles entries are looked at.
func filesNaming(abs string, ents []os.DirEntry, seen map[string]bool, resolve func(p string) (Session, bool)) []Session {
	var out []Session
	for i, e := range ents {
		if i >= maxSubAgentFiles {
			break
		}
		p := filepath.Join(filepath.Dir(abs), e.Name())
		if !e.Type().IsRegular() || p == abs || seen[p] || filepath.Ext(p) != filepath.Ext(abs) {
			continue
		}
		if s, ok := resolve(p); ok && s.Parent == abs {
			seen[p] = true
			out = append(out, s)
		}
	}
	return out
}
