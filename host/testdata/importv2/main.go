// Command importv2 imports its output function from the host module of
// ABI major version 2, as a plugin built for a newer host would.
package main

import "github.com/twasm/twasm/host/testdata/rawkit"

//go:wasmimport twasm_v2 output
func output(ptr, n uint32)

func init() {
	rawkit.Feed = func(b []byte) uint32 { output(rawkit.Ptr(b), uint32(len(b))); return 0 }
}

func main() {}
