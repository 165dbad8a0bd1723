package synccmd

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"

	"github.com/twasm/twasm/internal/cli/cmdutil"
)

// The collector's settings for a sync's two phases (collector).
//
// listingGCPercent is GOGC while a sync only lists what is there: the
// plugins' manifests and stores, the ledger, the walk of every store and
// each file's size and mtime against the ledger. All of that is kept
// until the sync ends, so collecting while it grows marks the same live
// heap again and again, on the idle core too: at GOGC=100 the collector
// was a tenth of a re-sync with nothing new (2,000 sessions, about 8 MB
// allocated: 0.87x the CPU at GOGC=400).
//
// limitHeadroom and limitPerWorker are what the soft memory limit allows
// above the live heap while a sync archives and indexes: limitHeadroom
// for the runtime's own memory and the garbage between collections,
// limitPerWorker for each session archived at once (its file's read
// buffers, the plugin's stream, the transcript being written and the raw
// capture's zstd encoder). Measured on a first sync of a home of 2,000
// sessions (395 MiB) with 2 workers: the live heap is about 1 MiB when
// archiving starts, 12-18 MiB while it archives, 8 MiB when it ends (the
// ledger and what the sync reports, about 3.5 KiB a session; the report
// keeps no outcome since, about 1.1 KiB a session less) and about
// 10 during the index build; under the process's limit of 64 MiB the
// heap reached 36 MiB (GOGC=100), and the peak RSS 66-72 MB, 20-25 of it
// the binary's pages.
const (
	listingGCPercent = 400
	limitHeadroom    = 14 << 20
	limitPerWorker   = 6 << 20
)

// followWindow is how many collections the limit follows the live heap
// of: it is kept limitHeadroom above the least live heap of the last
// followWindow collections, not of the last one alone, so that a
// session in flight that swells the live heap for a moment (what
// limitPerWorker leaves room for) does not raise the limit for the rest
// of the round. On a first sync of 20,000 sessions one such moment (a
// live heap of 17 MiB among 11-13) raised it by 2 MiB, and the peak RSS
// with it.
const followWindow = 8

// collector holds what a sync changes of the Go collector's settings,
// which are the process's, and what it must give back. A round of a sync
// has three phases:
//
//   - listing (listing): GOGC is raised to listingGCPercent, since what
//     is listed is live until the sync ends. A GOGC the user set higher,
//     or off, is left as it is (cmdutil.GCRaise, which record uses too).
//     A soft memory limit of limitFor(live heap, 1 worker) bounds that
//     growth: at GOGC=400 the heap of a first sync of 8,000 sessions
//     grew to 34 MiB of objects (goal 49) while it listed, on a live
//     heap of 10 (the plugins' modules decoded, the walk), and its RSS
//     reached 69-72 MB there, the peak of the whole sync once the
//     ledger was packed and the outcomes reported were dropped (52 MB
//     there with the limit). A re-sync of a small home stays under it.
//     The limit follows the live heap after every collection (watch),
//     so a listing whose live heap grows (a large ledger loaded) never
//     has the collector run without end for it.
//   - archiving (archiving, when a plugin is first looked up to archive
//     a session: Plugins.using): GOGC is given back, since archiving's
//     garbage is the plugins' output and buffers; and, once per round
//     armed (arm) with the archiver's workers, a soft memory limit is set
//     from the live heap after a collection (so that what the listing
//     left as garbage is not counted), limitHeadroom, and limitPerWorker
//     a worker. follow raises that limit as sessions are archived, so it
//     stays limitHeadroom above the least live heap of the last
//     followWindow outcomes, which grows with every session the sync
//     keeps (its ledger's record, its run id), and the collector
//     never runs without end for a limit the heap outgrew; it is never
//     lowered within a round. A limit the user set (GOMEMLIMIT:
//     keepLimit) is left as it is.
//   - indexing (indexing, once the archiver is closed and dropped, in a
//     round that wrote a run: one that wrote none indexes nothing, and
//     forces no collection to measure the heap for it): the limit is set
//     again from the live heap for one worker, less the reserve, and
//     follows it, so that the live indexer's catch-up and the index
//     build do not run under a limit the ledger raised.
//
// settle, at the end of a round (and of the sync, however it ends), puts
// back both settings as they were and disarms the limit. The process's
// own limit (cmd/twasm, 64 MiB) is sized for a recording: it leaves a
// first sync's heap twice its live size at the end of archiving, where
// its peak RSS was, and a lower one for the whole process would have the
// collector run without end on a machine of many cores or a home of many
// sessions. Every method is safe for concurrent use and may be called
// again: what is already done is not done twice.
type collector struct {
	mu        sync.Mutex
	keepLimit bool // GOMEMLIMIT set: never change the limit

	gc cmdutil.GCRaise // GOGC, raised by listing

	workers  int   // the limit armed for a round when > 0
	reserved int64 // memory outside the Go heap the limit leaves room for
	limitSet bool  // a limit set, by listing or archiving
	archived bool  // the limit set by archiving (once per arm)
	oldLimit int64 // the limit before the round
	limit    int64 // the limit set
	watching int   // the round whose collections watch follows (gen)
	gen      int   // rounds begun

	recent  [followWindow]uint64 // the live heaps of the last collections followed (a ring)
	nrecent int                  // how many since the limit was set
	cycle   uint64               // the collection recent holds last
}

