package archive

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runctl"
	"github.com/twasm/twasm/transcript"
)

// subAgentRegexp is the regular expression of a store's sub-agent glob
// (abi.Store.SubAgents), relative to a session file's directory: its
// "{stem}" (at most one) is captured as one path segment.
func subAgentRegexp(glob string) (*regexp.Regexp, error) {
	parts := strings.Split(glob, "{stem}")
	if len(parts) > 2 {
		return nil, fmt.Errorf("sub_agents %q: {stem} more than once", glob)
	}
	var b strings.Builder
	b.WriteString("^")
	for i, p := range parts {
		if i > 0 {
			b.WriteString("([^/]+)")
		}
		body, err := globBody(p)
		if err != nil {
			return nil, fmt.Errorf("sub_agents: %w", err)
		}
		b.WriteString(body)
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// stemOf is a file's name without its extension.
func stemOf(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// withSubAgents orders the sessions Scan found so that every session
// comes before the sub-agent files among them (Session.Parent, which
// Scan set: a session file of the same store in an ancestor directory,
// whose stem the store's SubAgents glob names, or, for a glob that
// climbs ("../"), in a directory as far below such an ancestor, beside
// the sub-agents' own): a sub-agent's run is then begun after its
// session's, into which it is linked. The parent is looked for on disk,
// so a session the sync leaves out (--since) still names its
// sub-agents, and is added before them.
func withSubAgents(sessions []Session) []Session {
	top := make([]Session, 0, len(sessions))
	var subs []Session
	listed := make(map[string]bool, len(sessions))
	for _, s := range sessions {
		listed[s.Path] = true
	}
	for _, s := range sessions {
		if s.Loc == nil || s.Loc.subAgents == nil && s.Loc.SubAgentOf == nil || s.Parent == "" {
			top = append(top, s)
			continue
		}
		subs = append(subs, s)
		if !listed[s.Parent] {
			// A session the sync left out (--since) whose sub-agent
			// changed: it is looked at first, so that the sub-agent's
			// run has its session's to be linked into.
			if st, err := os.Stat(s.Parent); err == nil {
				top = append(top, Session{Loc: s.Loc, Path: s.Parent, Size: st.Size(), ModTime: st.ModTime()})
				listed[s.Parent] = true
			}
		}
	}
	return append(top, subs...)
}

// parentSession finds the session file path is a sub-agent file of, in
// store loc ("": none).
func parentSession(loc *Location, path string, dirs *sessionDirs) string {
	for d := filepath.Dir(path); d != loc.Dir && strings.HasPrefix(d, loc.Dir+string(filepath.Separator)) || d == loc.Dir; d = filepath.Dir(d) {
		rel, err := filepath.Rel(d, path)
		if err != nil {
			return ""
		}
		m := loc.subAgents.FindStringSubmatch(filepath.ToSlash(rel))
		if len(m) > 1 && loc.SubAgentsKey != nil {
			// "{stem}" is the id the session file states.
			if p := dirs.keyedSession(loc, d, m[1], path); p != "" {
				return p
			}
		} else if m != nil {
			names := dirs.below(d, loc.subAgentsUp)
			var found []string
			for _, n := range names {
				p := filepath.Join(d, n)
				if p == path {
					continue
				}
				r, err := filepath.Rel(loc.Dir, p)
				if err != nil || loc.Match == nil || !loc.Match(filepath.ToSlash(r)) {
					continue
				}
				if len(m) > 1 && stemOf(n) != m[1] {
					continue
				}
				if len(m) == 1 && loc.subAgents.MatchString(filepath.ToSlash(n)) {
					continue // a sibling sub-agent file, not the session
				}
				found = append(found, p)
			}
			if len(found) == 1 {
				return found[0]
			}
		}
		if d == loc.Dir {
			break
		}
	}
	return ""
}

// filesBelow lists the regular files depth directories below d (0: in
// d), relative to d, in name order.
func filesBelow(d string, depth int) []string {
	ents, _ := os.ReadDir(d)
	var names []string
	for _, e := range ents {
		switch {
		case depth == 0 && e.Type().IsRegular():
			names = append(names, e.Name())
		case depth > 0 && e.IsDir():
			for _, n := range filesBelow(filepath.Join(d, e.Name()), depth-1) {
				names = append(names, filepath.Join(e.Name(), n))
			}
		}
	}
	return names
}

// fileLink is where a sub-agent file's new run is linked in its
// session's run (runctl.Link), and the run an older twasm archived the
// file in as a session of its own (legacy: ended, superseded by the new
// child run).
type fileLink struct {
	runctl.Link
	legacy string
	// looseAt is the number of parts of the session's run when the
	// link was made at its latest part because the session's records
	// (abi.Store.SubAgentCalls) named no call of its run yet, no result
	// of it named the file (abi.Store.SubAgentResult), or no call of it
	// stated the prompt the file starts with (abi.Store.SubAgentPrompt)
	// (Entry.LooseAt); 0 when linked at a call, or when the store
	// declares none of them.
	looseAt int
	// note says why the link is not at a call where the store declares
	// how to find it (several calls state the file's prompt): the
	// outcome's reason.
	note string
}

// subAgentLink decides how the first part of a sub-agent file's run
// (path, a sub-agent of session file parent, in store loc) is archived:
// linked into the session's open run (link), waiting for the session to
// be archived first (wait, with why), or standing alone because the
// session's run cannot take it (why says so).
//
// The link is made at the tool call that started the sub-agent, as a
// sub-agent the session's log carries is (spec §6.10): in the agent
// step (part) holding the call, named by the call's description. The
// call is the one the store's sidecar names (abi.Store.SubAgentCall), or
// the session file's records (abi.Store.SubAgentCalls, recordCall; of
// several calls of that id, the one callOf picks by the file's start),
// else the one whose result's output names the sub-agent
// (abi.Store.SubAgentResult: a line of its first eight; the call that
// result answers), or the one call whose input states the prompt the
// file starts with (abi.Store.SubAgentPrompt, prompt.go); else, when the session's log carried the sub-agent's conversation
// too (Claude Code before 2.1.68: agent_progress records), the child run
// that made of it, which the file's run, holding the whole conversation,
// supersedes; else the session's latest part.
func (a *Archiver) subAgentLink(loc *Location, path, parent string) (link *fileLink, wait bool, why string) {
	pe := a.ledger.ByPath(parent)
	switch {
	case pe == nil || pe.Parts == 0 || pe.Pending:
		if _, err := os.Lstat(parent); errors.Is(err, fs.ErrNotExist) {
			if loc != nil && loc.SubAgentOf != nil && strings.ContainsAny(filepath.Base(parent), "*?[") {
				// Named by the key its session's file name holds
				// (missingParent): no such file is in the store.
				return nil, false, "its session, a file " + parent + ", is not in the store: archived as a run of its own"
			}
			return nil, false, "its session " + parent + " is gone: archived as a run of its own"
		}
		if a.opts.CloseIdle == 0 {
			// Every run this archiver writes ends at once (import): the
			// session's, archived later, could not take it.
			return nil, false, "a sub-agent of session " + parent + ", which is not archived: archived as a run of its own"
		}
		return nil, true, "a sub-agent of session " + parent + ", which is not archived yet: archived after it, as a child run of its run"
	case pe.Closed:
		return nil, false, "its session's run " + pe.RunID + " has ended: archived as a run of its own"
	}
	stem := stemOf(path)
	l := &fileLink{Link: runctl.Link{ParentID: pe.RunID, Iteration: pe.Parts - 1, Title: stem}}
	callID := sidecarString(filepath.Dir(path), stem, loc.SubAgentCall)
	if callID == "" {
		// The session's records name the call (abi.Store.SubAgentCalls:
		// Gemini CLI's agentId).
		callID = recordCall(parent, stem, loc.SubAgentCalls)
	}
	in, err := a.sessionLinksOf(pe, loc.SubAgentPrompt)
	if err != nil {
		// The link is still made, at the latest part.
		a.opts.Logger.Warn("sub-agent link: read the session's run", "run", pe.RunID, "err", err)
	}
	call := -1
	switch {
	case callID != "":
		call = in.callOf(callID, fileStart(path))
	case loc.SubAgentResult != "":
		// The result of the call that started it names it.
		if n, ok := in.named[resultLine(loc, path)]; ok {
			call, callID = n, in.list[n].id
		}
	}
	if call < 0 && loc.SubAgentOf != nil {
		// The result of the call that started it names it by a member
		// (abi.SubAgentOf.Result: Codex's spawn_agent).
		if n, ok := resultCall(loc.SubAgentOf, path, in); ok {
			call, callID = n, in.list[n].id
		}
	}
	// The call's input states the prompt the file starts with
	// (abi.Store.SubAgentPrompt: the Kimi CLI's Task calls before 0.59).
	prompt, stating := "", 0
	if call < 0 && callID == "" && loc.SubAgentPrompt != nil {
		prompt = filePrompt(path, loc.SubAgentPrompt)
		var n int
		if n, stating = in.promptCall(prompt); n >= 0 {
			call, callID = n, in.list[n].id
		} else if stating > 1 {
			l.note = fmt.Sprintf("%d calls of its session's run state the prompt its file starts with: linked at the session's latest part", stating)
		}
	}
	atCall(&l.Link, in, call)
	carried, ok := a.carriedSubRun(in, path, callID)
	if ok {
		l.Supersedes, l.Iteration = carried.child, carried.iteration
		if callID == "" && carried.title != "" {
			l.Title = carried.title
		}
	}
	if call < 0 && !ok && (loc.SubAgentCalls != nil || loc.SubAgentResult != "" || prompt != "" && stating == 0) {
		// Linked at the latest part: the session's records may name
		// the call later, a later part hold the result naming it (an
		// agent writes a call's result once the sub-agent answered:
		// Kimi Code's foreground Agent call) or the call stating the
		// prompt (looseOf).
		l.looseAt = pe.Parts
	}
	l.Path = subAgentPath(stem, callID)
	return l, false, ""
}

// resultLine is the line of a tool result's output that names the
// sub-agent file at path as the store declares (abi.Store.SubAgentResult:
// "{dir}" the file's directory's name, "{stem}" its name without its
// extension).
func resultLine(loc *Location, path string) string {
	return strings.NewReplacer("{dir}", filepath.Base(filepath.Dir(path)), "{stem}", stemOf(path)).Replace(loc.SubAgentResult)
}

// atCall moves a sub-agent's link to the tool call that started it,
// call n of its session's run (in.list; -1: none the run holds): the
// agent step (part) holding it, named by the call's description.
func atCall(l *runctl.Link, in sessionLinks, n int) {
	if n < 0 || n >= len(in.list) {
		return
	}
	c := in.list[n]
	l.Iteration = c.iteration
	if c.description != "" {
		l.Title = c.description
	}
}

// callOf is the number of the call of id in the session's run that
// started a sub-agent whose file begins at start (fileStart; zero when
// unknown), -1 when the run holds no call of id. A provider may reuse an
// id once its call is answered (transcript.Pairer), so a run may hold
// several: the latest made at or before start is the one (a sub-agent
// begins after its call, and before a later call could reuse the id),
// the run's latest of id when start or the calls' times are not known.
func (in sessionLinks) callOf(id string, start time.Time) int {
	ns := in.calls[id]
	if len(ns) == 0 {
		return -1
	}
	if !start.IsZero() {
		for i := len(ns) - 1; i >= 0; i-- {
			if at := in.list[ns[i]].at; !at.IsZero() && !at.After(start) {
				return ns[i]
			}
		}
	}
	return ns[len(ns)-1]
}

// maxStartLines bounds the lines fileStart reads.
const maxStartLines = 16

// fileStart is the time of a sub-agent's file's first record that states
// one (an RFC 3339 "timestamp" member of one of its first maxStartLines
// JSON lines, within its first maxSidecar bytes): when the sub-agent
// began. Zero when none does.
func fileStart(path string) time.Time {
	b, err := readHeadBytes(path, maxSidecar)
	if err != nil {
		return time.Time{}
	}
	for i, line := range bytes.SplitN(b, []byte("\n"), maxStartLines+1) {
		if i == maxStartLines {
			break
		}
		var rec struct {
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Timestamp == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, rec.Timestamp); err == nil {
			return t
		}
	}
	return time.Time{}
}

// subAgentPath is the path of the step linking a sub-agent's run named
// stem (its file's name, its session's key) in its session's run:
// "agent.<stem>_<call id>", "agent.<stem>" when the call is not known.
func subAgentPath(stem, callID string) string {
	seg := stem
	if callID != "" {
		seg += "_" + callID
	}
	return "agent." + pathSegment(seg)
}

// pathSegment makes s one segment of a step path (the path grammar's
// characters, at most 80 bytes), as capture names a sub-agent's link.
func pathSegment(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
	if len(s) > 80 {
		s = s[:80]
	}
	if s == "" {
		s = "subagent"
	}
	return s
}

// maxSidecar bounds what is read of a sidecar (abi.SidecarKey).
const maxSidecar = 64 << 10

// sidecarString reads the string member a store's sidecar declaration
// names, beside a file of stem stem in dir ("" when the sidecar, the
// member or the declaration is missing, or the file's first JSON value
// is not an object within its first maxSidecar bytes: a small JSON
// document, or the first line of a JSON Lines file, firstObject).
func sidecarString(dir, stem string, k *abi.SidecarKey) string {
	if k == nil {
		return ""
	}
	obj := firstObject(filepath.Join(dir, strings.ReplaceAll(k.File, "{stem}", stem)), maxSidecar)
	var v string
	if json.Unmarshal(obj[k.Key], &v) != nil {
		return ""
	}
	return v
}

// sessionLinks is what linking a sub-agent needs of its session's run:
// its agent steps' tool calls (the agent step's iteration, the input's
// description, the call's time), in order, and their numbers by id, and
// the child runs its agent steps linked.
type sessionLinks struct {
	list  []callAt
	calls map[string][]int
	links []linkAt
	// named are the first lines of the tool results' outputs, each with
	// the number of the call it answers (transcript.Pairer: a reused id's
	// result answers its own call; abi.Store.SubAgentResult).
	named map[string]int
	// members are the string members of the results' outputs that are
	// JSON objects (memberKey), each with the number of the call it
	// answers (abi.SubAgentOf.Result).
	members map[string]int
	// prompts are the numbers of the calls stating each prompt, by its
	// sha256, when the store declares where a call states one
	// (abi.Store.SubAgentPrompt, prompt.go).
	prompts map[[32]byte][]int
	// failed are the calls whose result is an error or a denial: they
	// started nothing (abi.StoreParent.Prompt).
	failed map[int]bool
}

// maxNamedLines and maxNamedLine bound what is kept of a result's output
// for sessionLinks.named.
const (
	maxNamedLines = 8
	maxNamedLine  = 256
)

type callAt struct {
	id          string
	iteration   int
	description string
	at          time.Time
}

type linkAt struct {
	child, path, title string
	iteration          int
}

// sessionLinksOf is readSession of the session's run, read once per
// part of it: a session with many sub-agents' files is read once, not
// once per file (the runs this sync links into it are not in it, and
// carriedSubRun leaves them out anyway). pm is the store's
// abi.Store.SubAgentPrompt (nil: none).
func (a *Archiver) sessionLinksOf(pe *Entry, pm *abi.PromptMatch) (sessionLinks, error) {
	key := fmt.Sprintf("%s#%d", pe.RunID, pe.Parts)
	if pm != nil {
		key += "#" + pm.Name + "#" + pm.Input
	}
	a.sessionsMu.Lock()
	defer a.sessionsMu.Unlock()
	if in, ok := a.sessions[key]; ok {
		return in, nil
	}
	in, err := a.readSession(pe.RunID, pm)
	if err == nil {
		if a.sessions == nil {
			a.sessions = map[string]sessionLinks{}
		}
		a.sessions[key] = in
	}
	return in, err
}

// readSession reads a session's run for subAgentLink (pm: the store's
// abi.Store.SubAgentPrompt, nil when it declares none).
func (a *Archiver) readSession(runID string, pm *abi.PromptMatch) (sessionLinks, error) {
	in := sessionLinks{calls: map[string][]int{}, named: map[string]int{}, members: map[string]int{}, prompts: map[[32]byte][]int{}, failed: map[int]bool{}}
	var pairs transcript.Pairer
	p, err := a.opts.Store.TranscriptPath(runID)
	if err != nil {
		return in, err
	}
	f, err := regfile.Open(p)
	if err != nil {
		return in, err
	}
	defer f.Close()
	r := transcript.NewReader(f)
	for r.Next() {
		ev := r.Event()
		switch {
		case ev == nil:
		case ev.Type == transcript.ToolCall && ev.Path == "agent":
			if t := ev.Tool(); t != nil && t.CallID != "" {
				var in2 struct {
					Description string `json:"description"`
				}
				_ = json.Unmarshal(t.Input, &in2)
				n := pairs.Call(t.CallID, ev.Path, ev.Iteration)
				in.list = append(in.list, callAt{id: t.CallID, iteration: ev.Iteration, description: in2.Description, at: ev.Timestamp})
				in.calls[t.CallID] = append(in.calls[t.CallID], n)
				in.addPrompt(pm, t.Name, t.Input, n)
			}
		case ev.Type == transcript.ToolResult && ev.Path == "agent":
			if t := ev.Tool(); t != nil && t.CallID != "" {
				call, ok := pairs.Result(t.CallID, ev.Path, ev.Iteration)
				if !ok {
					continue // answers no call of the run
				}
				if t.Error != "" || t.Status == transcript.StatusError || t.Status == transcript.StatusDenied {
					in.failed[call] = true
				}
				in.addMembers(t.Output, call)
				rest := t.Output
				for range maxNamedLines {
					line, more, _ := strings.Cut(rest, "\n")
					if line = strings.TrimRight(line, "\r"); line != "" && len(line) <= maxNamedLine {
						if _, dup := in.named[line]; !dup {
							in.named[line] = call
						}
					}
					if rest = more; rest == "" {
						break
					}
				}
			}
		case ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" && strings.HasPrefix(ev.Path, "agent."):
			title := ""
			if sp := ev.Step(); sp != nil {
				title = sp.Name
			}
			in.links = append(in.links, linkAt{child: ev.ChildRunID, path: ev.Path, title: title, iteration: ev.Iteration})
		}
	}
	return in, r.Err()
}

// carriedSubRun finds the child run of a session's run that holds a
// sub-agent's conversation the session's own log carried: the one
// linked at the sub-agent's call (callID) when one only is, else the one
// of those (or of all, when none is linked at the call) whose first
// assistant message id is in the sub-agent file's first MiB: a call id
// the provider reused (transcript.Pairer) may have started several. A
// run of another sub-agent file (linked by this package) is not one.
func (a *Archiver) carriedSubRun(in sessionLinks, path, callID string) (linkAt, bool) {
	var carried, atCall []linkAt
	for _, l := range in.links {
		if c := a.ledger.byRun(l.child); c != nil {
			continue // a sub-agent file's own run
		}
		carried = append(carried, l)
		if callID != "" && linkedAt(l.path, callID) {
			atCall = append(atCall, l)
		}
	}
	switch len(atCall) {
	case 0:
	case 1:
		return atCall[0], true
	default:
		carried = atCall
	}
	var head []byte
	for _, l := range carried {
		id := a.firstMessageID(l.child)
		if id == "" {
			continue
		}
		if head == nil {
			b, err := readHeadBytes(path, 1<<20)
			if err != nil || len(b) == 0 {
				return linkAt{}, false
			}
			head = b
		}
		if q, _ := json.Marshal(id); bytes.Contains(head, q) {
			return l, true
		}
	}
	return linkAt{}, false
}

// linkedAt reports whether a child run's link path names the tool call
// callID: it ends "_<call id>", or "_<call id>_<n>", the number capture
// adds to a name another sub-agent's link took already (a call that
// reused the id with the same description).
func linkedAt(path, callID string) bool {
	seg := "_" + pathSegment(callID)
	if strings.HasSuffix(path, seg) {
		return true
	}
	i := strings.LastIndex(path, seg+"_")
	if i < 0 {
		return false
	}
	n := path[i+len(seg)+1:]
	return n != "" && strings.Trim(n, "0123456789") == ""
}

// firstMessageID is the provider's id of a run's first assistant message
// ("" when it has none).
func (a *Archiver) firstMessageID(runID string) string {
	p, err := a.opts.Store.TranscriptPath(runID)
	if err != nil {
		return ""
	}
	f, err := regfile.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := transcript.NewReader(f)
	for r.Next() {
		ev := r.Event()
		if ev == nil || ev.Type != transcript.MessageAssistant {
			continue
		}
		if m := ev.Message(); m != nil && m.ID != "" {
			return m.ID
		}
	}
	return ""
}

// readHeadBytes reads up to n bytes of a file.
func readHeadBytes(path string, n int64) ([]byte, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// endLegacy ends the run an older twasm archived a sub-agent file in as
// a session of its own, superseded by the child run that now holds it:
// readers that count (ls, stats, usage) and search leave it out.
func (a *Archiver) endLegacy(ctx context.Context, e *Entry, by string) error {
	return a.endCancelled(ctx, e, "its sub-agent file is archived again as child run "+by+" of its session's run", by)
}

// supersede ends run old, which the first part of run by archived again
// (Resume.Supersedes: a sub-agent's file linked again, endLegacy), as
// superseded by it, unless its end says so already (a kill after the end
// was written and before the ledger noted it), then clears the note on
// by's entry. Called once the part is written, and by the next sync or
// import when a kill came between the two (Recover), so the run ends
// whichever process ends it.
//
// repair: old is a run whose raw capture is damaged, which `sync
// --repair` archived again as run by (Resume.Repair): it is ended as
// the repair ends it, its sub-agent files' runs with it (replaced).
func (a *Archiver) supersede(ctx context.Context, by, old string, repair bool) error {
	if le := a.ledger.byRun(old); le != nil && (!le.Closed || le.SupersededBy != by) {
		var err error
		if repair {
			err = a.replaced(ctx, old, by)
		} else if err = a.endLegacy(ctx, le, by); err != nil {
			err = fmt.Errorf("end run %s, which run %s supersedes: %w", old, by, err)
		}
		if err != nil {
			return err
		}
	}
	cur := a.ledger.byRun(by)
	if cur == nil || cur.Resume == nil || cur.Resume.Supersedes != old {
		return nil
	}
	if r := *cur.Resume; r.Held {
		r.Supersedes = ""
		cur.Resume = &r
	} else {
		cur.Resume = nil
	}
	return a.ledger.Put(cur)
}

// storeOf finds the session file path is a sub-agent's file of, for a
// file given by itself (import), whose store's directory is not known:
// the store's pattern is matched against the candidates relative to dir
// (where the sub-agent glob matched), then to each directory above it,
// and the first that finds the session is taken as the store's
// directory (loc.Dir), as a sync would have found it. For a glob that
// climbs (Kimi Code's "../agent-*/wire.jsonl", the session one of the
// store's files as far below as its sub-agents') that is the store's
// root, so the facts line names the session's path as sync's does. ""
// when none does (loc.Dir is then left as it was).
func storeOf(loc *Location, path, dir string) string {
	dirs := newSessionDirs()
	for root := dir; ; root = filepath.Dir(root) {
		l := *loc
		l.Dir = root
		if parent := parentSession(&l, path, dirs); parent != "" {
			*loc = l
			return parent
		}
		if filepath.Dir(root) == root {
			return ""
		}
	}
}

// SubAgentFile is the session a file given by itself (twasm import) is
// read as when it is a sub-agent's file of one of provider's file stores
// (abi.Store.SubAgents matches its path below some directory), or a
// session's first file of a tree store whose sessions name their parent
// there (namesParent: Factory Droid's Task sub-sessions, whose session
// is the file beside it that it names, Parent; read with its settings
// beside it as a tree store's session, else as a file store's in its
// directory: namedSession): its
// location, resolved at the store's directory (storeOf: the directory
// the store's pattern finds the session from, else where the glob
// matched), and Parent, the session file whose sub-agent it is (found
// on disk, else the file the glob's {stem} names there, which may be
// gone), both paths absolute. ok is false for any other file.
// SyncSession then links its run into the session's open run, or, when
// it cannot, archives it as a run of its own named as that session's
// sub-agent.
func SubAgentFile(declared []Declared, provider, path string) (s Session, ok bool) {
	// Absolute, so that the store's directory above it can be found
	// (storeOf) and the session named as sync names it.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	} else {
		path = filepath.Clean(path)
	}
	named := map[[2]string]bool{} // declarations looked at: Codex's two stores share one
	for _, d := range declared {
		if d.Provider == provider && d.SubAgentOf != nil && cmp.Or(d.Kind, KindFile) == KindFile && !named[subAgentOfID(d.SubAgentOf)] {
			named[subAgentOfID(d.SubAgentOf)] = true
			if s, ok := subAgentOfFile(d, path); ok {
				return s, true
			}
		}
		if d.Provider == provider && namesParent(d) {
			if parent, ok := namedParent(d, path); ok {
				return namedSession(d, path, parent), true
			}
			continue
		}
		if d.Provider != provider || d.SubAgents == "" || cmp.Or(d.Kind, KindFile) != KindFile {
			continue
		}
		c := compileStore(d)
		if c.subAgents == nil {
			continue
		}
		for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				break
			}
			if m := c.subAgents.FindStringSubmatch(filepath.ToSlash(rel)); m != nil {
				loc := declaredLocation(d, c, dir, "import")
				if loc.Unusable != "" || loc.subAgents == nil {
					break
				}
				parent := storeOf(&loc, path, dir)
				if parent == "" && len(m) > 1 && loc.SubAgentsKey == nil {
					loc.Dir = dir
					parent = filepath.Join(dir, m[1]+filepath.Ext(path))
				}
				if parent == "" {
					break
				}
				return Session{Loc: &loc, Path: path, Parent: parent}, true
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return Session{}, false
}

// heldRuns are the session files whose runs Hold keeps open, by clean
// path, each with the run a part left open (nil until one does).
type heldRuns struct {
	mu    sync.Mutex
	paths map[string]*heldRun
}

// heldRun is a run a part left open for Hold, and the error the part
// would have ended it with (nil: ok).
type heldRun struct {
	runID string
	err   error
}

// keep notes that the part just written to run runID of the session
// file path, which would end the run, leaves it open instead, because
// Hold holds path; false when it does not.
func (h *heldRuns) keep(path, runID string, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.paths[filepath.Clean(path)]; !ok {
		return false
	}
	h.paths[filepath.Clean(path)] = &heldRun{runID: runID, err: err}
	return true
}

// Hold keeps the run of the session file at path open when a part of
// it would end it at once (Options.CloseIdle 0: import), so that its
// sub-agents' files archived next are linked into it as child runs, as
// a sync links them; [Archiver.EndHeld] ends it then. path is the
// session's path as the archiver reads it (SyncFile's path,
// Session.Path). The ledger notes the run held (Resume.Held) until
// EndHeld ends it: an archiver killed before (or cancelled) leaves it
// for the next sync or import, which finds it interrupted and finishes
// it (Recover: the session's sub-agents' files found on disk linked
// into it, then the run ended), and doctor reports it meanwhile.
func (a *Archiver) Hold(path string) {
	a.held.mu.Lock()
	defer a.held.mu.Unlock()
	a.held.paths[filepath.Clean(path)] = nil
}

// EndHeld ends the run Hold kept open for path, as the part would have
// (the part's status and error, dated at its last event), and releases
// path. ok is false when no part left a run open (the session was
// unchanged, or its part failed or did not end its run). When ctx is
// cancelled (the import was interrupted, its sub-agents' files perhaps
// not all archived) the run is left open and held in the ledger, for
// the next sync or import to finish (ActionPending): ended now, the
// sub-agents' files not yet archived could never be linked into it.
func (a *Archiver) EndHeld(ctx context.Context, path string) (out Outcome, ok bool) {
	a.held.mu.Lock()
	h := a.held.paths[filepath.Clean(path)]
	delete(a.held.paths, filepath.Clean(path))
	a.held.mu.Unlock()
	if h == nil {
		return out, false
	}
	out = Outcome{Path: path, Action: ActionClosed, RunID: h.runID, Reason: "ended after its sub-agents' files"}
	e := a.ledger.byRun(h.runID)
	if e == nil {
		out.Action, out.Reason = ActionFailed, "end run "+h.runID+": not in the ledger"
		return out, true
	}
	out.Provider = e.Provider
	if ctx.Err() != nil {
		out.Action, out.Reason = ActionPending, "interrupted before its sub-agents' files were all archived: left open, held, for the next sync or import to finish"
		return out, true
	}
	return a.endEntry(ctx, out, e, h.err), true
}

// SubAgentFiles lists the sub-agents' files of the session file at
// path that are on disk, as provider's file stores declare them
// (abi.Store.SubAgents; the files beside it that name it as their
// parent, for a tree store whose sessions do, namedChildren): the files below the directory the store's
// sub-agent glob starts from (the session's directory, climbed as the
// glob climbs, then the glob's leading literal directories, "{stem}"
// the session's) of which SubAgentFile names path as the session, each
// as SubAgentFile resolves it, in path order. At most
// maxSubAgentFiles entries are looked at per store (links are not
// followed). keys, when not nil, remembers what files beside a session
// name (NamedKeys) for the next call. An import archives them with their session, and the
// settling of a run an import held for them links them (Recover), so
// that a session's tree is the same whatever files were given.
func SubAgentFiles(declared []Declared, provider, path string, keys *NamedKeys) []Session {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	var out []Session
	seen := map[string]bool{}
	named := map[[2]string]bool{}
	for _, d := range declared {
		if d.Provider == provider && namesParent(d) {
			out = append(out, namedChildren(d, abs, seen)...)
			continue
		}
		if d.Provider == provider && d.SubAgentOf != nil && cmp.Or(d.Kind, KindFile) == KindFile && !named[subAgentOfID(d.SubAgentOf)] {
			named[subAgentOfID(d.SubAgentOf)] = true
			out = append(out, subAgentOfChildren(d, abs, seen, keys)...)
		}
		if d.Provider != provider || d.SubAgents == "" || cmp.Or(d.Kind, KindFile) != KindFile {
			continue
		}
		up, glob := abi.SubAgentsGlob(d.SubAgents)
		dir := filepath.Dir(abs)
		for range up {
			dir = filepath.Dir(dir)
		}
		stem := globStem(abs, d.SubAgentsKey)
		if stem == "" {
			continue // it states no id: no sub-agents' directory
		}
		segs := strings.Split(strings.ReplaceAll(glob, "{stem}", stem), "/")
		depth := len(segs) - 1 // directories below dir, the file's segment apart
		for _, seg := range segs[:len(segs)-1] {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, `*?[\{`) {
				break
			}
			dir = filepath.Join(dir, seg)
			depth--
		}
		if slices.Contains(segs, "**") {
			depth = -1
		}
		looked := 0
		_ = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable directory: the others are looked at
			}
			if looked++; looked > maxSubAgentFiles {
				return filepath.SkipAll
			}
			if de.IsDir() {
				if rel, _ := filepath.Rel(dir, p); depth >= 0 && rel != "." && strings.Count(rel, string(filepath.Separator))+1 > depth {
					return filepath.SkipDir
				}
				return nil
			}
			if !de.Type().IsRegular() || p == abs || seen[p] {
				return nil
			}
			if s, ok := SubAgentFile(declared, provider, p); ok && s.Parent == abs {
				seen[p] = true
				out = append(out, s)
			}
			return nil
		})
	}
	slices.SortFunc(out, func(x, y Session) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// maxSubAgentFiles bounds the entries SubAgentFiles looks at below a
// session's sub-agent directory.
const maxSubAgentFiles = 10000
