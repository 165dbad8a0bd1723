package archive

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/abi"
)

// TestPlaces: a store's places are the roots Discover can reach, on one
// OS or on every OS: a root after a default that applies where it does
// is never tried, so it is not listed.
func TestPlaces(t *testing.T) {
	envA := abi.Root{Env: "A_HOME", Path: "sessions"}
	mac := abi.Root{Path: "~/Library/A", OS: "darwin"}
	win := abi.Root{Path: "~/AppData/A", OS: "windows"}
	macEnv := abi.Root{Env: "A_MAC", OS: "darwin"}
	generic := abi.Root{Path: "~/.a"}
	envB := abi.Root{Env: "B_HOME"}
	roots := []abi.Root{envA, mac, macEnv, win, generic, envB}
	for _, tc := range []struct {
		goos                string
		defaults, overrides []abi.Root
	}{
		{"linux", []abi.Root{generic}, []abi.Root{envA}},
		{"darwin", []abi.Root{mac}, []abi.Root{envA}},
		{"windows", []abi.Root{win}, []abi.Root{envA}},
		{"", []abi.Root{mac, win, generic}, []abi.Root{envA}},
	} {
		t.Run("os="+tc.goos, func(t *testing.T) {
			d := Declared{Store: abi.Store{Roots: roots}}
			defaults, overrides := d.Places(tc.goos)
			assert.Equal(t, tc.defaults, defaults)
			assert.Equal(t, tc.overrides, overrides)
		})
	}
	// On one OS the places agree with what Discover resolves: with no
	// variable set the default, with A_HOME set the variable.
	d := Declared{Store: abi.Store{Name: "a", Roots: roots, Pattern: "*.jsonl"}, Provider: "a"}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.a"},
		{map[string]string{"HOME": "/h", "A_HOME": "/x"}, "/x/sessions"},
		{map[string]string{"HOME": "/h", "B_HOME": "/y"}, "/h/.a"},
	} {
		locs := Discover(func(k string) string { return tc.env[k] }, "linux", []Declared{d}, nil)
		if assert.Len(t, locs, 1) {
			assert.Equal(t, tc.want, locs[0].Dir)
		}
	}
}
