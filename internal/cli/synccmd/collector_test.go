package synccmd

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
)

// TestCollectorListing: a sync lists at GOGC=listingGCPercent and gives
// the collector back its setting before a plugin is looked up. How a
// setting already as high, or off, is kept is cmdutil.GCRaise's
// (TestGCRaise); this checks the collector's two moments.
func TestCollectorListing(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var gc collector
	gc.listing()
	assert.Equal(t, listingGCPercent, gcPercent(), "listing")
	// A provider already resolved: the lookup needs no host.
	p := &Plugins{using: gc.archiving, cache: map[string]capture.Plugin{"claude": stubPlugin{}}}
	_, err := p.Func()(context.Background(), "claude")
	assert.NoError(t, err)
	assert.Equal(t, 100, gcPercent(), "archiving")
	gc.settle()
	assert.Equal(t, 100, gcPercent(), "settled")
}

// stubPlugin stands for a resolved plugin (its methods are not called).
type stubPlugin struct{ capture.Plugin }

// gcPercent reads the collector's setting.
func gcPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

func TestLimitFor(t *testing.T) {
	for _, tc := range []struct {
		live    uint64
		workers int
		want    int64
	}{
		{0, 1, 20 << 20},
		{1 << 20, 2, 27 << 20},
		{1 << 20, 8, 63 << 20},
		{40 << 20, 2, 66 << 20},
		{1 << 20, 0, 21 << 20}, // no workers counts as one
	} {
		assert.Equal(t, tc.want, limitFor(tc.live, tc.workers), "live %d workers %d", tc.live, tc.workers)
	}
}

func TestFollowed(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		live  uint64
		want  int64
	}{
		{27 << 20, 1 << 20, 27 << 20},  // room enough
		{27 << 20, 13 << 20, 27 << 20}, // exactly limitHeadroom left
		{27 << 20, 14 << 20, 28 << 20}, // raised
		{27 << 20, 40 << 20, 54 << 20}, // a heap that outgrew the limit
	} {
		assert.Equal(t, tc.want, followed(tc.limit, tc.live), "limit %d live %d", tc.limit, tc.live)
	}
}

// memoryLimit reads the soft memory limit.
func memoryLimit() int64 { return debug.SetMemoryLimit(-1) }

// TestCollectorLimit: the listing sets a limit of limitFor(live heap, 1);
// the archiving's is set when the first plugin is looked up in an armed
// round (as GOGC is given back), from the live heap and the workers,
// once; settle puts back the limit before; an unarmed round keeps the
// listing's, and a GOMEMLIMIT the user set changes nothing.
func TestCollectorLimit(t *testing.T) {
	const before = 64 << 20
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(before))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		name    string
		keep    bool
		workers int
		set     bool
	}{
		{"armed, 2 workers", false, 2, true},
		{"armed, 16 workers", false, 16, true},
		{"not armed", false, 0, false},
		{"GOMEMLIMIT set", true, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc := &collector{keepLimit: tc.keep}
			defer gc.settle()
			gc.listing()
			gc.arm(tc.workers)
			p := &Plugins{using: gc.archiving, cache: map[string]capture.Plugin{"claude": stubPlugin{}}}
			listed := memoryLimit()
			if tc.keep {
				assert.Equal(t, int64(before), listed, "listing")
			} else {
				assert.GreaterOrEqual(t, listed, limitFor(0, 1), "listing")
				assert.Less(t, listed, limitFor(0, 1)+(1<<30), "listing")
			}
			_, err := p.Func()(context.Background(), "claude")
			require.NoError(t, err)
			assert.Equal(t, 100, gcPercent())
			got := memoryLimit()
			if !tc.set {
				// The listing's limit (followed, never lowered), or none.
				assert.GreaterOrEqual(t, got, listed)
				if tc.keep {
					assert.Equal(t, int64(before), got)
				}
				return
			}
			live := got - limitHeadroom - int64(tc.workers)*limitPerWorker
			assert.Greater(t, live, int64(0), "the live heap counted")
			assert.Less(t, live, int64(1<<30))
			_, err = p.Func()(context.Background(), "claude") // set once a round
			require.NoError(t, err)
			assert.Equal(t, got, memoryLimit())
			if tc.workers == 2 {
				// A live heap near the limit raises it; it is never lowered.
				keepAlive := make([]byte, got-limitHeadroom+(8<<20))
				followCollections(gc)
				raised := memoryLimit()
				assert.GreaterOrEqual(t, raised, int64(len(keepAlive))+limitHeadroom)
				runtime.KeepAlive(keepAlive)
				followCollections(gc)
				// Never lowered once the heap is freed. The first
				// collection after the release may still count the
				// buffer and a few bytes more (CI saw +112 B), so the
				// limit may creep up by that much, not by a worker.
				after := memoryLimit()
				assert.GreaterOrEqual(t, after, raised, "lowered after the heap was freed")
				assert.Less(t, after, raised+limitPerWorker, "raised again after the heap was freed")
			}
			gc.settle()
			assert.Equal(t, int64(before), memoryLimit())
			gc.settle() // again: nothing to restore
			assert.Equal(t, int64(before), memoryLimit())
			_, err = p.Func()(context.Background(), "claude") // disarmed
			require.NoError(t, err)
			assert.Equal(t, int64(before), memoryLimit())
		})
	}
}

