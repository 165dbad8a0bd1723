//go:build !wasip1

package gemini

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call is declared in keys.
func TestKeysCoverGets(t *testing.T) { sdktest.CheckKeys(t, keys) }

// TestLookupKeysDeclared checks that the members document finds by
// Lookup are declared in keys, so that the host marks them.
func TestLookupKeysDeclared(t *testing.T) { sdktest.CheckLookupKeys(t, keys, docKeys) }
