// Command initloop never finishes initialising: a package initializer,
// which _initialize runs, spins forever.
package main

import _ "github.com/twasm/twasm/host/testdata/rawkit"

var sink int

func init() {
	for {
		sink++
	}
}

func main() {}