// listing raises GOGC for a round's listing and sets a limit that
// follows its live heap.
func (c *collector) listing() {
	c.gc.Raise(listingGCPercent)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keepLimit || c.limitSet {
		return
	}
	c.limit = limitFor(liveHeap(), 1)
	c.oldLimit = debug.SetMemoryLimit(c.limit)
	c.limitSet = true
	c.gen++
	c.watching = c.gen
	c.watch(c.gen)
}

// watch calls c.afterGC after the next collection (a cleanup of an
// object nothing holds).
func (c *collector) watch(gen int) {
	runtime.AddCleanup(new([32]byte), func(gen int) { c.afterGC(gen) }, gen)
}

// afterGC follows the live heap after a collection of round gen, and
// watches the next one, for as long as that round's limit is set.
func (c *collector) afterGC(gen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.limitSet || c.watching != gen {
		return
	}
	c.followLocked()
	c.watch(gen)
}

// arm makes the round's archiving set a limit for workers workers.
func (c *collector) arm(workers int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.workers = workers
}

// reserve lowers the round's limit by n bytes that something beside the
// archiving uses outside the Go heap (the live indexer's SQLite memory),
// so that the process's peak stays where it was; settle forgets it.
func (c *collector) reserve(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reserved = n
}

// archiving gives GOGC back and sets the round's limit, once per arm.
func (c *collector) archiving() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gc.Lower()
	if c.keepLimit || c.workers <= 0 || c.archived {
		return
	}
	runtime.GC()
	c.limit = limitFor(liveHeap(), c.workers) - c.reserved
	if old := debug.SetMemoryLimit(c.limit); !c.limitSet {
		c.oldLimit = old
	}
	c.limitSet, c.archived = true, true
	c.nrecent = 0
}

// indexing sets the limit again, lower, once the round's archiver (its
// ledger) is dropped and the live indexer's catch-up and the index
// build are all that is left: from the live heap after a collection,
// for one worker, less what is reserved outside the heap, and it
// follows the live heap after every collection from then on, as the
// listing's. The archiving's limit, followed up to limitHeadroom above
// a live heap that held the ledger and the sessions listed, let the
// index build's heap grow to it: on a first sync of 20,000 sessions the
// peak RSS of the whole sync was set there.
func (c *collector) indexing() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keepLimit || !c.limitSet {
		return
	}
	runtime.GC()
	c.limit = limitFor(liveHeap(), 1) - c.reserved
	debug.SetMemoryLimit(c.limit)
	c.nrecent = 0
	c.gen++
	c.watching = c.gen
	c.watch(c.gen)
}

// follow raises the limit, once set, to limitHeadroom above the least
// live heap of the last followWindow collections, when that is higher.
// Sync calls it as each session's outcome other than unchanged is
// reported; the listing's and the index's watch after each collection.
func (c *collector) follow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.followLocked()
}

func (c *collector) followLocked() {
	if !c.limitSet {
		return
	}
	live, cycle := liveHeapCycle()
	if c.nrecent > 0 && cycle == c.cycle {
		return // that collection's live heap is in recent already
	}
	c.recent[c.nrecent%followWindow], c.cycle = live, cycle
	if c.nrecent++; c.nrecent < followWindow {
		return
	}
	if l := followed(c.limit, slices.Min(c.recent[:])); l != c.limit {
		c.limit = l
		debug.SetMemoryLimit(l)
	}
}

// settle puts back what listing and archiving changed, and disarms.
func (c *collector) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gc.Lower()
	if c.limitSet {
		debug.SetMemoryLimit(c.oldLimit)
		c.limitSet, c.archived = false, false
	}
	c.nrecent = 0
	c.workers, c.reserved = 0, 0
}

// followed is the limit, after limit, for a live heap of live bytes.
func followed(limit int64, live uint64) int64 {
	return max(limit, int64(live)+limitHeadroom)
}

// limitFor is the limit for a live heap of live bytes and workers
// workers.
func limitFor(live uint64, workers int) int64 {
	return int64(live) + limitHeadroom + int64(max(workers, 1))*limitPerWorker
}

// liveHeapCycle is the heap the last collection found live, and that
// collection's number.
func liveHeapCycle() (live, cycle uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		cycle = s[1].Value.Uint64()
	}
	return live, cycle
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 { return cmdutil.LiveHeap() }
