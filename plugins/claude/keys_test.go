//go:build !wasip1

package claude

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call, or looks up with usageKeys, is declared in keys.
func TestKeysCoverGets(t *testing.T) {
	sdktest.CheckKeys(t, keys)
	sdktest.CheckLookupKeys(t, keys, usageKeys)
}

// TestKeyNumbers checks that the k* constants name keys in order.
func TestKeyNumbers(t *testing.T) {
	sdktest.CheckKeyNumbers(t, keys, nKeys, map[int]string{kType: "type", kErrors: "errors", kInputTokens: "input_tokens", kIsAsync: "isAsync"})
}
