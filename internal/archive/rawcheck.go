package archive

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/transcript"
)

// RawDamage is a session run whose raw capture does not hold the bytes
// its session's source held when they were archived: each part's result
// states the sha256 of the source's bytes (PartRef.SHA256, hashed from the
// agent's file) beside the raw capture's size and sha256 (RawRef), so the
// capture is checked against what the file held, whether the file is
// still there or not. A twasm before 2873b2b wrote such captures for a
// session with a line longer than a read of 256 KiB (feedDated's chunk
// built in the array of the line's carry), and normalized the run's
// transcript from the same wrong bytes.
type RawDamage struct {
	RunID    string `json:"run_id"`
	Provider string `json:"provider"`
	// Path is the session's source (the ledger's), Raw the damaged raw
	// capture (relative to the storage root), Part the first part (the
	// agent step's iteration) whose bytes differ.
	Path   string `json:"path"`
	Raw    string `json:"raw"`
	Part   int    `json:"part"`
	Parent string `json:"parent_run_id,omitempty"`
	// Problem says what differs.
	Problem string `json:"problem"`
	// Differs, when the agent's file still holds the archived bytes, is
	// where the raw capture first differs from them; NotJSON, when it
	// does not, is the first line of the raw capture that is not a JSON
	// value (of a JSON Lines session), which is where such damage shows.
	Differs *RawSpot `json:"differs,omitempty"`
	NotJSON *RawSpot `json:"not_json,omitempty"`
	// Source is what became of the agent's file: SourceHolds,
	// SourceGone, SourceChanged or SourceNotCompared.
	Source string `json:"source"`
	// Repairable says whether `twasm sync --repair` archives the session
	// again from the agent's file (a new run that supersedes this one, or
	// for a sub-agent file's run, its session's run, Session); Repair says
	// what it does, or why it cannot.
	Repairable bool   `json:"repairable"`
	Repair     string `json:"repair"`
	Session    string `json:"session_run_id,omitempty"`
}

// RawSpot is a place in a session's bytes: its byte offset and its line
// (from 1).
type RawSpot struct {
	Byte int64 `json:"byte"`
	Line int   `json:"line"`
}

// What became of a damaged run's source (RawDamage.Source).
const (
	SourceHolds       = "holds"        // the file still starts with the bytes archived
	SourceGone        = "gone"         // the file is gone (or cannot be read)
	SourceChanged     = "changed"      // the file no longer starts with them
	SourceNotCompared = "not_compared" // a database's rows, an older file tree's, or a session of a file of many
)

// RawCheck is what CheckRaw found: the damaged runs, and how many runs it
// read and could not compare (a masked run's raw capture holds other
// bytes than its source by design).
type RawCheck struct {
	Damaged []RawDamage
	Checked int
	Masked  int
}

// partRec is one part of a run as its transcript states it.
type partRec struct {
	iter int
	src  PartRef
	raw  transcript.RawRef
}

