//go:build !unix

package index

import (
	"os"
	"time"
)

// childMaxRSS is not measured here.
func childMaxRSS(*os.ProcessState) float64 { return 0 }

// selfCPU is not measured here.
func selfCPU() time.Duration { return 0 }
