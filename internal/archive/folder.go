package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runctl"
)

// KindFolder is the kind of a store whose sessions are directories
// (abi.Store.Files lists the files of one).
const KindFolder = "folder"

// FileState is what a session folder's run holds of one of its files.
type FileState struct {
	// Path is the file's path in the folder, slash-separated.
	Path string `json:"path"`
	// Size and ModTime are the file's as last seen: a file whose size and
	// mtime did not change is not read again.
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
	// Offset is how many of its bytes the run holds (a JSON document:
	// its whole last version), SHA256 the hash of those bytes.
	Offset int64  `json:"offset"`
	SHA256 string `json:"sha256"`
}

// folderFile is one file of a session folder, as listed.
type folderFile struct {
	rel, abs string
	size     int64
	mtime    time.Time
	doc      bool
}

// checkFolderFiles checks a folder store's files globs.
func checkFolderFiles(globs []string) error {
	if len(globs) == 0 {
		return errors.New("a folder store lists no files")
	}
	for _, g := range globs {
		if err := checkGlob(g); err != nil {
			return err
		}
	}
	return nil
}

// folderFiles lists the files of a session folder that the globs match,
// in the globs' order, each glob's in name order, each file once (a tree
// session's listing, without placeholders). A file that vanishes
// meanwhile is left out.
func folderFiles(dir string, globs []string) ([]folderFile, error) {
	return treeFiles(dir, "", globs)
}

// walkFolders lists the session folders of a folder store (Walk, once
// the store is found to be a directory): the
// directories Match accepts that hold at least one of the session's
// files (not looked into further), sorted by path, each with the sum of
// its files' sizes and their latest mtime.
func walkFolders(loc *Location) (sessions []Session, problems []string, err error) {
	err = filepath.WalkDir(loc.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != loc.Dir {
				problems = append(problems, err.Error())
				return nil
			}
			return err
		}
		if !d.IsDir() || p == loc.Dir {
			return nil
		}
		rel, rerr := filepath.Rel(loc.Dir, p)
		if rerr != nil || !loc.Match(filepath.ToSlash(rel)) {
			return nil
		}
		files, ferr := folderFiles(p, loc.Files)
		if ferr != nil {
			problems = append(problems, ferr.Error())
			return filepath.SkipDir
		}
		if len(files) == 0 {
			return filepath.SkipDir
		}
		s := Session{Loc: loc, Path: p}
		for _, f := range files {
			s.Size += f.size
			if f.mtime.After(s.ModTime) {
				s.ModTime = f.mtime
			}
		}
		sessions = append(sessions, s)
		return filepath.SkipDir
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, problems, fmt.Errorf("%s: %w", loc.Dir, ErrStoreMissing)
		}
		return nil, problems, err
	}
	slices.SortFunc(sessions, func(a, b Session) int { return strings.Compare(a.Path, b.Path) })
	return sessions, problems, nil
}

// folderHead is a session folder's identity: its provider and its path
// relative to the store, whatever its files hold (the store may move:
// the same folder in it is the same session).
func folderHead(provider, rel string) string {
	return sum([]byte("twasm folder\x00" + provider + "\x00" + rel))
}

// maxDocument bounds a JSON document of a session folder read whole.
const maxDocument = capture.MaxLineBytes

// syncFolder archives what changed in a session folder: a stream of the
// files that changed (abi.SourceFile), each introduced by its file line,
// a JSON document compacted to one line and read again whole, JSON Lines
// from where the run's last part left them. The stream extends the run's
// raw capture; the plugin reads the raw capture first (output dropped),
// so it knows what it reported of the documents' earlier versions.
func (a *Archiver) syncFolder(ctx context.Context, s Session) Outcome {
	return a.syncFolderAs(ctx, s, nil)
}

