//go:build !linux

package main

import "os"

// maxRSS is unknown here (the rusage unit differs between systems).
func maxRSS(*os.ProcessState) float64 { return 0 }
