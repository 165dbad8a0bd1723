// Command abiv13 is a plugin as one built for ABI 1.3 looks to the host:
// it reports version 1.3 and a manifest of the 1.3 shape (no stores, no
// source facts), and normalizes like the echo plugin, every raw line
// becoming one assistant message with the line as its text (rawkit.Echo:
// the SDK would report its own version). A 1.4 host must load it and run
// it as before.
package main

import "github.com/twasm/twasm/host/testdata/rawkit"

func init() {
	rawkit.Version = 1<<16 | 3
	rawkit.Manifest = []byte(`{"name":"old","version":"0.0.1","providers":["old"],"formats":["jsonl"],"sdk":"twasm-go-sdk/1.0"}`)
	rawkit.Feed = rawkit.Echo
}

func main() {}
