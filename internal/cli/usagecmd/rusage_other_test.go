//go:build !unix

package usagecmd

import "time"

func cpuTime() time.Duration { return 0 }