// runParts reads a session run's transcript: its parts, in order, and the
// run that supersedes it ("" none). Only the lines of step.completed and
// run.completed events are decoded (a byte search finds them first): a
// check of every run reads every transcript.
func runParts(path string) (parts []partRec, supersededBy string, err error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	for {
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, "", rerr
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		if bytes.Contains(line, stepCompleted) || bytes.Contains(line, runCompleted) {
			var ev struct {
				Type      transcript.EventType `json:"type"`
				Iteration int                  `json:"iteration"`
				Payload   struct {
					Result       json.RawMessage `json:"result"`
					SupersededBy string          `json:"superseded_by"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &ev) == nil {
				switch ev.Type {
				case transcript.RunCompleted:
					supersededBy = ev.Payload.SupersededBy
				case transcript.StepCompleted:
					var res struct {
						Source *PartRef           `json:"source"`
						Raw    *transcript.RawRef `json:"raw"`
					}
					if len(ev.Payload.Result) > 0 && json.Unmarshal(ev.Payload.Result, &res) == nil && res.Source != nil && res.Raw != nil {
						parts = append(parts, partRec{iter: ev.Iteration, src: *res.Source, raw: *res.Raw})
					}
				}
			}
		}
		if rerr != nil {
			return parts, supersededBy, nil
		}
	}
}

var (
	stepCompleted = []byte(`"type":"` + string(transcript.StepCompleted) + `"`)
	runCompleted  = []byte(`"type":"` + string(transcript.RunCompleted) + `"`)
)

// CheckRaw checks the raw capture of every session run the ledger knows
// (every part of it, in order) against the bytes its source held: the
// bytes a part read of a file (after the facts line fed before them,
// when there is one) must hash to the part's source sha256, and a
// folder's or database session's part (a stream twasm made) must be that
// stream. The capture must also hold the bytes its parts' results say it
// holds (a capture changed on disk since is damaged too). Runs already
// superseded, and runs whose archive a killed sync left unfinished (the
// next sync settles them), are not checked.
//
// For a damaged run of a session file, the agent's file is opened
// read-only and compared byte for byte: where it still holds the bytes
// archived (its first bytes hash as the ledger says), the first byte that
// differs is given and the run can be archived again from it; otherwise
// the first line of the capture that is not JSON is given. A run whose
// sub-agent files' runs could not be archived again is not repairable:
// superseding it would leave their runs out of every count.
func CheckRaw(ctx context.Context, root string, l *Ledger) (RawCheck, error) {
	var out RawCheck
	entries := l.Entries()
	children := map[string][]Entry{}
	for _, e := range entries {
		if e.Parent != "" && e.SupersededBy == "" {
			children[e.Parent] = append(children[e.Parent], e)
		}
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if e.Parts == 0 || e.Pending || e.SupersededBy != "" || l.isInterrupted(e.RunID) {
			continue
		}
		parts, by, err := runParts(filepath.Join(root, "transcripts", e.RunID+".jsonl"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return out, fmt.Errorf("check raw captures: run %s: %w", e.RunID, err)
		}
		if by != "" || len(parts) == 0 {
			continue
		}
		out.Checked++
		d, masked, err := checkParts(root, e, parts, nil)
		if err != nil {
			return out, fmt.Errorf("check raw captures: run %s: %w", e.RunID, err)
		}
		if masked {
			out.Masked++
		}
		if d == nil {
			continue
		}
		locate(root, e, parts, d)
		out.Damaged = append(out.Damaged, *d)
	}
	for i := range out.Damaged {
		repairable(l, &out.Damaged[i], children)
	}
	sort.Slice(out.Damaged, func(i, j int) bool { return out.Damaged[i].RunID < out.Damaged[j].RunID })
	return out, nil
}

// checkParts reads a run's raw captures part by part (a new capture
// starts where a part names another: a rewritten document's version) and
// returns the first part whose bytes are not its source's (nil: none),
// and whether a part was masked (not comparable). cmp, when set, is fed
// the source's bytes as the capture holds them (the facts lines left
// out), in order, from the damaged part's capture's first byte.
func checkParts(root string, e Entry, parts []partRec, cmp io.Writer) (*RawDamage, bool, error) {
	var (
		cur     string
		rf      *rawfile.File
		rd      io.Reader
		pos     int64
		rawH    hash.Hash
		srcH    hash.Hash
		plain   bool // the capture holds the source's bytes alone: srcH is rawH
		srcN    int64
		masked  bool
		closeRF = func() {
			if rf != nil {
				rf.Close()
				rf = nil
			}
		}
	)
	defer closeRF()
	dmg := func(p partRec, problem string) *RawDamage {
		return &RawDamage{RunID: e.RunID, Provider: e.Provider, Path: e.Path, Raw: p.raw.Path, Part: p.iter, Parent: e.Parent, Problem: problem}
	}
	for _, p := range parts {
		if p.raw.Path != cur {
			closeRF()
			name, err := rawOf(root, e.RunID, p.raw.Path)
			if err != nil {
				return dmg(p, err.Error()), masked, nil
			}
			if rf, err = rawfile.Open(name); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return dmg(p, "the raw capture is missing"), masked, nil
				}
				return nil, masked, err
			}
			cur, rd, pos = p.raw.Path, rf.All(), 0
			rawH, srcH, srcN = sha256.New(), sha256.New(), 0
			plain = cmp == nil && plainChain(parts, cur)
		}
		n := p.raw.Bytes - pos
		if n < 0 {
			return dmg(p, fmt.Sprintf("part %d says its raw capture holds %d bytes, fewer than the part before it (%d)", p.iter, p.raw.Bytes, pos)), masked, nil
		}
		// Each byte is hashed as few times as the part's kind needs: a
		// file's capture without facts lines holds the file's bytes
		// alone (its hash is the capture's); a stream part (a folder's,
		// a database's) is hashed by itself.
		stream := len(p.src.Files) > 0 || isDBPartRef(p.src)
		var segH hash.Hash
		w := []io.Writer{rawH}
		if stream {
			segH = sha256.New()
			w = append(w, segH)
		}
		if !plain {
			w = append(w, &skipFacts{skip: len(p.src.Facts) > 0, h: srcH, n: &srcN, cmp: cmp})
		}
		m, err := io.CopyN(io.MultiWriter(w...), rd, n)
		pos += m
		if plain {
			srcH, srcN = rawH, pos
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return dmg(p, fmt.Sprintf("the raw capture holds %d bytes; part %d says it holds %d", pos, p.iter, p.raw.Bytes)), masked, nil
			}
			return dmg(p, fmt.Sprintf("the raw capture cannot be read past byte %d: %v", pos, err)), masked, nil
		}
		// A result that states no sha256 (none does today) cannot be
		// compared: it is taken as it is.
		rawOK := p.raw.SHA256 == "" || hex.EncodeToString(rawH.Sum(nil)) == p.raw.SHA256
		if p.src.Redact || p.src.SHA256 == "" {
			masked = masked || p.src.Redact
			if !rawOK {
				return dmg(p, fmt.Sprintf("the raw capture's first %d bytes changed since part %d was written (their sha256 is not the one it states)", pos, p.iter)), masked, nil
			}
			continue
		}
		segOK := segH != nil && hex.EncodeToString(segH.Sum(nil)) == p.src.SHA256
		fileOK := srcN == p.src.To && hex.EncodeToString(srcH.Sum(nil)) == p.src.SHA256
		switch {
		case (segOK || fileOK) && rawOK:
			continue
		case !rawOK:
			return dmg(p, fmt.Sprintf("the raw capture's first %d bytes changed since part %d was written (their sha256 is not the one it states)", pos, p.iter)), masked, nil
		case len(p.src.Files) > 0 || isDBPartRef(p.src):
			return dmg(p, fmt.Sprintf("part %d's bytes in the raw capture are not those it read (their sha256 is not the one its source states)", p.iter)), masked, nil
		case srcN != p.src.To:
			return dmg(p, fmt.Sprintf("the raw capture holds %d bytes of the source up to part %d, which read %d", srcN, p.iter, p.src.To)), masked, nil
		default:
			return dmg(p, fmt.Sprintf("the raw capture holds other bytes than the source's first %d, which part %d read (their sha256 differs)", p.src.To, p.iter)), masked, nil
		}
	}
	return nil, masked, nil
}

// plainChain reports whether every part of the capture raw is a part of
// a file without a facts line: the capture then holds the file's bytes
// alone.
func plainChain(parts []partRec, raw string) bool {
	for _, p := range parts {
		if p.raw.Path == raw && (len(p.src.Facts) > 0 || len(p.src.Files) > 0 || isDBPartRef(p.src)) {
			return false
		}
	}
	return true
}

// isDBPartRef reports whether a part's source is a database session's
// (its From and To are cursors, not offsets).
func isDBPartRef(p PartRef) bool { return strings.Contains(p.Path, "#") && len(p.Facts) > 0 }

// rawOf resolves a raw capture path of run runID ("raw/<run>/<name>")
// under the storage root; anything else is refused.
func rawOf(root, runID, rel string) (string, error) {
	name := filepath.Base(filepath.FromSlash(rel))
	if want := filepath.ToSlash(filepath.Join("raw", runID, name)); filepath.ToSlash(rel) != want || name == "." || name == ".." {
		return "", fmt.Errorf("raw capture %q is not one of run %s", rel, runID)
	}
	return filepath.Join(root, "raw", runID, name), nil
}

// skipFacts writes a part's bytes to h (counting them in n, and to cmp
// when set) without the facts line fed before them when skip is set.
type skipFacts struct {
	skip bool
	h    hash.Hash
	n    *int64
	cmp  io.Writer
}

func (s *skipFacts) Write(p []byte) (int, error) {
	all := len(p)
	if s.skip {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return all, nil
		}
		p, s.skip = p[i+1:], false
	}
	s.h.Write(p)
	*s.n += int64(len(p))
	if s.cmp != nil && len(p) > 0 {
		if _, err := s.cmp.Write(p); err != nil {
			return 0, err
		}
	}
	return all, nil
}

// locate says, for a damaged run of a session file, what became of the
// agent's file and where the capture differs: compared with the file
// (read-only) where it still holds the archived bytes, else the first
// line of the capture that is not JSON.
func locate(root string, e Entry, parts []partRec, d *RawDamage) {
	d.Source = SourceNotCompared
	var chain []partRec // the parts of the damaged part's capture
	for _, p := range parts {
		if p.raw.Path == d.Raw {
			chain = append(chain, p)
		}
	}
	if len(chain) > 0 && len(chain[0].src.Files) > 0 && !isTreeSession(&e) {
		// A session folder: its files hold what the run read of each.
		switch _, err := os.Stat(e.Path); {
		case errors.Is(err, fs.ErrNotExist):
			d.Source = SourceGone
		case holdsArchived(e):
			d.Source = SourceHolds
		default:
			d.Source = SourceChanged
		}
		return
	}
	if len(chain) == 0 || len(chain[0].src.Files) > 0 || isDBPartRef(chain[0].src) {
		return // a stream twasm made of a database's rows, a tree's files
	}
	lc := &lineCheck{line: 1}
	var cmp *fileCmp
	if !strings.Contains(e.Path, "#") {
		f, err := regfile.Open(e.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.Source = SourceGone
		case err != nil:
			d.Source = SourceGone
			d.Problem += "; the agent's file cannot be read: " + err.Error()
		default:
			defer f.Close()
			if h, err := hashPrefix(f, e.Offset); err == nil && h == e.SHA256 {
				d.Source = SourceHolds
				cmp = &fileCmp{f: f, line: 1, at: -1}
			} else {
				d.Source = SourceChanged
			}
		}
	}
	var w io.Writer = lc
	if cmp != nil {
		w = cmp
	}
	if _, _, err := checkParts(root, e, chain, w); err != nil {
		return
	}
	if cmp != nil && cmp.at >= 0 {
		d.Differs = &RawSpot{Byte: cmp.at, Line: cmp.line}
	}
	if cmp == nil && lc.bad > 0 && strings.EqualFold(filepath.Ext(e.Path), ".jsonl") {
		d.NotJSON = &RawSpot{Byte: lc.badAt, Line: lc.bad}
	}
}

// fileCmp compares the bytes written to it with the file's from its
// first byte: at is the first offset where they differ (-1: none yet),
// line that offset's line.
type fileCmp struct {
	f    io.ReaderAt
	off  int64
	at   int64
	line int
	buf  []byte
}

func (c *fileCmp) Write(p []byte) (int, error) {
	if c.at >= 0 {
		return len(p), nil
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	b := c.buf[:len(p)]
	n, _ := c.f.ReadAt(b, c.off)
	i := 0
	for i < n && b[i] == p[i] {
		i++
	}
	c.line += bytes.Count(p[:i], []byte("\n"))
	if i < len(p) {
		c.at = c.off + int64(i)
	}
	c.off += int64(len(p))
	return len(p), nil
}

// lineCheck finds the first line written to it that is not a JSON value
// (bad, from 1; 0: none), at byte badAt.
type lineCheck struct {
	pend  []byte
	off   int64
	line  int
	bad   int
	badAt int64
}

func (c *lineCheck) Write(p []byte) (int, error) {
	all := len(p)
	for c.bad == 0 && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.pend = append(c.pend, p...)
			break
		}
		line := p[:i]
		if len(c.pend) > 0 {
			line = append(c.pend, line...)
		}
		if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			c.bad, c.badAt = c.line, c.off
		}
		c.off += int64(len(line)) + 1
		c.line++
		c.pend = c.pend[:0]
		p = p[i+1:]
	}
	return all, nil
}

// repairable says whether and how `twasm sync --repair` archives a
// damaged run again: from the agent's file when it holds the bytes
// archived, as a new run of its session with the session's sub-agent
// files' runs (each again from its own file, each needing it). A damaged
// sub-agent file's run is repaired by archiving its session again, as
// its session's run is counted with its sub-runs: a new child run beside
// the old one would count the sub-agent twice.
func repairable(l *Ledger, d *RawDamage, children map[string][]Entry) {
	switch {
	case d.Source == SourceGone:
		d.Repair = "the agent's file is gone: the run is kept as it is; its transcript may be wrong from " + spotText(d)
		return
	case d.Source == SourceChanged:
		d.Repair = "the agent's file no longer starts with the bytes archived: the run is kept as it is; its transcript may be wrong from " + spotText(d)
		return
	case d.Source != SourceHolds:
		d.Repair = "not a session twasm can read again (a database's rows, an older file tree's files, or a session of a file of many): the run is kept as it is"
		return
	}
	root := l.byRun(d.RunID)
	for depth := 0; root != nil && root.Parent != "" && depth < 8; depth++ {
		root = l.byRun(root.Parent)
	}
	switch {
	case root == nil || root.Parent != "":
		d.Repair = "its session's run is not in the sync ledger: the run is kept as it is"
		return
	case root.SupersededBy != "":
		d.Repair = "its session's run " + root.RunID + " is superseded by run " + root.SupersededBy + ", which holds the session again: nothing to repair"
		return
	case root.RunID != d.RunID && !holdsArchived(*root):
		d.Repair = "its session's file " + root.Path + " (run " + root.RunID + ") no longer holds what its run holds: the run is kept as it is"
		return
	}
	for _, c := range children[root.RunID] {
		if !holdsArchived(c) {
			d.Repair = "the sub-agent file " + c.Path + " (run " + c.RunID + ") of its session no longer holds what its run holds: superseding the session's run would leave that run out of every count, so it is kept as it is"
			return
		}
	}
	d.Repairable, d.Session = true, root.RunID
	n := len(children[root.RunID])
	if root.RunID == d.RunID {
		d.Repair = "`twasm sync --repair` archives the session again from the agent's file, as a new run that supersedes this one"
		if n > 0 {
			d.Repair += fmt.Sprintf(", with its %d sub-agent file(s)", n)
		}
		return
	}
	d.Repair = fmt.Sprintf("`twasm sync --repair` archives its session (run %s, %s) again from the agent's files, as a new run with its %d sub-agent file(s)' runs, which supersedes run %s (a sub-agent's run is counted in its session's)",
		root.RunID, root.Path, n, root.RunID)
}

// spotText is where a damaged run's capture shows the damage, in words.
func spotText(d *RawDamage) string {
	if d.NotJSON != nil {
		return fmt.Sprintf("line %d (byte %d), the first line of its raw capture that is not JSON", d.NotJSON.Line, d.NotJSON.Byte)
	}
	return fmt.Sprintf("part %d", d.Part)
}

// holdsArchived reports whether the file a run was archived from still
// starts with the bytes the run holds (a session folder: each of its
// files, with the bytes the run holds of it).
func holdsArchived(e Entry) bool {
	if len(e.Files) > 0 && !isTreeSession(&e) {
		for _, st := range e.Files {
			if !holdsArchived(Entry{Path: filepath.Join(e.Path, filepath.FromSlash(st.Path)), Offset: st.Offset, SHA256: st.SHA256}) {
				return false
			}
		}
		return true
	}
	if strings.Contains(e.Path, "#") || len(e.Files) > 0 {
		return false
	}
	f, err := regfile.Open(e.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	h, err := hashPrefix(f, e.Offset)
	return err == nil && h == e.SHA256
}
