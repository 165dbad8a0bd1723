package cmdutil

import (
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
