//go:build !wasip1

package claude

import (
	"slices"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call, or looks up with usageKeys, is declared in keys.
func TestKeysCoverGets(t *testing.T) {
	sdktest.CheckKeys(t, keys)
	for _, k := range usageKeys.Names() {
		if !slices.Contains(keys.Names(), k) {
			t.Errorf("usage key %q is not declared in keys", k)
		}
	}
}

// TestKeyNumbers checks that the k* constants name keys in order.
func TestKeyNumbers(t *testing.T) {
	if len(keys.Names()) != nKeys {
		t.Fatalf("keys has %d names, nKeys is %d", len(keys.Names()), nKeys)
	}
	for k, name := range map[int]string{kType: "type", kErrors: "errors", kInputTokens: "input_tokens", kIsAsync: "isAsync"} {
		if keys.Names()[k] != name {
			t.Errorf("key %d is %q, want %q", k, keys.Names()[k], name)
		}
	}
}
