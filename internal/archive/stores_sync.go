package archive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twasm/twasm/abi"
)

// StoreReport is one store as a sync or doctor found it.
type StoreReport struct {
	Location
	Found bool `json:"found"`
	// Sessions counts the store's sessions; SubAgents the sub-agent files
	// beside them (Location.SubAgents: each archived as a child run of
	// its session's, not a session of its own).
	Sessions  int      `json:"sessions"`
	SubAgents int      `json:"sub_agents,omitempty"`
	Problems  []string `json:"problems,omitempty"`
}

// Report is what a sync did.
type Report struct {
	Stores []StoreReport `json:"stores"`
	// Outcomes are every session's outcome, in the order given to
	// progress; with Options.Streamed, only the failed and damaged ones.
	Outcomes []Outcome      `json:"-"`
	Counts   map[string]int `json:"counts"`
	// Bytes is how many source bytes were archived.
	Bytes int64 `json:"bytes"`

	streamed bool // Options.Streamed
}

// Scan walks every location and returns the session files modified at or
// after since (zero: all), with each store's report; a sub-agent file
// found beside its session (Location.SubAgents) has its Parent set and
// is counted in the report's SubAgents, not its Sessions.
func Scan(locs []Location, since time.Time) ([]StoreReport, []Session) {
	var stores []StoreReport
	var all []Session
	// The files found, for the stores read through a list (none: no
	// need to keep them).
	var found map[string]bool
	if slices.ContainsFunc(locs, func(l Location) bool { return l.listed }) {
		found = map[string]bool{}
	}
	for i := range locs {
		loc := &locs[i]
		sr := StoreReport{Location: *loc}
		if loc.Unusable != "" {
			sr.Problems = []string{loc.Unusable}
			stores = append(stores, sr)
			continue
		}
		sessions, problems, err := Walk(loc)
		if loc.listed {
			// A file another store found is that store's, not read
			// again through a list.
			sessions = slices.DeleteFunc(sessions, func(s Session) bool { return found[s.Path] })
		}
		if found != nil {
			for _, s := range sessions {
				found[s.Path] = true
			}
		}
		sr.Problems = append(slices.Clone(loc.Notes), problems...)
		switch {
		case errors.Is(err, ErrStoreMissing):
		case err != nil:
			sr.Problems = append(sr.Problems, err.Error())
		default:
			sr.Found = true
		}
		dirs := newSessionDirs()
		for i := range sessions {
			if loc.subAgents != nil {
				sessions[i].Parent = parentSession(loc, sessions[i].Path, dirs)
			}
			if sessions[i].Parent != "" {
				sr.SubAgents++
			} else {
				sr.Sessions++
			}
		}
		for _, s := range sessions {
			// A database's sessions are each dated by their cursor, not
			// by the file's mtime (a WAL database's file is older than
			// its latest writes): it is always looked at.
			if since.IsZero() || !s.ModTime.Before(since) || loc.Kind == abi.StoreKindSQLite {
				all = append(all, s)
			}
		}
		stores = append(stores, sr)
	}
	return stores, all
}

