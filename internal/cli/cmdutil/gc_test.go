package cmdutil

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGCRaise: Raise sets GOGC to the percent asked, once; Lower gives
// the setting back; a setting already as high, or off, is left alone.
func TestGCRaise(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		name          string
		before, while int
	}{
		{"default", 100, 300},
		{"lower", 50, 300},
		{"as high", 300, 300},
		{"higher", 800, 800},
		{"off", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(tc.before)
			var g GCRaise
			g.Lower() // nothing raised: nothing to restore
			assert.Equal(t, tc.before, gcPercent())
			g.Raise(300)
			g.Raise(300) // once raised, raising again keeps the setting to restore
			assert.Equal(t, tc.while, gcPercent())
			g.Lower()
			assert.Equal(t, tc.before, gcPercent())
			g.Lower() // again: nothing to restore
			assert.Equal(t, tc.before, gcPercent())
		})
	}
}

// gcPercent reads the collector's setting.
func gcPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

// TestLimitLower: Lower sets the memory limit asked, once; Restore gives
// the limit back; a limit already as low, or one the user set (keep),
// is left alone.
func TestLimitLower(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const mib = 1 << 20
	for _, tc := range []struct {
		name          string
		before, while int64
		keep          bool
	}{
		{"higher", 64 * mib, 32 * mib, false},
		{"none", math.MaxInt64, 32 * mib, false},
		{"as low", 32 * mib, 32 * mib, false},
		{"lower", 16 * mib, 16 * mib, false},
		{"user's", 64 * mib, 64 * mib, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC() // no garbage of an earlier test: no collection forced by the limit, whose live heap the limit would follow
			debug.SetMemoryLimit(tc.before)
			var l LimitLower
			l.Restore() // nothing lowered: nothing to restore
			assert.Equal(t, tc.before, debug.SetMemoryLimit(-1))
			l.Lower(32*mib, tc.keep)
			l.Lower(32*mib, tc.keep) // once lowered, lowering again keeps the limit to restore
			assert.Equal(t, tc.while, debug.SetMemoryLimit(-1))
			l.Restore()
			assert.Equal(t, tc.before, debug.SetMemoryLimit(-1))
			l.Restore() // again: nothing to restore
			assert.Equal(t, tc.before, debug.SetMemoryLimit(-1))
		})
	}
}

// TestLimitLowerFollows: after a collection, a lowered limit is twice
// the live heap when that is above the limit asked, back to the limit
// asked when the live heap shrinks, and not touched once restored.
func TestLimitLowerFollows(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	runtime.GC()
	const floor = 48 << 20
	var l LimitLower
	l.Lower(floor, false)
	live := make([]byte, 32<<20)
	runtime.GC()
	l.afterGC(l.gen) // what the cleanup watch calls after a collection
	assert.GreaterOrEqual(t, debug.SetMemoryLimit(-1), int64(2*len(live)), "raised to twice the live heap")
	runtime.KeepAlive(live)

	live = nil
	runtime.GC()
	l.afterGC(l.gen)
	assert.Equal(t, int64(floor), debug.SetMemoryLimit(-1), "back to the limit asked")

	l.Restore()
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
	big := make([]byte, 64<<20)
	runtime.GC()
	l.afterGC(l.gen)
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "restored: no longer followed")
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()
}
