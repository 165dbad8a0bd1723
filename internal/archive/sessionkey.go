package archive

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// A file store may keep a session's sub-agents' files in a directory
// named by the id the session file states, not by the file's name
// (abi.Store.SubAgentsKey): Gemini CLI 0.37 and later writes a
// sub-agent's chat to chats/<the session's full id>/<its own id>.jsonl
// and the session's to chats/session-<time>-<the id's first 8
// characters>.jsonl, whose first record states the id (sessionId). The
// sub-agent glob's "{stem}" then captures the id, and the session is the
// file beside that directory the store's pattern matches whose first
// JSON value states it (the files whose name holds the id's first
// Prefix characters only are read; of several, the one modified last:
// sessionDirs.keyedSession). The session's own records may name the call that
// started each sub-agent (abi.Store.SubAgentCalls: a gemini message's
// toolCalls, the sub-agent's call stating its agentId, the sub-agent
// file's stem): recordCall reads it, and subAgentLink links the run
// there.

// sessionDirs remembers, for one scan of a store, the files of each
// directory looked at (filesBelow) and the id each session file states
// (abi.SessionKey), so that a directory of many sub-agents' files is
// listed, and its sessions' first lines read, once.
type sessionDirs struct {
	names map[string][]string
	keys  map[string]string
	// sessions are keyedSession's answers, by store directory,
	// directory and id: the sub-agents of one session share them.
	sessions map[[3]string]string
}

func newSessionDirs() *sessionDirs {
	return &sessionDirs{names: map[string][]string{}, keys: map[string]string{}, sessions: map[[3]string]string{}}
}

// keyedSession is the session file of store loc in directory d (or as
// far below it as the sub-agent glob climbs) that states id
// (abi.Store.SubAgentsKey), self (the sub-agent's file) left out: of
// several, the one modified last; "" when none does. A file's name is
// looked at before its path is matched or its first line read: a
// directory of many sessions, each with sub-agents, costs one pass over
// its names per session, not per sub-agent file.
func (s *sessionDirs) keyedSession(loc *Location, d, id, self string) string {
	ck := [3]string{loc.Dir, d, id}
	if p, ok := s.sessions[ck]; ok {
		return p
	}
	k := loc.SubAgentsKey
	var found []string
	for _, n := range s.below(d, loc.subAgentsUp) {
		if k.Prefix > 0 && (len(id) < k.Prefix || !strings.Contains(filepath.Base(n), id[:k.Prefix])) {
			continue
		}
		p := filepath.Join(d, n)
		if p == self {
			continue
		}
		r, err := filepath.Rel(loc.Dir, p)
		if err != nil || loc.Match == nil || !loc.Match(filepath.ToSlash(r)) || loc.subAgents.MatchString(filepath.ToSlash(n)) {
			continue
		}
		if s.key(p, k) == id {
			found = append(found, p)
		}
	}
	p := ""
	switch len(found) {
	case 0:
	case 1:
		p = found[0]
	default:
		p = latest(found) // one session in several files
	}
	s.sessions[ck] = p
	return p
}

// below is filesBelow(d, depth), remembered.
func (s *sessionDirs) below(d string, depth int) []string {
	names, ok := s.names[d]
	if !ok {
		names = filesBelow(d, depth)
		s.names[d] = names
	}
	return names
}

// key is the id the session file at path states (firstString of the
// key's member), remembered.
func (s *sessionDirs) key(path string, k *abi.SessionKey) string {
	v, ok := s.keys[path]
	if !ok {
		v = firstString(path, k.Member)
		s.keys[path] = v
	}
	return v
}

// latest is the one of paths modified last (the first of them when
// none can be looked at): of several session files that state one id,
// the one the agent writes (Gemini CLI copies a chat it resumes to a
// JSON Lines file of its own and goes on there).
func latest(paths []string) string {
	best, at := paths[0], int64(-1)
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.ModTime().UnixNano() > at {
			best, at = p, st.ModTime().UnixNano()
		}
	}
	return best
}

