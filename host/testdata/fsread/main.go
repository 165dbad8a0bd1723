// Command fsread tries to read a file, which links WASI's path_open.
package main

import (
	"os"

	"github.com/twasm/twasm/host/testdata/rawkit"
)

func init() {
	rawkit.Feed = func(b []byte) uint32 {
		data, err := os.ReadFile("/etc/passwd")
		if err != nil {
			rawkit.Fail(err.Error())
			return 1
		}
		rawkit.Output(data)
		return 0
	}
}

func main() {}