// syncFolderAs is syncFolder; relink, when set, says the folder is read
// whole into a new run, a child run linked so (a sub-task its parent
// names, linkSubTask), superseding the run that held it (relink.legacy).
func (a *Archiver) syncFolderAs(ctx context.Context, s Session, relink *fileLink) Outcome {
	loc, dir, provider := s.Loc, s.Path, s.Loc.Provider
	out := Outcome{Path: dir, Provider: provider, DryRun: a.opts.DryRun}
	fail := func(err error) Outcome {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	if a.own.contains(dir) {
		return fail(fmt.Errorf("%s is in twasm's own storage %s: not an agent's session", dir, a.opts.Store.Root))
	}
	a.recoverFirst(ctx) // a part a killed sync left open is settled before the folder is read
	rel, err := filepath.Rel(loc.Dir, dir)
	if err != nil {
		return fail(err)
	}
	rel = filepath.ToSlash(rel)
	head := sessionHead(loc, provider, rel)
	prev := a.ledger.ByPath(dir)
	// A run whose raw capture is damaged, archived again (Repair): the
	// folder's files are read whole into a new run, as if no run held it.
	repairID := a.repairAt(dir)
	// A sub-task's folder whose run a repair ended, superseded by its
	// parent's new run, before a kill let it archive the folder again
	// (orphaned): read whole into a new run, linked as the repair would
	// have (parentLink; a sub-task its parent's result or call names:
	// linkNamed, from the parent's new run).
	orphanOf := a.orphaned(prev, dir)
	orphan := relink == nil && repairID == "" && orphanOf != nil
	// A sub-task its parent names (no parentKey), archived again by a
	// repair with its parent: archived once its parent's new run is
	// read for the sub-tasks it names (linkNamed, after the sync's
	// sessions), as a child run of that run, never first as a run of
	// its own that a kill could leave unlinked.
	deferred := repairID != "" && relink == nil && prev != nil && prev.RunID == repairID && prev.Parent != "" && namesSubTasks(loc) && parentKey(loc, dir) == ""
	if deferred && !a.opts.DryRun {
		out.RunID, out.Action = prev.RunID, ActionUnchanged
		out.Reason = a.repairing(repairID) + ": archived again as a child run of its parent's new run once that one is read for the sub-tasks it names"
		return out
	}
	if orphan && !a.opts.DryRun && parentKey(loc, dir) == "" {
		if by := a.ledger.byRun(orphanOf.SupersededBy); by != nil && namesSubTasks(loc) && a.named != nil {
			a.named.mu.Lock()
			a.named.parts = append(a.named.parts, namedPart{loc: loc, dir: by.Path, runID: by.RunID})
			a.named.mu.Unlock()
		}
		out.RunID, out.Action = orphanOf.RunID, ActionUnchanged
		out.Reason = "run " + orphanOf.RunID + ", which held this sub-task, was ended superseded by its parent's run " + orphanOf.SupersededBy + " (sync --repair archived the parent again) and no run holds the folder now: archived again as a child run of that run once its parent's run is read for the sub-tasks it names"
		return out
	}
	if repairID != "" || relink != nil || orphan {
		prev = nil
	}
	if prev == nil && loc.Kind == KindTree {
		if e := a.keyedElsewhere(head); e != nil {
			// The agent keeps the session in its database too (OpenCode
			// copied its older files there): archived from there, once.
			out.RunID, out.Action, out.Reason = e.RunID, ActionUnchanged, "archived from "+e.Path
			return out
		}
	}
	files, err := sessionFiles(loc, dir)
	if err != nil {
		return fail(err)
	}
	if prev == nil && repairID == "" && relink == nil && !orphan {
		if es := a.ledger.ByHead(head); len(es) > 0 {
			prev = &es[0] // the store moved: the same session in it
		}
	}
	held := map[string]FileState{}
	if prev != nil {
		for _, st := range prev.Files {
			held[st.Path] = st
		}
	}
	now := a.opts.Now()
	var stream bytes.Buffer
	var states []FileState
	var size int64
	var mtime time.Time
	var notes []string
	newBytes := false
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		size += f.size
		if f.mtime.After(mtime) {
			mtime = f.mtime
		}
		st, had := held[f.rel]
		if had && st.Size == f.size && st.ModTime == f.mtime.UnixNano() {
			states = append(states, st)
			continue
		}
		settled := a.opts.Whole || now.Sub(f.mtime) >= a.opts.Settle
		if f.doc && !settled {
			// A whole JSON document is only read whole: its bytes mean
			// nothing before its closing bracket is written. The other
			// files wait with it, so that a part holds one turn whole.
			out.Action, out.Reason = ActionPending, f.rel+" changed in the last "+a.opts.Settle.String()+": read once it settles"
			return out
		}
		ns, chunk, note, err := readFolderFile(f, st, had, settled)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", f.abs, err))
		}
		if note != "" {
			notes = append(notes, note)
		}
		states = append(states, ns)
		if len(chunk) > 0 {
			stream.Write(chunk)
			newBytes = true
		}
	}
	if !newBytes {
		if prev == nil {
			out.Action, out.Reason = ActionPending, "no complete line yet"
			return out
		}
		out.RunID, out.Action, out.Reason = prev.RunID, ActionUnchanged, "nothing new"
		if !a.opts.DryRun && (!slices.Equal(prev.Files, states) || prev.Path != dir) {
			e := *prev
			e.Files, e.Size, e.ModTime, e.Path = states, size, mtime.UnixNano(), dir
			if err := a.ledger.Put(&e); err != nil {
				return fail(err)
			}
		}
		return out
	}
	body := stream.Bytes()
	if loc.SourceFacts {
		fl, _ := json.Marshal(abi.SourceFacts{Type: abi.SourceFactsType, Store: loc.Name, Path: rel,
			Name: filepath.Base(dir), Size: size, MTime: mtime.UTC().Format(time.RFC3339Nano), Project: loc.Project})
		body = append(append(fl, '\n'), body...)
	}
	from := int64(0)
	var prevLast time.Time
	if prev != nil {
		from, prevLast = prev.Offset, prev.Last
	}
	end := from + int64(len(body))
	out.Bytes = int64(len(body))
	out.partAction(prev)
	if repairID != "" {
		out.Reason = a.repairing(repairID) + ": archived again, whole, as a new run that supersedes run " + repairID
	} else if orphan {
		out.Reason = "run " + orphanOf.RunID + ", which held this sub-task, was ended superseded by its parent's run " + orphanOf.SupersededBy + " (sync --repair archived the parent again) and no run holds the folder now: archived again, whole, as a child run of its parent's run"
	}
	if len(notes) > 0 {
		out.Reason = strings.TrimPrefix(out.Reason+"; "+strings.Join(notes, "; "), "; ")
	}
	if a.opts.DryRun {
		return out
	}
	closeDue := a.opts.CloseIdle >= 0 && now.Sub(mtime) >= a.opts.CloseIdle
	reason := out.Reason
	var link *childLink
	if prev == nil && relink == nil {
		link = a.parentLink(loc, provider, dir, s.Parent)
	}
	out = a.writePart(ctx, out, folderSource{dir: dir, stream: body, states: states, prevLast: prevLast, link: link},
		provider, head, prev, false, end, end, mtime, closeDue, &Resume{Whole: true, End: closeDue, replace: repairID, link: relink})
	if out.Action != ActionFailed {
		// Its results may name sub-tasks that name no parent
		// (abi.StoreParent.Result): linked once the sync's sessions are
		// done (linkNamed).
		a.noteNaming(loc, dir, out.RunID, body)
	}
	if e := a.folderEntry(head, out.RunID); e != nil && out.Action != ActionFailed && (e.Size != size || e.ModTime != mtime.UnixNano() || e.Path != dir) {
		// The folder as seen (Archived), where it is now (a store
		// that moved): its files' total size and latest mtime, not the
		// stream's.
		e.Size, e.ModTime, e.Path = size, mtime.UnixNano(), dir
		if err := a.ledger.Put(e); err != nil {
			return fail(err)
		}
	}
	if reason != "" && out.Action != ActionFailed && !strings.HasPrefix(out.Reason, reason) {
		out.Reason = strings.TrimPrefix(reason+"; "+out.Reason, "; ")
		out.Reason = strings.TrimSuffix(out.Reason, "; ")
	}
	return out
}

