//go:build !unix

package index

import "os"

// childMaxRSS is not measured here.
func childMaxRSS(*os.ProcessState) float64 { return 0 }
