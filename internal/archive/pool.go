package archive

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// A sync archives sessions in parallel, on Options.Workers goroutines.
// Two sessions may touch the same run only when they have the same
// content head (the same session found at two paths), the same path, or
// when one is a sub-agent's file of the other; and a SQLite, folder,
// tree or keyed file store's sessions link to each other (a sub-agent's
// session, a tree session or a keyed file the database holds). So the sessions are cut into chains
// (chainsOf): the sessions of a chain are archived one after the other,
// in the sync's order, by one worker; different chains touch different
// runs and ledger entries and run at once. Whatever the workers' timing,
// each chain does what a sync of its sessions alone, in order, would do,
// and the outcomes are reported in the sync's order. Inside a chain, a
// database's sessions, each a run of its own, are archived on the
// workers too once their rows are read (writeRows), a sub-agent's session
// after its parent's.

// Workers is how many sessions a sync archives at once: Options.Workers,
// else GOMAXPROCS.
func (a *Archiver) Workers() int { return a.workers() }

// workers is how many sessions a sync archives at once.
func (a *Archiver) workers() int {
	if a.opts.Workers > 0 {
		return a.opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// chains are the sessions of a sync cut into chains: chain c is
// idx[start[c]:start[c+1]], indexes of sessions. Held in two slices, not
// a slice per chain (most chains are one session: 32 bytes a session
// less).
type chains struct {
	idx, start []int32
}

func (c chains) len() int            { return len(c.start) - 1 }
func (c chains) chain(k int) []int32 { return c.idx[c.start[k]:c.start[k+1]] }

// chainsOf cuts the sessions (in the sync's order) into chains of
// indexes, each in that order, the chains ordered by their first
// session.
func (a *Archiver) chainsOf(sessions []Session) chains {
	parent := make([]int, len(sessions))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	// A key is what two sessions share to be in one chain: a path, a
	// head, or being in the stores linked by key (kind 'p', 'h', 'l'),
	// not a string made for each.
	type chainKey struct {
		kind byte
		s    string
	}
	owner := make(map[chainKey]int, len(sessions))
	join := func(i int, key chainKey) {
		if j, ok := owner[key]; ok {
			ri, rj := find(i), find(j)
			if ri != rj {
				parent[max(ri, rj)] = min(ri, rj)
			}
			return
		}
		owner[key] = i
	}
	for i, s := range sessions {
		if s.Loc == nil || s.Loc.Kind == abi.StoreKindSQLite || s.Loc.Kind == KindSections || s.Loc.manyFiles() || s.Loc.Keyed {
			join(i, chainKey{'l', ""})
			continue
		}
		join(i, chainKey{'p', s.Path})
		if s.Parent != "" {
			join(i, chainKey{'p', s.Parent})
		}
		for _, h := range a.headsOf(s) {
			join(i, chainKey{'h', h})
		}
	}
	// Each root's chain, numbered by its first session (parent is
	// reused for it), then each chain's sessions placed in order.
	of := parent
	for i := range sessions {
		of[i] = find(i)
	}
	c := chains{idx: make([]int32, len(sessions)), start: []int32{0}}
	num := make([]int32, len(sessions)) // a root's chain + 1 (0: none yet)
	var size []int32
	for _, r := range of {
		if num[r] == 0 {
			size = append(size, 0)
			num[r] = int32(len(size))
		}
		size[num[r]-1]++
	}
	for _, n := range size {
		c.start = append(c.start, c.start[len(c.start)-1]+n)
	}
	next := slices.Clone(c.start[:len(size)])
	for i, r := range of {
		k := num[r] - 1
		c.idx[next[k]] = int32(i)
		next[k]++
	}
	return c
}

// headsOf are the content heads by which a session file may be matched
// to a run: its own (as syncFile reads it), and that of the run last
// synced from its path (a head that grew is matched by path). None when
// the file is unchanged since the last sync (size and mtime) or has no
// complete line yet: it is then matched by path only.
func (a *Archiver) headsOf(s Session) []string {
	var heads []string
	if e, ok := a.ledger.seenAt(s.Path); ok {
		if e.size == s.Size && e.mtime == s.ModTime.UnixNano() {
			return nil
		}
		heads = append(heads, e.head())
	} else if s.Parent == "" && a.ledger.CopyAt(s.Path, s.Size, s.ModTime) != nil {
		return nil
	}
	f, err := regfile.Open(s.Path)
	if err != nil {
		return heads
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return heads
	}
	settled := a.opts.Whole || a.opts.Now().Sub(st.ModTime()) >= a.opts.Settle
	if line, ok, err := readHead(f, st.Size(), settled); err == nil && ok {
		heads = append(heads, sum(line))
	}
	return heads
}

// sessionResult is what archiving one session of a sync gave: its
// outcomes, and for a database the session paths it listed (complete:
// the listing was whole).
type sessionResult struct {
	outs     []Outcome
	paths    []string
	complete bool
}

// syncParallel archives the sessions on the archiver's workers, chain by
// chain (chainsOf), and calls emit with each session's result in the
// sessions' order, from one goroutine at a time, as soon as it and every
// session before it are done. A session not begun when ctx is done has
// no result. It returns once every worker has stopped.
func (a *Archiver) syncParallel(ctx context.Context, sessions []Session, emit func(i int, r *sessionResult)) {
	// results are the sessions finished and not emitted yet (a few:
	// those that finished before an earlier one), dropped once emitted.
	results := map[int]*sessionResult{}
	var mu sync.Mutex // results, next, and emit
	next := 0
	finished := func(i int, r sessionResult) {
		mu.Lock()
		defer mu.Unlock()
		results[i] = &r
		for ; next < len(sessions); next++ {
			r, ok := results[next]
			if !ok {
				break
			}
			delete(results, next)
			emit(next, r)
		}
	}
	chains := a.chainsOf(sessions)
	work := make(chan []int32)
	var wg sync.WaitGroup
	for range min(a.workers(), chains.len()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chain := range work {
				for _, j := range chain {
					i := int(j)
					if ctx.Err() != nil {
						break
					}
					if a.sessionHook != nil {
						a.sessionHook(i, false)
					}
					r := a.syncOne(ctx, sessions[i])
					if a.sessionHook != nil {
						a.sessionHook(i, true)
					}
					finished(i, r)
				}
			}
		}()
	}
	for k := range chains.len() {
		if ctx.Err() != nil {
			break
		}
		work <- chains.chain(k)
	}
	close(work)
	wg.Wait()
	// Sessions after one that was never begun (ctx done): emitted in
	// order, the gaps skipped.
	mu.Lock()
	defer mu.Unlock()
	for ; next < len(sessions); next++ {
		if r, ok := results[next]; ok {
			delete(results, next)
			emit(next, r)
		}
	}
}

// syncOne archives one session of a sync.
func (a *Archiver) syncOne(ctx context.Context, s Session) sessionResult {
	if s.Loc != nil && s.Loc.Kind == abi.StoreKindSQLite {
		outs, paths, complete := a.SyncDatabase(ctx, s)
		return sessionResult{outs: outs, paths: paths, complete: complete}
	}
	if s.Loc != nil && s.Loc.Kind == KindSections {
		outs, paths := a.SyncSections(ctx, s)
		return sessionResult{outs: outs, paths: paths, complete: true}
	}
	return sessionResult{outs: []Outcome{a.SyncSession(ctx, s)}}
}