// parentLink links the new run of the session at path to the open run of
// the session it names as its parent (abi.Store.Parent), when that one
// is archived: nil when there is none (the run stands alone). When the
// store also says where the session names the tool call that started it
// (abi.Store.SubAgentCall, beside the session's first file for a tree
// store, in its directory for a folder one: Factory Droid's
// session_start callingToolUseId), the link is made at that call, as a
// sub-agent's file's is (subAgentLink): in the agent step holding it,
// named by the call's description, at path "agent.<key>_<call id>"
// (the parent's latest part when its run does not hold the call);
// else at path "subagent" (SubagentPath). parentFile, when set, is the
// session's file as an import names it (Session.Parent): its run is
// looked for by that path too, when the session was archived as a
// file of its own (copied without its other files).
func (a *Archiver) parentLink(loc *Location, provider, path, parentFile string) *childLink {
	pk := parentKey(loc, path)
	if pk == "" {
		return nil
	}
	runs := a.ledger.ByHead(parentHead(loc, provider, path, pk))
	if parentFile != "" {
		if e := a.ledger.ByPath(parentFile); e != nil {
			runs = append(runs, *e)
		}
	}
	for _, e := range runs {
		if e.Closed || e.Parts == 0 || e.RunID == "" {
			continue
		}
		link := &childLink{parentRunID: e.RunID, iteration: -1}
		key := sessionKey(loc, path)
		dir, stem := filepath.Dir(path), stemOf(path)
		if loc.Kind == KindFolder {
			dir, stem = path, key
		}
		callID := sidecarString(dir, stem, loc.SubAgentCall)
		if callID == "" {
			return link
		}
		in, err := a.sessionLinksOf(&e, nil)
		if err != nil {
			// The link is still made, at the latest part.
			a.opts.Logger.Warn("sub-agent session link: read the session's run", "run", e.RunID, "err", err)
		}
		at := runctl.Link{ParentID: e.RunID, Path: subAgentPath(key, callID), Iteration: e.Parts - 1, Title: key}
		// The session began when the file naming its call (Droid: its
		// JSONL) has its first time: the call is the latest of its id
		// made by then.
		start := fileStart(filepath.Join(dir, strings.ReplaceAll(loc.SubAgentCall.File, "{stem}", stem)))
		atCall(&at, in, in.callOf(callID, start))
		link.at = &at
		return link
	}
	return nil
}

