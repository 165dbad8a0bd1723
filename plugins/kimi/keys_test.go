//go:build !wasip1

package kimi

import (
	"slices"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call is declared in keys.
func TestKeysCoverGets(t *testing.T) { sdktest.CheckKeys(t, keys) }

// TestLookupKeysDeclared checks that the members Line finds by Lookup are
// declared in keys, so that the host marks them.
func TestLookupKeysDeclared(t *testing.T) {
	for _, name := range lineKeys.Names() {
		if !slices.Contains(keys.Names(), name) {
			t.Errorf("%q is looked up but not declared in keys", name)
		}
	}
}
