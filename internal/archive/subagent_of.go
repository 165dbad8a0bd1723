package archive

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// A file store may say how a session file names the session file of the
// same store it is a sub-agent of (abi.Store.SubAgentOf): Codex CLI
// keeps a spawned thread's conversation as a rollout of its own, whose
// first line (session_meta) names its parent thread, the rollout of
// which ends its name with that thread id, in whichever day's directory
// the parent was started. Such a file is read as a sub-agent's file is
// (Session.Parent: subAgentLink, withSubAgents, SubAgentFile), its
// session the file of the key it names; the call that started it is
// the one whose result's output, a JSON object, names it
// (abi.SubAgentOf.Result: readSession's members).

// checkSubAgentOf checks a parent glob (abi.SubAgentOf.File): it must
// parse with any plain key in it.
func checkSubAgentOf(glob string) error {
	_, err := globRegexp(strings.ReplaceAll(glob, keyMark, "k"))
	return err
}

// parentMatcher matches the paths, relative to the store's directory,
// of the session file of key the parent glob names (abi.SubAgentOf.File,
// "{key}" replaced by key, a plain key: no glob character in it); nil
// when the glob does not parse.
func parentMatcher(p *abi.SubAgentOf, key string) func(string) bool {
	g := strings.ReplaceAll(p.File, keyMark, key)
	re, err := globRegexp(g)
	if err != nil {
		return nil
	}
	return globMatcher(g, re)
}

// parentIn is the first of paths (absolute, in store loc, self left
// out) that is the session file of key: "" when none is.
func parentIn(loc *Location, key, self string, paths func(yield func(string) bool)) string {
	match := parentMatcher(loc.SubAgentOf, key)
	if match == nil {
		return ""
	}
	for p := range paths {
		if p == self {
			continue
		}
		if rel, err := filepath.Rel(loc.Dir, p); err == nil && match(filepath.ToSlash(rel)) {
			return p
		}
	}
	return ""
}

// pointerString is the string a JSON Pointer names in doc, one whole
// JSON value ("" when it names none: pointerAt).
func pointerString(doc []byte, ptr string) string {
	var s string
	if json.Unmarshal(pointerAt(doc, ptr), &s) != nil {
		return ""
	}
	return s
}

// firstValue is the first JSON value of a file, within its first limit
// bytes (a JSON document, or the first line of a JSON Lines file), as
// written: nil when the file is missing or holds no whole JSON value
// there.
func firstValue(name string, limit int64) []byte {
	f, err := regfile.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var v json.RawMessage
	if json.NewDecoder(io.LimitReader(f, limit)).Decode(&v) != nil {
		return nil
	}
	return v
}

// namedParentKey is the key of the session the file at path names as
// the session it is a sub-agent of (abi.SubAgentOf.Member, in its first
// JSON value): "" when it names none, or a key that is no plain name.
func namedParentKey(p *abi.SubAgentOf, path string) string {
	return firstString(path, p.Member)
}

// missingParent is the path named as the session of a sub-agent's file
// whose session file is not found: the parent glob with the key, which
// names no file (subAgentLink then says it is gone, and the run, one of
// its own, is named as that session's sub-agent).
func missingParent(loc *Location, key string) string {
	return filepath.Join(loc.Dir, filepath.FromSlash(strings.ReplaceAll(loc.SubAgentOf.File, keyMark, key)))
}

// namedSubAgents names the session (Session.Parent) of each session a
// sync found in a store whose files name the session they are a
// sub-agent of (Location.SubAgentOf), among those it will read: a file
// the ledger saw last at the same size and mtime is unchanged whatever
// its session, and its first line is not read again (a sync with
// nothing new costs a stat of each file). The session's file is looked
// for among the sessions found, then in the whole store (a sync --since
// lists only the files changed since).
func (a *Archiver) namedSubAgents(sessions []Session) {
	nameSubAgents(sessions, func(s *Session) bool {
		e, ok := a.ledger.seenAt(s.Path)
		return ok && e.size == s.Size && e.mtime == s.ModTime.UnixNano()
	}, true)
}

