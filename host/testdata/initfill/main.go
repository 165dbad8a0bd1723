// Command initfill never finishes initialising, and each pass of its loop
// is one memory.fill of 64 MiB: a package initializer, which _initialize
// runs, clears a large buffer forever.
package main

import _ "github.com/twasm/twasm/host/testdata/rawkit"

var (
	big  = make([]byte, 64<<20)
	sink int
)

func init() {
	for {
		clear(big)
		sink++
	}
}

func main() {}
