package pluginbench

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report
// throughput per CPU second besides wall-clock MB/s: on a shared machine
// other processes stretch wall time far more than they stretch the CPU
// time this process spends.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports bytes per CPU second for the work since start.
func reportCPU(b *testing.B, start time.Duration, bytes int64) {
	used := cpuTime() - start
	if used > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/used.Seconds()/1e6, "cpuMB/s")
	}
}
