package synccmd

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// What a sync's soft memory limit (workLimit) allows above the live
// heap: limitHeadroom for the runtime's own memory and the garbage
// between collections, limitPerWorker for each session archived at once
// (its file's read buffers, the plugin's stream, the transcript being
// written and the raw capture's zstd encoder).
//
// Measured on a first sync of a home of 2,000 sessions (395 MiB) with 2
// workers: the live heap is about 1 MiB when archiving starts, 12-18 MiB
// while it archives, 8 MiB when it ends (the ledger and what the sync
// reports, about 3.5 KiB a session) and about 10 during the index
// build; under the process's limit of 64 MiB the heap reached 36 MiB
// (GOGC=100), and the peak RSS 66-72 MB, 20-25 of it the binary's pages.
const (
	limitHeadroom  = 14 << 20
	limitPerWorker = 6 << 20
)

// workLimit is the Go heap's soft memory limit while a sync archives and
// indexes: the live heap when archiving starts, limitHeadroom, and
// limitPerWorker for each of the archiver's workers; raised as the
// sessions are archived (follow) so that it stays limitHeadroom above
// the live heap, which grows with every session the sync keeps in its
// ledger and report. The process's limit (cmd/twasm, 64 MiB) is sized
// for a recording: it leaves a first sync's heap twice its live size at
// the end of archiving, where its peak RSS was, and a lower one for the
// whole process would have the collector run without end on a machine
// of many cores or a home of many sessions, whose live heap grows past
// it. It is set once archiving starts (after the listing, whose heap
// listingGC lets grow), and the process's limit is restored when the
// round ends. A limit the user set (GOMEMLIMIT) is left as it is.
type workLimit struct {
	mu      sync.Mutex
	keep    bool  // GOMEMLIMIT set: never change the limit
	workers int   // armed for a round when > 0
	old     int64 // the limit before apply
	limit   int64 // the limit set
	set     bool
}

// archiving is what a sync does when a plugin is first looked up to
// archive a session: the listing is over, the collector's setting is
// given back (listingGC) and the round's limit is set (workLimit).
func archiving(gc *listingGC, mem *workLimit) func() {
	return func() {
		gc.lower()
		mem.apply()
	}
}

// arm makes the next apply set a limit for workers workers.
func (w *workLimit) arm(workers int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.workers = workers
}

// apply sets the limit, once per arm: from the live heap after a
// collection, so that what the listing left as garbage is not counted.
func (w *workLimit) apply() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keep || w.workers <= 0 || w.set {
		return
	}
	runtime.GC()
	w.limit = limitFor(liveHeap(), w.workers)
	w.old = debug.SetMemoryLimit(w.limit)
	w.set = true
}

// follow raises the limit, once set, to limitHeadroom above the live
// heap the last collection found, when that is higher: the collector
// then always has that much room, and never runs without end for a
// limit the sync's heap outgrew. Sync calls it as each session's
// outcome is reported.
func (w *workLimit) follow() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.set {
		return
	}
	if l := followed(w.limit, liveHeap()); l != w.limit {
		w.limit = l
		debug.SetMemoryLimit(l)
	}
}

// followed is the limit, after limit, for a live heap of live bytes.
func followed(limit int64, live uint64) int64 {
	return max(limit, int64(live)+limitHeadroom)
}

// restore puts back the limit apply replaced and disarms.
func (w *workLimit) restore() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set {
		debug.SetMemoryLimit(w.old)
		w.set = false
	}
	w.workers = 0
}

// limitFor is the limit for a live heap of live bytes and workers
// workers.
func limitFor(live uint64, workers int) int64 {
	return int64(live) + limitHeadroom + int64(max(workers, 1))*limitPerWorker
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
