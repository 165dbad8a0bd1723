// Command nohostfn imports a host function this host does not provide.
package main

import "github.com/twasm/twasm/host/testdata/rawkit"

//go:wasmimport twasm_v1 nonexistent
func nonexistent() uint32

func init() {
	rawkit.Feed = func([]byte) uint32 { return nonexistent() }
}

func main() {}
