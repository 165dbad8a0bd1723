package archive

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// KindSections is the kind of a store whose files each hold many
// sessions one after another (abi.StoreKindSections: Aider's
// .aider.chat.history.md).
const KindSections = abi.StoreKindSections

// section is one session of a sections file: bytes [start, end).
type section struct {
	start, end int64
	// line is the session's start line (without its line end), empty
	// for bytes before the first one.
	line []byte
	// lead is the length of the blank line right before the start line,
	// the last bytes of the session before (0: none): placeBlanks may
	// give it to this session.
	lead int64
}

// maxStartLine bounds how much of a start line is kept (to date it).
const maxStartLine = 256

// splitSections cuts the first end bytes of r into sessions: each line
// that starts with prefix starts one, which runs to the next such line
// or to end. Bytes before the first such line belong to the first
// session, so every byte is in exactly one. No session for end 0.
func splitSections(r io.ReaderAt, end int64, prefix string) ([]section, error) {
	if end <= 0 {
		return nil, nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, end), 64<<10)
	var out []section
	off, atStart := int64(0), true
	var blank int64 // the length of the line just read when it was blank
	p := []byte(prefix)
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case len(chunk) == 0:
		case atStart && len(p) > 0 && bytes.HasPrefix(chunk, p):
			line := bytes.Clone(bytes.TrimRight(chunk[:min(len(chunk), maxStartLine)], "\r\n"))
			switch {
			case len(out) == 1 && out[0].line == nil:
				// Bytes before the first start line: the first
				// session's.
				out[0].line = line
			case len(out) > 0:
				out[len(out)-1].end = off
				lead := blank
				if off-lead <= out[len(out)-1].start {
					lead = 0
				}
				out = append(out, section{start: off, line: line, lead: lead})
			default:
				out = append(out, section{start: off, line: line})
			}
		case len(out) == 0:
			out = append(out, section{start: 0})
		}
		blank = 0
		if atStart && err == nil && (len(chunk) == 1 || len(chunk) == 2 && chunk[0] == '\r') {
			blank = int64(len(chunk))
		}
		off += int64(len(chunk))
		switch {
		case err == nil:
			atStart = true
		case errors.Is(err, bufio.ErrBufferFull):
			atStart = false
		case errors.Is(err, io.EOF):
			if len(out) > 0 {
				out[len(out)-1].end = off
			}
			return out, nil
		default:
			return nil, err
		}
	}
}

// placeBlanks gives the blank line right before a session's start line
// (section.lead) to that session rather than to the one before, unless
// a run in l (nil: none) holds the session before with it, exactly (by
// content, as sync matches a session: its head, its length and the hash
// of its bytes). An agent that writes the blank line with the start line
// (Aider: "\n# aider chat started at ...", one write) would otherwise add
// to the run before a part holding nothing but it; the bytes a run holds
// stay its, so the split is the same at every sync.
func placeBlanks(l *Ledger, r io.ReaderAt, secs []section) error {
	for i := 1; i < len(secs); i++ {
		lead := secs[i].lead
		if lead == 0 {
			continue
		}
		prev := &secs[i-1]
		full := prev.end - prev.start
		held := false
		if l != nil {
			sr := io.NewSectionReader(r, prev.start, full)
			line, ok, err := readHead(sr, full, true)
			if err != nil {
				return err
			}
			h := "" // the hash of the session before, read once if a run's length is its
			for _, c := range l.ByHead(sum(line)) {
				if !ok || c.Offset != full {
					continue
				}
				if h == "" {
					if h, err = hashPrefix(sr, full); err != nil {
						return err
					}
				}
				if held = h == c.SHA256; held {
					break
				}
			}
		}
		if !held {
			prev.end -= lead
			secs[i].start -= lead
		}
	}
	return nil
}

// sectionPath is the path session n (1-based) of a sections file goes
// by, in the ledger, the outcomes and run.started's "source".
func sectionPath(file string, n int) string { return file + "#" + strconv.Itoa(n) }