// NameSubAgents (doctor) names the session (Session.Parent) of every
// session found in a store whose files name the session they are a
// sub-agent of (Location.SubAgentOf), reading each one's first line
// whether archived or not, and counts in its store's report those whose
// session file is in the store as sub-agent files (SubAgents), not as
// sessions: a sync archives them as child runs of their session's. A
// file whose session file is not found stays a session, its Parent ""
// (a sync archives it as a run of its own).
func NameSubAgents(stores []StoreReport, sessions []Session) {
	nameSubAgents(sessions, nil, false)
	idx := make(map[string]int, len(stores))
	for i := range stores {
		idx[stores[i].Key()] = i
	}
	for _, s := range sessions {
		if s.Loc == nil || s.Loc.SubAgentOf == nil || s.Parent == "" {
			continue
		}
		if i, ok := idx[s.Loc.Key()]; ok {
			stores[i].Sessions--
			stores[i].SubAgents++
		}
	}
}

// nameSubAgents names the session of each of sessions in a store whose
// files name it (namedSubAgents), but those skip says not to read
// (nil: none); one whose session file is not found is named as
// missingParent's when orMissing is set, else left "".
func nameSubAgents(sessions []Session, skip func(*Session) bool, orMissing bool) {
	var walked map[string][]Session
	for i := range sessions {
		s := &sessions[i]
		if s.Loc == nil || s.Loc.SubAgentOf == nil || s.Parent != "" {
			continue
		}
		if skip != nil && skip(s) {
			continue
		}
		key := namedParentKey(s.Loc.SubAgentOf, s.Path)
		if key == "" {
			continue
		}
		lk := s.Loc.Key()
		s.Parent = parentIn(s.Loc, key, s.Path, func(yield func(string) bool) {
			for _, o := range sessions {
				if o.Loc != nil && o.Loc.Key() == lk && !yield(o.Path) {
					return
				}
			}
		})
		if s.Parent == "" {
			// Not among the sessions found (a sync --since lists the
			// files changed since): the whole store, walked once.
			all, ok := walked[lk]
			if !ok {
				all, _, _ = Walk(s.Loc)
				if walked == nil {
					walked = map[string][]Session{}
				}
				walked[lk] = all
			}
			s.Parent = parentIn(s.Loc, key, s.Path, func(yield func(string) bool) {
				for _, o := range all {
					if !yield(o.Path) {
						return
					}
				}
			})
		}
		if s.Parent == "" && orMissing {
			s.Parent = missingParent(s.Loc, key)
		}
	}
}

// maxParentClimb is how many directories above a sub-agent's file given
// by itself (import) its session's file is looked for (Codex: the day's,
// the month's, the year's and the sessions' directory).
const maxParentClimb = 3

// subAgentOfFile is the session a file given by itself (import) is read
// as when it is a session file of store d that names the session it is
// a sub-agent of (abi.Store.SubAgentOf): the file of that key the
// parent glob finds below its directory or one of the maxParentClimb
// above it, walked in turn (the first that holds it is taken as the
// store's directory); when none does, the store's directory is taken
// as the highest of them and the session as missing there
// (missingParent).
func subAgentOfFile(d Declared, path string) (Session, bool) {
	c := compileStore(d)
	if c.err != nil {
		return Session{}, false
	}
	key := namedParentKey(d.SubAgentOf, path)
	if key == "" {
		return Session{}, false
	}
	dir := filepath.Dir(path)
	var loc Location
	for up := 0; ; up++ {
		loc = declaredLocation(d, c, dir, "import")
		loc.Dir = dir
		if loc.Unusable != "" {
			return Session{}, false
		}
		if p := findParentFile(&loc, key, path); p != "" {
			return Session{Loc: &loc, Path: path, Parent: p}, true
		}
		if up == maxParentClimb || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	return Session{Loc: &loc, Path: path, Parent: missingParent(&loc, key)}, true
}

// findParentFile walks loc's directory (at most maxSubAgentFiles
// entries, links not followed) for the session file of key, other than
// self (parentIn): "" when none.
func findParentFile(loc *Location, key, self string) string {
	return parentIn(loc, key, self, func(yield func(string) bool) {
		looked := 0
		_ = filepath.WalkDir(loc.Dir, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if looked++; looked > maxSubAgentFiles {
				return filepath.SkipAll
			}
			if de.Type().IsRegular() && !yield(p) {
				return filepath.SkipAll
			}
			return nil
		})
	})
}