// SyncStores archives what is new in every session of the locations,
// several at once (Options.Workers; see chainsOf), calling progress with
// each file's outcomes in the sessions' order, then ends the runs of
// sessions the agents deleted from stores that are still there.
func (a *Archiver) SyncStores(ctx context.Context, locs []Location, since time.Time, progress func(done, total int, o *Outcome)) Report {
	a.sessions = nil // read again in each sync
	defer func() { a.sessions = nil }()
	if a.named != nil {
		a.named.parts = nil // noted by this sync only
	}
	stores, sessions := Scan(locs, since)
	sessions = a.own.without(a.opts.Store.Root, stores, sessions)
	a.namedSubAgents(sessions)
	sessions = keyedLast(withSubAgents(parentsFirst(sessions)))
	// The runs of the paths listed are under a store found, and found:
	// archivedFrom and closeGone read the paths of the others only.
	a.ledger.markListed(sessions)
	var gone []string
	for _, s := range stores {
		if !s.Found {
			gone = append(gone, s.Dir)
		}
	}
	counts := a.archivedFrom(gone)
	for i := range stores {
		if n := counts[stores[i].Dir]; !stores[i].Found && n > 0 {
			stores[i].Problems = append(stores[i].Problems, fmt.Sprintf(
				"the store %s is gone; the %d session(s) archived from it keep their runs as they are (an open run is not ended: the store may come back)", stores[i].Dir, n))
		}
	}
	rep := Report{Stores: stores, Counts: map[string]int{}, streamed: a.opts.Streamed}
	if !rep.streamed {
		rep.Outcomes = make([]Outcome, 0, len(sessions))
	}
	present := presentOf(sessions)
	a.recoverFirst(ctx) // before any worker starts
	wrote := 0
	a.syncParallel(ctx, sessions, func(i int, r *sessionResult) {
		s := sessions[i]
		for _, p := range r.paths {
			present.add(p)
		}
		if s.Loc.Kind == abi.StoreKindSQLite && !r.complete {
			// A listing cut short: no session of this database is
			// taken for deleted.
			a.ledger.where(func(path string, _ bool) bool {
				if strings.HasPrefix(path, s.Path+"#") {
					present.add(path)
				}
				return false
			})
		}
		for _, o := range r.outs {
			if o.Result != nil {
				wrote++
			}
			rep.add(o)
			if progress != nil {
				progress(i+1, len(sessions), &o)
			}
		}
	})
	// The sub-tasks the parts archived name (abi.StoreParent.Result),
	// linked once every session is done, on this goroutine alone (and,
	// once per storage, those the runs an older twasm archived name).
	markers := a.noteArchivedNamers(locs)
	for _, o := range a.linkNamed(ctx) {
		present.add(o.Path)
		if o.Result != nil {
			wrote++
		}
		rep.add(o)
		if progress != nil {
			progress(len(sessions), len(sessions), &o)
		}
	}
	for _, marker := range markers {
		if ctx.Err() != nil {
			break
		}
		if err := os.WriteFile(marker, nil, 0o600); err != nil {
			a.opts.Logger.Warn("archive: sub-tasks looked at, not marked", "err", err)
		}
	}
	if wrote > 1 && a.workers() > 1 {
		// The workers appended to the ledger as they finished: its
		// lines are put in an order that does not depend on them.
		if err := a.ledger.rewrite(); err != nil {
			a.opts.Logger.Warn("archive: ledger not compacted", "err", err)
		}
	}
	if ctx.Err() == nil && since.IsZero() {
		var dirs []StoreDir
		for _, s := range stores {
			if s.Found {
				dirs = append(dirs, StoreDir{Provider: s.Provider, Dir: s.Dir})
			}
		}
		for _, o := range a.closeGone(ctx, present.has, dirs, whereOpen|whereUnlisted) {
			rep.add(o)
			if progress != nil {
				progress(len(sessions), len(sessions), &o)
			}
		}
	}
	return rep
}

// presence is the paths a sync found: its sessions' (looked up in
// their order by path, 4 bytes a session, instead of a map of every
// path) and those its sessions' archives named (a database's sessions,
// a file's sections).
type presence struct {
	sessions []Session
	byPath   []int32
	more     map[string]bool
}

func presentOf(sessions []Session) *presence {
	p := &presence{sessions: sessions, byPath: make([]int32, len(sessions)), more: map[string]bool{}}
	for i := range p.byPath {
		p.byPath[i] = int32(i)
	}
	slices.SortFunc(p.byPath, func(a, b int32) int { return strings.Compare(sessions[a].Path, sessions[b].Path) })
	return p
}

func (p *presence) add(path string) {
	if !p.has(path) {
		p.more[path] = true
	}
}

func (p *presence) has(path string) bool {
	_, found := slices.BinarySearchFunc(p.byPath, path, func(i int32, path string) int {
		return strings.Compare(p.sessions[i].Path, path)
	})
	return found || p.more[path]
}

func (r *Report) add(o Outcome) {
	if !r.streamed || o.Action == ActionFailed || o.Action == ActionDamaged {
		r.Outcomes = append(r.Outcomes, o)
	}
	r.Counts[o.Action]++
	if o.Action != ActionFailed {
		r.Bytes += o.Bytes
	}
}

// archivedFrom counts the sessions archived from files under each of
// dirs (stores not found), by directory, in one pass over the ledger
// (the runs of the paths this sync listed left out: they are under a
// store found): each entry's path is
// looked up by its parent directories (a sync finds most of the stores
// declared missing, and a pass per store cost a fifth of a sync with
// nothing new).
func (a *Archiver) archivedFrom(dirs []string) map[string]int {
	counts := make(map[string]int, len(dirs))
	if len(dirs) == 0 {
		return counts
	}
	for _, d := range dirs {
		counts[d] = 0
	}
	// The entries are counted by their file's directory first (most
	// share one: 2,470 runs in 700 directories), and each directory
	// then looked up by its parents once (a lookup by every parent of
	// every entry was 7% of a re-sync's CPU).
	byDir := map[string]int{}
	a.ledger.whereOf(whereUnlisted, func(path string, _ bool) bool {
		if i := strings.LastIndexByte(path, filepath.Separator); i >= 0 {
			byDir[path[:i]]++
		}
		return false
	})
	for d, n := range byDir {
		for i := len(d); i >= 0; i = strings.LastIndexByte(d[:i], filepath.Separator) {
			if c, ok := counts[d[:i]]; ok {
				counts[d[:i]] = c + n
			}
		}
	}
	return counts
}
