// Command initfill never finishes initialising, and each pass of its loop
// is one memory.fill of 64 MiB: a package initializer, which _initialize
// runs, clears a large buffer forever. Right before the loop it logs
// IntoFill at warning level through the log import (the host writes it
// at once), so a test knows the initializer is in its loop.
package main

import "github.com/twasm/twasm/host/testdata/rawkit"

// IntoFill is the message logged right before the loop.
const IntoFill = "initfill: into the fill loop"

var (
	big  = make([]byte, 64<<20)
	sink int
)

func init() {
	rawkit.Log(4, IntoFill)
	for {
		clear(big)
		sink++
	}
}

func main() {}
