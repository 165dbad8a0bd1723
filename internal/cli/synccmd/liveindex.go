package synccmd

import (
	"context"
	"errors"
	"sync"
)

// RunIndexer brings runs into the search index (index.Index).
type RunIndexer interface {
	UpdateRuns(ctx context.Context, runIDs []string) error
	Close() error
}

// liveBatch is how many written runs the live indexer gathers before it
// indexes them in one transaction, unless the round ends first: each
// transaction flushes its terms into a new FTS5 segment, so runs are
// indexed a batch at a time rather than one by one.
const liveBatch = 64

// liveCacheKiB is the page cache of the live indexer's connection, and
// liveIndexReserve what the archiving's heap limit leaves for the
// indexer's SQLite memory, which is outside Go's heap (its page cache,
// FTS5's pending terms, its statements). Measured with
// BenchmarkSyncFirstHome (2,000 sessions, 395 MiB, 2 cores): the index
// built after the archiving peaked at 61.5-62.8 MiB RSS (64.4 once on a
// loaded machine); indexing beside it with the index's own 2,000 KiB
// cache and the limit unchanged, 66-68 MiB, above #31's 64; with 500 KiB
// and 3 MiB reserved, 63.2-64.3; with these, 63.7-64.1, within what the
// serial build measured under the same load.
//
// livePendingKiB is the budget of FTS5's pending terms the live indexer
// takes (index.Index.SetPendingKiB): FTS5's own 1 MiB, which the
// figures above were measured with, not the 4 MiB a command that only
// reads takes (about 8 MiB more RSS).
const (
	liveCacheKiB     = 256
	liveIndexReserve = 5 << 20
	livePendingKiB   = 1024
)

// liveIndex indexes the runs a sync round writes while the round goes
// on, on a goroutine of its own, so that the index of a first sync of a
// whole home is built beside the archiving instead of after the last
// session (the cores the workers leave idle at the end of a round, and
// between their fsyncs, do it). It is an optimisation only: the round's
// Indexed (the index brought up to date from its change journal) still
// runs after the round and finds what this one did not index; an error
// here is said by that one, or not at all when that one succeeds.
//
// The index is opened when the first run is written, never for a round
// that writes nothing (a re-sync with nothing new costs no index open).
// A run written again after it was indexed (a session's run ended after
// its sub-agents' files) is indexed again: the index reads what a file
// gained since it last read it.
type liveIndex struct {
	open func(ctx context.Context) (RunIndexer, error)

	mu      sync.Mutex
	pending []string
	started bool
	ending  bool
	err     error

	wake chan struct{} // a batch is ready, or the round ended
	done chan struct{} // closed when the goroutine returns
}

// newLiveIndex returns a live indexer that opens its index with open;
// nil open gives an indexer that does nothing.
func newLiveIndex(open func(ctx context.Context) (RunIndexer, error)) *liveIndex {
	return &liveIndex{open: open, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// written notes a run the round wrote; the first starts the goroutine
// (with ctx, which it outlives only until finish).
func (l *liveIndex) written(ctx context.Context, runID string) {
	if l.open == nil {
		return
	}
	l.mu.Lock()
	if l.ending {
		l.mu.Unlock()
		return
	}
	l.pending = append(l.pending, runID)
	start, ready := !l.started, len(l.pending) >= liveBatch
	l.started = true
	l.mu.Unlock()
	if start {
		go l.run(context.WithoutCancel(ctx))
	}
	if ready {
		l.signal()
	}
}

func (l *liveIndex) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns the runs waiting and whether the round has ended.
func (l *liveIndex) take() ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.pending
	l.pending = nil
	return ids, l.ending
}

func (l *liveIndex) run(ctx context.Context) {
	defer close(l.done)
	ix, err := l.open(ctx)
	if err != nil {
		l.fail(err)
		return
	}
	defer func() { l.fail(ix.Close()) }()
	for {
		<-l.wake
		ids, ending := l.take()
		if ending {
			// The round's own update (Indexed) indexes what is left, in
			// one transaction: nothing is gained by doing it here. Whole
			// batches the goroutine had not reached yet (the index still
			// opening when they filled) are indexed, as if it had.
			ids = ids[:len(ids)/liveBatch*liveBatch]
			if len(ids) > 0 {
				l.fail(ix.UpdateRuns(ctx, ids))
			}
			return
		}
		if len(ids) == 0 {
			continue
		}
		if err := ix.UpdateRuns(ctx, ids); err != nil {
			l.fail(err)
			return
		}
	}
}

func (l *liveIndex) fail(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	l.err = errors.Join(l.err, err)
	l.mu.Unlock()
}

// finish ends the live indexing and waits for the batch under way: the
// round's own update then runs alone on the index. It returns what went
// wrong, for the log.
func (l *liveIndex) finish() error {
	l.mu.Lock()
	l.ending = true
	started := l.started
	l.mu.Unlock()
	if !started {
		return nil
	}
	l.signal()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
