package main

import (
	"os"
	"syscall"
)

// maxRSS is the child's peak resident set size in bytes (Linux reports
// kilobytes).
func maxRSS(st *os.ProcessState) float64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024
	}
	return 0
}
