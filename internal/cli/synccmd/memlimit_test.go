package synccmd

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
)

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

// TestWorkLimit: the limit is set when the first plugin is looked up in
// an armed round (after listingGC is lowered), from the live heap and
// the workers, once; restore puts back the limit before, and an unarmed
// round or a GOMEMLIMIT the user set changes nothing.
func TestWorkLimit(t *testing.T) {
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
			var gc listingGC
			gc.raise()
			mem := &workLimit{keep: tc.keep}
			mem.arm(tc.workers)
			p := &Plugins{using: archiving(&gc, mem), cache: map[string]capture.Plugin{"claude": stubPlugin{}}}
			assert.Equal(t, int64(before), memoryLimit(), "listing: not yet")
			_, err := p.Func()(context.Background(), "claude")
			require.NoError(t, err)
			assert.Equal(t, 100, gcPercent())
			got := memoryLimit()
			if !tc.set {
				assert.Equal(t, int64(before), got)
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
				runtime.GC()
				mem.follow()
				raised := memoryLimit()
				assert.GreaterOrEqual(t, raised, int64(len(keepAlive))+limitHeadroom)
				runtime.KeepAlive(keepAlive)
				runtime.GC()
				mem.follow()
				assert.Equal(t, raised, memoryLimit())
			}
			mem.restore()
			assert.Equal(t, int64(before), memoryLimit())
			mem.restore() // again: nothing to restore
			assert.Equal(t, int64(before), memoryLimit())
			_, err = p.Func()(context.Background(), "claude") // disarmed
			require.NoError(t, err)
			assert.Equal(t, int64(before), memoryLimit())
		})
	}
}
