package myagent

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeys: every key the normalizer reads is declared in keys.
func TestKeys(t *testing.T) { sdktest.CheckKeys(t, keys) }
