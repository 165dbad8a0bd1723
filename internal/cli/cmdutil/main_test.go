package cmdutil

import (
	"testing"

	"go.uber.org/goleak"
)

// StdinInput reads a terminal in a goroutine: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