// folderEntry is the ledger entry of run runID of the session folder
// whose identity is head.
func (a *Archiver) folderEntry(head, runID string) *Entry {
	for _, e := range a.ledger.ByHead(head) {
		if e.RunID == runID {
			return &e
		}
	}
	return nil
}

// readFolderFile reads what is new in one file of a session folder
// since st (had: the run holds some of it): its new state, and the
// chunk to hand the plugin (nil: nothing new), its file line first. A
// note says what a person must know (a file rewritten, a document that
// is not JSON).
func readFolderFile(f folderFile, st FileState, had, settled bool) (FileState, []byte, string, error) {
	fh, err := regfile.Open(f.abs)
	if err != nil {
		return st, nil, "", err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return st, nil, "", err
	}
	size, mtime := info.Size(), info.ModTime()
	ns := FileState{Path: f.rel, Size: size, ModTime: mtime.UnixNano()}
	line := abi.SourceFile{Type: abi.SourceFileType, Path: f.rel, Size: size, MTime: mtime.UTC().Format(time.RFC3339Nano)}
	if f.doc {
		if size > maxDocument {
			return st, nil, "", fmt.Errorf("a JSON document of %d bytes, more than %d", size, maxDocument)
		}
		b, err := io.ReadAll(io.LimitReader(fh, maxDocument+1))
		if err != nil {
			return st, nil, "", err
		}
		ns.Size, ns.Offset, ns.SHA256 = int64(len(b)), int64(len(b)), sum(b)
		if had && st.SHA256 == ns.SHA256 {
			return ns, nil, "", nil // touched, not changed
		}
		var c bytes.Buffer
		c.Grow(len(b))
		note := ""
		if json.Compact(&c, b) == nil {
			line.Document = true
		} else {
			// Not one JSON document: handed as its lines, for the plugin
			// to count.
			c.Reset()
			c.Write(b)
			note = f.rel + " is not one JSON document: handed as it is"
		}
		if c.Len() == 0 || c.Bytes()[c.Len()-1] != '\n' {
			c.WriteByte('\n')
		}
		return ns, append(fileLine(line), c.Bytes()...), note, nil
	}
	from, note := int64(0), ""
	if had && st.Offset > 0 {
		if st.Offset <= size {
			h, err := hashPrefix(fh, st.Offset)
			if err != nil {
				return st, nil, "", err
			}
			if h == st.SHA256 {
				from = st.Offset
			}
		}
		if from == 0 {
			note = f.rel + " was rewritten (it no longer starts with what the run holds): handed again whole"
		}
	}
	end := size
	if !settled {
		if end, err = completeEnd(fh, size); err != nil {
			return st, nil, "", err
		}
	}
	if end <= from {
		if had {
			st.Size, st.ModTime = -1, ns.ModTime // a partial line: look again
			return st, nil, "", nil
		}
		ns.Size = -1
		return ns, nil, "", nil
	}
	b := make([]byte, end-from)
	if _, err := fh.ReadAt(b, from); err != nil && !errors.Is(err, io.EOF) {
		return st, nil, "", err
	}
	if b[len(b)-1] != '\n' {
		b = append(b, '\n') // a settled file's last line without LF
	}
	if ns.SHA256, err = hashPrefix(fh, end); err != nil {
		return st, nil, "", err
	}
	ns.Offset = end
	if end < size {
		ns.Size = -1
	}
	line.From = from
	return ns, append(fileLine(line), b...), note, nil
}