// subAgentOfChildren lists the files of store d beside the session file
// at abs that name it as the session they are a sub-agent of (the key
// they name makes the parent glob match its name, as subAgentOfFile
// would find it first, in its own directory), leaving out those seen
// (filesNaming). A sub-agent started in another directory (Codex: after
// midnight, in the next day's) is not looked for: a sync links it, or
// an import given it. keys, when not nil, remembers each file's key
// for the next session looked at.
func subAgentOfChildren(d Declared, abs string, seen map[string]bool, keys *NamedKeys) []Session {
	c := compileStore(d)
	if c.err != nil {
		return nil
	}
	dir := filepath.Dir(abs)
	ents, err := keys.entries(dir)
	if err != nil {
		return nil
	}
	return filesNaming(abs, ents, seen, func(p string) (Session, bool) {
		key := keys.of(d.SubAgentOf, p)
		if key == "" {
			return Session{}, false
		}
		// The parent glob holds the key in its last element: a name
		// without it is not matched (and no glob compiled for it).
		if !strings.Contains(filepath.Base(abs), key) {
			return Session{}, false
		}
		if match := parentMatcher(d.SubAgentOf, key); match == nil || !match(filepath.Base(abs)) {
			return Session{}, false
		}
		loc := declaredLocation(d, c, dir, "import")
		loc.Dir = dir
		return Session{Loc: &loc, Path: p, Parent: abs}, loc.Unusable == ""
	})
}

// subAgentOfID is a declaration as comparable (its Result left out):
// two stores declaring the same one (Codex's sessions and archived
// sessions) find the same files, looked at once.
func subAgentOfID(p *abi.SubAgentOf) [2]string { return [2]string{p.Member, p.File} }

// NamedKeys remembers, for one import, the key each file names of the
// session it is a sub-agent of (abi.Store.SubAgentOf, namedParentKey),
// and the directories listed: an import of many session files of one
// directory (Codex's archived_sessions) looks at every file beside each
// for its sub-agents, and reads each, and lists the directory, once (an
// import of 400 rollouts of one directory cost 86 s of CPU without,
// 3.3 s with). A nil NamedKeys remembers nothing.
type NamedKeys struct {
	keys map[[2]string]string // by member and path
	dirs map[string][]os.DirEntry
}

// NewNamedKeys returns an empty NamedKeys.
func NewNamedKeys() *NamedKeys {
	return &NamedKeys{keys: map[[2]string]string{}, dirs: map[string][]os.DirEntry{}}
}

// entries is os.ReadDir of dir, remembered.
func (k *NamedKeys) entries(dir string) ([]os.DirEntry, error) {
	if k == nil {
		return os.ReadDir(dir)
	}
	if ents, ok := k.dirs[dir]; ok {
		return ents, nil
	}
	ents, err := os.ReadDir(dir)
	if err == nil {
		k.dirs[dir] = ents
	}
	return ents, err
}

// of is namedParentKey, remembered.
func (k *NamedKeys) of(p *abi.SubAgentOf, path string) string {
	if k == nil {
		return namedParentKey(p, path)
	}
	id := [2]string{p.Member, path}
	key, ok := k.keys[id]
	if !ok {
		key = namedParentKey(p, path)
		k.keys[id] = key
	}
	return key
}

// resultCall is the number of the call of the session's run
// (sessionLinks.list) whose result's output, a JSON object, names the
// sub-agent's file at path as the store declares (abi.SubAgentOf.Result:
// a member equal to a string of the file's first JSON value); ok false
// when none does.
func resultCall(p *abi.SubAgentOf, path string, in sessionLinks) (call int, ok bool) {
	if p == nil || len(p.Result) == 0 {
		return -1, false
	}
	doc := firstValue(path, maxParentFile)
	names := make([]string, 0, len(p.Result))
	for n := range p.Result {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if v := pointerString(doc, p.Result[n]); v != "" {
			if call, ok := in.members[memberKey(n, v)]; ok {
				return call, true
			}
		}
	}
	return -1, false
}

// memberKey is how sessionLinks.members keys a string member of a
// result's output.
func memberKey(name, value string) string { return name + "\x00" + value }

// maxMemberOutput bounds the result outputs read as JSON objects for
// sessionLinks.members.
const maxMemberOutput = 4 << 10

// addMembers indexes the string members of a result's output that is a
// small JSON object (sessionLinks.members), each with the number of the
// call it answers, the first call of each kept.
func (in *sessionLinks) addMembers(output string, call int) {
	s := strings.TrimSpace(output)
	if len(s) > maxMemberOutput || !strings.HasPrefix(s, "{") {
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil {
		return
	}
	for n, raw := range obj {
		var v string
		if json.Unmarshal(raw, &v) != nil || v == "" {
			continue
		}
		if _, dup := in.members[memberKey(n, v)]; !dup {
			in.members[memberKey(n, v)] = call
		}
	}
}
