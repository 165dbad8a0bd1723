//go:build unix

package benchtest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used (user and system, all
// threads); 0 where it cannot be had.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
