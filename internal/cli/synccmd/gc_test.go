package synccmd

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/capture"
)

// TestListingGC: a sync lists at GOGC=listingGCPercent and gives the
// collector back its setting before a plugin is looked up; a setting
// already as high, or off, is left as it is.
func TestListingGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		name          string
		before, while int
	}{
		{"default", 100, listingGCPercent},
		{"lower", 50, listingGCPercent},
		{"higher", 800, 800},
		{"off", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(tc.before)
			var gc listingGC
			gc.raise()
			gc.raise() // once raised, raising again keeps the setting to restore
			assert.Equal(t, tc.while, gcPercent())
			// A provider already resolved: the lookup needs no host.
			p := &Plugins{using: gc.lower, cache: map[string]capture.Plugin{"claude": stubPlugin{}}}
			_, err := p.Func()(context.Background(), "claude")
			assert.NoError(t, err)
			assert.Equal(t, tc.before, gcPercent())
			gc.lower() // again: nothing to restore
			assert.Equal(t, tc.before, gcPercent())
		})
	}
}

// stubPlugin stands for a resolved plugin (its methods are not called).
type stubPlugin struct{ capture.Plugin }

// gcPercent reads the collector's setting.
func gcPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}