// sectionOf splits a section path into its file and number.
func sectionOf(p string) (file string, n int, ok bool) {
	i := strings.LastIndexByte(p, '#')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(p[i+1:])
	if err != nil || n < 1 || strconv.Itoa(n) != p[i+1:] {
		return "", 0, false
	}
	return p[:i], n, true
}

// sectionFile is one session of a sections file, read as a file of its
// own.
type sectionFile struct {
	*io.SectionReader
	name string
}

func (s sectionFile) Name() string { return s.name }

// startTime is the date a session's start line gives right after the
// store's prefix: RFC 3339, or "2006-01-02 15:04:05" in the local time
// zone (Aider writes its local time); zero when there is none.
func startTime(line []byte, prefix string) time.Time {
	rest, ok := bytes.CutPrefix(line, []byte(prefix))
	if !ok {
		return time.Time{}
	}
	s := strings.TrimSpace(string(rest))
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	if len(s) >= len(time.DateTime) {
		if t, err := time.ParseInLocation(time.DateTime, s[:len(time.DateTime)], time.Local); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// SyncSections archives what is new in every session of a sections
// store's file, one run per session (see the package doc, "Sections
// stores"): paths are the sessions found (sectionPath).
func (a *Archiver) SyncSections(ctx context.Context, s Session) (outs []Outcome, paths []string) {
	loc := s.Loc
	fail := func(err error) ([]Outcome, []string) {
		return []Outcome{{Path: s.Path, Provider: loc.Provider, Action: ActionFailed, Reason: err.Error(), DryRun: a.opts.DryRun}}, nil
	}
	a.recoverFirst(ctx)
	if newOwnStorage(a.opts.Store.Root).contains(s.Path) {
		return fail(fmt.Errorf("%s is in twasm's own storage %s: a transcript or capture of twasm, not an agent's session", s.Path, a.opts.Store.Root))
	}
	file, err := regfile.Open(s.Path)
	if err != nil {
		return fail(err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fail(err)
	}
	var f io.ReaderAt = file
	if a.opts.sectionsRead != nil {
		f = a.opts.sectionsRead(file)
	}
	size, mtime := st.Size(), st.ModTime()
	settled := a.opts.Whole || a.opts.Now().Sub(mtime) >= a.opts.Settle
	end := size
	if !settled {
		// A line still being written waits for the next sync.
		if end, err = completeEnd(f, size); err != nil {
			return fail(err)
		}
	}
	// A file that grew is split from the start of the last session
	// known (sectionsKnown); the sessions before it are not read.
	known, from, err := a.sectionsKnown(f, s.Path, loc.Provider, end)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", s.Path, err))
	}
	secs, err := splitSections(io.NewSectionReader(f, from, end-from), end-from, loc.SessionStart)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", s.Path, err))
	}
	for i := range secs {
		secs[i].start += from
		secs[i].end += from
	}
	if err := placeBlanks(a.ledger, f, secs); err != nil {
		return fail(fmt.Errorf("%s: %w", s.Path, err))
	}
	for _, e := range known {
		paths = append(paths, e.Path)
		outs = append(outs, Outcome{Path: e.Path, Provider: loc.Provider, Action: ActionUnchanged, RunID: e.RunID, DryRun: a.opts.DryRun,
			Reason: "nothing new: a session before the last one known, not read again (the file grew)"})
	}
	for i, sec := range secs {
		vp := sectionPath(s.Path, len(known)+i+1)
		paths = append(paths, vp)
		if ctx.Err() != nil {
			continue
		}
		out := Outcome{Path: vp, Provider: loc.Provider, DryRun: a.opts.DryRun}
		sf := sectionFile{SectionReader: io.NewSectionReader(f, sec.start, sec.end-sec.start), name: vp}
		outs = append(outs, a.syncOpened(ctx, out, "", openedSession{f: sf, size: sec.end - sec.start, mtime: mtime, settled: true,
			start: startTime(sec.line, loc.SessionStart)}, loc, ""))
	}
	if len(secs) == 0 {
		outs = append(outs, Outcome{Path: s.Path, Provider: loc.Provider, Action: ActionPending, Reason: "no complete line yet", DryRun: a.opts.DryRun})
	}
	return outs, paths
}

// sectionsKnown returns the sessions of the sections file at path that
// a file that grew since the last sync still holds unchanged, all but
// the last one known, and where that last one starts: the split starts
// there, and they are not read again. They are the runs of path#1 to
// path#k, each but the last holding its session whole (Offset equals the
// session's length, Size), so the last starts at the sum of their
// lengths; the file still starts with the first one's head (its first
// lines, at most 64 KiB read), and the last one's bytes its run holds
// are still there, where it starts (their sha256). Anything else (a file
// rewritten or cut, a ledger that does not know the sessions, a part
// pending, fewer than two sessions known) returns none, and the file is
// split whole. An edit that keeps every earlier session's length, the
// first session's head and the last one's bytes is not seen (as an
// unchanged size and mtime is not, for any file).
func (a *Archiver) sectionsKnown(f io.ReaderAt, path, provider string, end int64) (known []*Entry, from int64, err error) {
	if a.opts.sectionsWhole || a.opts.CloseIdle >= 0 && !a.opts.CloseWrittenOnly {
		// An unchanged session's run may be due to end: every session
		// is looked at.
		return nil, 0, nil
	}
	var es []*Entry
	for n := 1; ; n++ {
		e := a.ledger.ByPath(sectionPath(path, n))
		if e == nil {
			break
		}
		if e.Provider != provider || e.Pending || e.Parts == 0 || e.Size < 0 || e.Offset > e.Size {
			return nil, 0, nil
		}
		es = append(es, e)
	}
	if len(es) < 2 {
		return nil, 0, nil
	}
	for _, e := range es[:len(es)-1] {
		if e.Offset != e.Size {
			return nil, 0, nil
		}
		from += e.Size
	}
	last := es[len(es)-1]
	if from+last.Offset > end {
		return nil, 0, nil
	}
	n := min(es[0].Size, 64<<10)
	line, ok, err := readHead(io.NewSectionReader(f, 0, n), n, true)
	if err != nil || !ok || len(line) < minHead && n < es[0].Size || sum(line) != es[0].Head {
		return nil, 0, err
	}
	h, err := hashPrefix(io.NewSectionReader(f, from, last.Offset), last.Offset)
	if err != nil || h != last.SHA256 {
		return nil, 0, err
	}
	return es[:len(es)-1], from, nil
}

// SectionsStore is the sections store (abi.StoreKindSections) among
// declared that a file of provider is read as when it is imported: the
// provider's store whose pattern matches the file's name, else its first
// such store (a history file may be imported under another name). ok is
// false when the provider keeps no sessions that way. The store is
// resolved at the file's directory, which is also its project when the
// store is kept in every project directory (abi.Root.Projects).
func SectionsStore(declared []Declared, provider, path string) (loc Location, ok bool) {
	var first *Declared
	for i := range declared {
		d := &declared[i]
		if d.Provider != provider || d.Kind != KindSections || d.SessionStart == "" {
			continue
		}
		if re, err := globRegexp(d.Pattern); err == nil && re.MatchString(filepath.Base(path)) {
			first = d
			break
		}
		if first == nil {
			first = d
		}
	}
	if first == nil {
		return Location{}, false
	}
	loc = declaredLocation(*first, compileStore(*first), filepath.Dir(path), "import")
	loc.Dir = filepath.Dir(path)
	if projectsRoot(first.Roots) {
		// A store kept in each project directory (Aider's history): the
		// file's directory is the project, as sync's location of it says.
		loc.Project = loc.Dir
	}
	return loc, loc.Unusable == ""
}

// syncSection archives session n of a sections file alone (a part a
// killed sync left unfinished, continued by Recover).
func (a *Archiver) syncSection(ctx context.Context, provider, path, prefix string, loc *Location) Outcome {
	file, n, _ := sectionOf(path)
	out := Outcome{Path: path, Provider: provider, DryRun: a.opts.DryRun}
	f, err := regfile.Open(file)
	if err != nil {
		out.Action, out.Reason = ActionFailed, err.Error()
		return out
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil {
		var end int64
		if end, err = completeEnd(f, st.Size()); err == nil {
			var secs []section
			if secs, err = splitSections(f, end, prefix); err == nil && n > len(secs) {
				err = fmt.Errorf("%s holds %d session(s), not %d", file, len(secs), n)
			}
			if err == nil {
				err = placeBlanks(a.ledger, f, secs)
			}
			if err == nil {
				sec := secs[n-1]
				sf := sectionFile{SectionReader: io.NewSectionReader(f, sec.start, sec.end-sec.start), name: path}
				return a.syncOpened(ctx, out, "", openedSession{f: sf, size: sec.end - sec.start, mtime: st.ModTime(), settled: true,
					start: startTime(sec.line, prefix)}, loc, "")
			}
		}
	}
	out.Action, out.Reason = ActionFailed, err.Error()
	return out
}

// ExpandSections replaces each file of a sections store among sessions
// by the sessions it holds (what doctor counts): Path is a session's
// sectionPath and Size its length, so that a ledger entry whose Offset
// reached Size holds all of it; l (nil: none) places each blank line
// before a start line as sync does (placeBlanks). The stores' session
// counts follow.
func ExpandSections(stores []StoreReport, sessions []Session, l *Ledger) ([]StoreReport, []Session) {
	byKey := map[string]int{}
	for i := range stores {
		byKey[stores[i].Key()] = i
	}
	var out []Session
	for _, s := range sessions {
		if s.Loc.Kind != KindSections {
			out = append(out, s)
			continue
		}
		i, ok := byKey[s.Loc.Key()]
		secs, err := readSections(s.Path, s.Loc.SessionStart, l)
		if ok {
			stores[i].Sessions += len(secs) - 1
			if err != nil {
				stores[i].Problems = append(stores[i].Problems, err.Error())
			}
		}
		for j, sec := range secs {
			out = append(out, Session{Loc: s.Loc, Path: sectionPath(s.Path, j+1), Size: sec.end - sec.start, ModTime: s.ModTime})
		}
	}
	return stores, out
}

func readSections(path, prefix string, l *Ledger) ([]section, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end, err := completeEnd(f, st.Size())
	if err != nil {
		return nil, err
	}
	secs, err := splitSections(f, end, prefix)
	if err == nil {
		err = placeBlanks(l, f, secs)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return secs, nil
}

// walkSections lists the files of a sections store. A pattern that does
// not cross directories ("**") is looked up, not walked: a store in each
// project directory never walks a project's tree.
func walkSections(loc *Location) (sessions []Session, problems []string, err error) {
	if strings.Contains(loc.Pattern, "**") {
		return walkFiles(loc)
	}
	matches, err := filepath.Glob(filepath.Join(loc.Dir, filepath.FromSlash(loc.Pattern)))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", loc.Dir, err)
	}
	for _, p := range matches {
		rel, rerr := filepath.Rel(loc.Dir, p)
		if rerr != nil || !loc.Match(filepath.ToSlash(rel)) {
			continue
		}
		info, serr := os.Lstat(p)
		if serr != nil {
			problems = append(problems, serr.Error())
			continue
		}
		if !info.Mode().IsRegular() {
			continue
		}
		sessions = append(sessions, Session{Loc: loc, Path: p, Size: info.Size(), ModTime: info.ModTime()})
	}
	return sessions, problems, nil
}
