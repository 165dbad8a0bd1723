//go:build !unix

package benchtest

import "time"

// CPUTime is unknown here: 0 (a benchmark then reports no CPU figure).
func CPUTime() time.Duration { return 0 }
