// Command abiv2 is a well-formed plugin that claims ABI version 2.0 from
// twasm_abi_version.
package main

import "github.com/twasm/twasm/host/testdata/rawkit"

func init() { rawkit.Version = 2 << 16 }

func main() {}
