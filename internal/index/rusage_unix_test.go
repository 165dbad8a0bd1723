//go:build unix

package index

import (
	"os"
	"runtime"
	"syscall"
)

// childMaxRSS is a finished child's peak resident set size in bytes.
func childMaxRSS(st *os.ProcessState) float64 {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) // bytes there
	}
	return float64(ru.Maxrss) * 1024 // KiB
}