func fileLine(l abi.SourceFile) []byte {
	b, _ := json.Marshal(l)
	return append(b, '\n')
}

// folderSource is the stream of what changed in a session folder.
type folderSource struct {
	dir      string
	stream   []byte
	states   []FileState
	prevLast time.Time
	link     *childLink
}

func (s folderSource) parent() *childLink { return s.link }

func (s folderSource) name() string                       { return s.dir }
func (s folderSource) facts() []byte                      { return nil } // in the body
func (s folderSource) files() []FileState                 { return s.states }
func (s folderSource) body(_, _ int64) io.Reader          { return bytes.NewReader(s.stream) }
func (s folderSource) hash(int64, []byte) (string, error) { return sum(s.stream), nil }

// times are the session times the stream holds (RFC 3339 under the
// keys timestamps knows, and epoch milliseconds under "ts"): the first
// is the earliest after the previous part's last, as a rewritten
// document holds its earlier turns again.
func (s folderSource) times(_, _ int64, mtime time.Time, _ []byte) (time.Time, time.Time) {
	var all []time.Time
	f, l := timestamps(s.stream, time.Time{}, time.Time{})
	if !f.IsZero() {
		all = append(all, f, l)
	}
	all = append(all, epochTimes(s.stream)...)
	var first, last, firstNew time.Time
	for _, t := range all {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
		if t.After(s.prevLast) && (firstNew.IsZero() || t.Before(firstNew)) {
			firstNew = t
		}
	}
	if !firstNew.IsZero() && !s.prevLast.IsZero() {
		first = firstNew
	}
	if first.IsZero() {
		return mtime.UTC(), time.Time{}
	}
	return first, last
}

// replay is the run's raw capture: every stream the plugin read of the
// session before, as it read it (masked already in a masked run).
func (s folderSource) replay(root string, prev *Entry, _ int64, _ bool) (io.ReadCloser, func([]byte) []byte, error) {
	if prev == nil || prev.Raw == "" {
		return nil, nil, nil
	}
	f, err := rawfile.OpenAll(filepath.Join(root, filepath.FromSlash(prev.Raw)))
	if err != nil {
		return nil, nil, fmt.Errorf("replay the session's raw capture: %w", err)
	}
	return f, nil, nil
}

var tsKey = []byte(`"ts":`)

// epochTimes finds the epoch milliseconds (13 digits, as Cline's "ts")
// under a "ts" key in b: a byte scan, as timestamps.
func epochTimes(b []byte) []time.Time {
	var out []time.Time
	for {
		i := bytes.Index(b, tsKey)
		if i < 0 {
			return out
		}
		b = b[i+len(tsKey):]
		j := 0
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j != 13 {
			continue
		}
		ms, err := strconv.ParseInt(string(b[:j]), 10, 64)
		if err == nil {
			out = append(out, time.UnixMilli(ms).UTC())
		}
	}
}

// Archived reports whether the ledger holds all of a session found in a
// store (doctor): a file up to its size, a folder as it was last seen
// (its files' total size and latest mtime).
func Archived(l *Ledger, s Session) bool {
	if keyedIn(l, s) != nil {
		// A keyed file whose session a database holds: archived from
		// there.
		return true
	}
	e := l.ByPath(s.Path)
	if e == nil && s.Loc != nil && s.Loc.Kind == KindTree {
		// A tree session the agent keeps in its database too: archived
		// from there.
		if rel, err := filepath.Rel(s.Loc.Dir, s.Path); err == nil {
			for _, o := range l.ByHead(sessionHead(s.Loc, s.Loc.Provider, filepath.ToSlash(rel))) {
				if isDBSession(&o) {
					return true
				}
			}
		}
	}
	if e == nil {
		return false
	}
	if s.Loc != nil && s.Loc.manyFiles() {
		return e.Size == s.Size && e.ModTime == s.ModTime.UnixNano()
	}
	return e.Offset >= s.Size
}

// partAction sets what a part of a session archived as prev (nil: none)
// is: a new run, one more run after an ended one, or one more part of the
// open run.
func (out *Outcome) partAction(prev *Entry) {
	switch {
	case prev == nil:
		out.Action = ActionNew
	case prev.Closed:
		out.Action, out.Reason = ActionContinued, "run "+prev.RunID+" had ended"
	default:
		out.Action, out.RunID, out.Part = ActionGrown, prev.RunID, prev.Parts
	}
}