// firstString is the string a JSON Pointer names in the file's first
// JSON value (the first line of a JSON Lines file, read up to
// maxParentFile; a JSON document's members before the pointer's, or the
// document up to that many bytes): "" when it names none, or a string
// that is no plain name.
func firstString(path, ptr string) string {
	var key string
	if v, done := linePointer(path, maxParentFile, ptr); done {
		_ = json.Unmarshal(v, &key) // a string, else none
	} else {
		key = pointerString(firstValue(path, maxParentFile), ptr)
	}
	if !plainKey(key) {
		return ""
	}
	return key
}

// maxCallLine bounds a line recordCall reads of a session's file: a
// longer one is skipped (as capture leaves a line of more than 32 MiB
// unread).
const maxCallLine = 32 << 20

// recordCall is the id of the tool call that started the sub-agent
// whose file's stem is stem, as the session file's records name it
// (abi.RecordCalls): of the lines that hold the sub-agent's name (the
// stem, without rc.Prefix) as a JSON string, the last whose array of
// calls holds a call naming it, or, with rc.AgentIn, the last whose
// object there names it and whose array holds one call. "" when none
// does, the stem lacks the prefix, the file cannot be read, or rc is
// nil.
func recordCall(session, stem string, rc *abi.RecordCalls) string {
	if rc == nil || !strings.HasPrefix(stem, rc.Prefix) {
		return ""
	}
	name := stem[len(rc.Prefix):]
	if name == "" {
		return ""
	}
	f, err := regfile.Open(session)
	if err != nil {
		return ""
	}
	defer f.Close()
	quoted, _ := json.Marshal(name)
	r := bufio.NewReaderSize(f, 64<<10)
	var id string
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if len(long)+len(chunk) <= maxCallLine {
				long = append(long, chunk...)
			} else {
				long = long[:0:0] // too long: skipped to its end
				for err == bufio.ErrBufferFull {
					_, err = r.ReadSlice('\n')
				}
				if err != nil {
					return id
				}
			}
			continue
		case len(long) > 0:
			chunk = append(long, chunk...)
			long = nil
		}
		if bytes.Contains(chunk, quoted) {
			if c := callNaming(chunk, name, rc); c != "" {
				id = c
			}
		}
		if err != nil {
			return id
		}
	}
}

// callNaming is the id of the call of a record (one JSON line) that
// names the sub-agent name (abi.RecordCalls: a call object's Agent
// member; with AgentIn, the member of that object of the record, the
// call the record's one call holding an ID), "" when none does.
func callNaming(line []byte, name string, rc *abi.RecordCalls) string {
	var calls []map[string]json.RawMessage
	if json.Unmarshal(pointerAt(line, rc.Calls), &calls) != nil {
		return ""
	}
	if rc.AgentIn != "" {
		var in map[string]json.RawMessage
		var agent string
		if json.Unmarshal(pointerAt(line, rc.AgentIn), &in) != nil || json.Unmarshal(in[rc.Agent], &agent) != nil || agent != name {
			return ""
		}
		one := ""
		for _, c := range calls {
			var id string
			if json.Unmarshal(c[rc.ID], &id) == nil && id != "" {
				if one != "" {
					return "" // several calls: which one is not said
				}
				one = id
			}
		}
		return one
	}
	for _, c := range calls {
		var agent, id string
		if json.Unmarshal(c[rc.Agent], &agent) == nil && agent == name && json.Unmarshal(c[rc.ID], &id) == nil && id != "" {
			return id
		}
	}
	return ""
}

// globStem is what "{stem}" in a store's sub-agent glob stands for
// for the session file at abs: its name without extension, or the id it
// states when the store says so (abi.Store.SubAgentsKey; "" when it
// states none).
func globStem(abs string, k *abi.SessionKey) string {
	if k == nil {
		return stemOf(abs)
	}
	return firstString(abs, k.Member)
}