// TestCollectorListingFollows: the limit a listing sets follows its
// live heap after each collection, with no outcome reported (a ledger
// loaded as large as the limit raises it rather than have the collector
// run without end), is never lowered, and settle puts back the limit
// before; a round settled stops following.
func TestCollectorListingFollows(t *testing.T) {
	const before = 64 << 20
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(before))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	gc := &collector{}
	gc.listing()
	set := memoryLimit()
	require.Less(t, set, int64(before))
	keepAlive := make([]byte, set)
	want := int64(len(keepAlive)) + limitHeadroom
	require.Eventually(t, func() bool {
		runtime.GC() // the cleanup after it follows the live heap
		return memoryLimit() >= want
	}, time.Minute, time.Millisecond, "the limit follows the live heap")
	runtime.KeepAlive(keepAlive)
	raised := memoryLimit()
	runtime.GC()
	runtime.GC()
	assert.GreaterOrEqual(t, memoryLimit(), raised, "never lowered")
	gc.settle()
	assert.Equal(t, int64(before), memoryLimit())
	big := make([]byte, 2*set)
	runtime.GC()
	runtime.GC()
	runtime.KeepAlive(big)
	assert.Equal(t, int64(before), memoryLimit(), "settled: not followed")
}

// TestCollectorReserve: a round with memory reserved outside the Go heap
// (the live indexer's) sets a limit that much lower than a round without,
// and settle forgets the reserve.
func TestCollectorReserve(t *testing.T) {
	const before = 64 << 20
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(before))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	limit := func(reserve int64) int64 {
		gc := archivingCollector(t, reserve)
		got := memoryLimit()
		gc.settle()
		assert.Equal(t, int64(before), memoryLimit())
		assert.Zero(t, gc.reserved, "settled")
		return got
	}
	without, with := limit(0), limit(liveIndexReserve)
	assert.InDelta(t, without-liveIndexReserve, with, 1<<20, "limits %d and %d", without, with)
}

// TestCollectorIndexing: once the archiver is dropped, indexing lowers
// the archiving's limit (raised by a live heap that is garbage now) to
// limitFor(live heap, 1) less the reserve, follows the live heap after
// each collection from there, and settle puts back the limit before.
func TestCollectorIndexing(t *testing.T) {
	const before = 64 << 20
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(before))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	gc := archivingCollector(t, 1<<20)
	ledger := make([]byte, 32<<20) // the archiving's live heap
	followCollections(gc)
	archiving := memoryLimit()
	require.GreaterOrEqual(t, archiving, int64(len(ledger))+limitHeadroom)
	runtime.KeepAlive(ledger)
	ledger = nil
	gc.indexing()
	lowered := memoryLimit()
	assert.Less(t, lowered, archiving-(16<<20), "lowered once the archiving's heap is garbage")
	assert.GreaterOrEqual(t, lowered, limitFor(0, 1)-(1<<20), "live heap, one worker, less the reserve")
	keepAlive := make([]byte, lowered)
	require.Eventually(t, func() bool {
		runtime.GC() // the cleanup after it follows the live heap
		return memoryLimit() >= int64(len(keepAlive))+limitHeadroom
	}, time.Minute, time.Millisecond, "the limit follows the live heap")
	runtime.KeepAlive(keepAlive)
	gc.settle()
	assert.Equal(t, int64(before), memoryLimit())
}

// TestCollectorFollowWindow: while archiving, a live heap that swells
// for fewer than followWindow collections (a session in flight) does
// not raise the limit, however often an outcome is reported meanwhile;
// one that stays does.
func TestCollectorFollowWindow(t *testing.T) {
	const before = 64 << 20
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(before))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	gc := archivingCollector(t, 0)
	defer gc.settle()
	set := memoryLimit()
	swell := make([]byte, set) // live heap above the limit
	runtime.GC()
	for range 2 * followWindow {
		gc.follow() // one collection's live heap, however many outcomes
	}
	runtime.KeepAlive(swell)
	swell = nil
	for range followWindow - 1 { // the window full, the swell in it
		runtime.GC()
		gc.follow()
	}
	assert.Equal(t, set, memoryLimit(), "a moment's live heap: not followed")
	stays := make([]byte, set)
	require.Eventually(t, func() bool {
		runtime.GC() // the listing's watch follows too
		gc.follow()
		return memoryLimit() >= int64(len(stays))+limitHeadroom
	}, time.Minute, time.Millisecond, "a live heap that stays: followed")
	runtime.KeepAlive(stays)
}

// archivingCollector is a collector whose round listed, was armed for
// 2 workers with reserve bytes reserved, and set the archiving's limit
// (a plugin looked up).
func archivingCollector(t *testing.T, reserve int64) *collector {
	t.Helper()
	gc := &collector{}
	if reserve > 0 {
		gc.reserve(reserve)
	}
	gc.listing()
	gc.arm(2)
	p := &Plugins{using: gc.archiving, cache: map[string]capture.Plugin{"claude": stubPlugin{}}}
	_, err := p.Func()(context.Background(), "claude")
	require.NoError(t, err)
	return gc
}

// followCollections runs followWindow collections, gc following each:
// what a live heap that stays takes to be followed.
func followCollections(gc *collector) {
	for range followWindow {
		runtime.GC()
		gc.follow()
	}
}
