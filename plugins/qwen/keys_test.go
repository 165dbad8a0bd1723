//go:build !wasip1

package qwen

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call is declared in keys.
func TestKeysCoverGets(t *testing.T) { plugintest.CheckKeysCoverGets(t, keys) }
